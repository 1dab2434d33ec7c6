package cli

import (
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"github.com/dshkit/dsh/generated/dsh"
	"github.com/dshkit/dsh/runtime/session"
)

// progress shows a spinner with the current turn and step on a terminal, and nothing when
// the output is piped.
type progress struct {
	w    io.Writer
	tty  bool
	mu   sync.Mutex
	turn int
	step int
	done chan struct{}
	once sync.Once
}

func newProgress(w io.Writer) *progress {
	p := &progress{w: w, done: make(chan struct{})}
	if f, ok := w.(*os.File); ok {
		if st, err := f.Stat(); err == nil && st.Mode()&os.ModeCharDevice != 0 {
			p.tty = true
		}
	}
	if p.tty {
		go p.spin()
	}
	return p
}

var frames = []string{"⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"}

func (p *progress) spin() {
	t := time.NewTicker(120 * time.Millisecond)
	defer t.Stop()
	for i := 0; ; i++ {
		select {
		case <-p.done:
			p.clear()
			return
		case <-t.C:
			p.mu.Lock()
			fmt.Fprintf(p.w, "\r%s turn %d, step %d", frames[i%len(frames)], p.turn, p.step)
			p.mu.Unlock()
		}
	}
}

// clear erases the spinner line before other output.
func (p *progress) clear() {
	if !p.tty {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	fmt.Fprint(p.w, "\r\033[K")
}

func (p *progress) observe(e session.Event) {
	data, err := e.Decode()
	if err != nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	//dshvet:partial progress shows turns, steps, calls and results; the other events are not shown
	switch d := data.(type) {
	case dsh.TurnStart:
		p.turn, p.step = d.Turn, 0
	case dsh.StepStart:
		p.step = d.Step
	}
}

func (p *progress) stop() { p.once.Do(func() { close(p.done) }) }
