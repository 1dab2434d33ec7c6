package loop

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/dshkit/dsh/generated/dsh"
	"github.com/dshkit/dsh/runtime/llm"
	"github.com/dshkit/dsh/runtime/session"
	"github.com/dshkit/dsh/runtime/tools"
)

// BenchmarkResume measures resuming a JSONL log of 10k, 100k and 1M events (turns of the
// BenchmarkTurnAt kind, about 20 events each): OpenFile, Open, Resume and the first turn
// after it. One op is a whole resume; resume-ms and first-turn-ms split it, resume-cpu-ms
// is the CPU time the process spent resuming (all threads, the collector's included),
// which a loaded machine does not inflate as it does wall time. The log is
// generated before the timer starts (writeLongLog). Run one size at a time under /usr/bin/time -v for its peak RSS.
func BenchmarkResume(b *testing.B) {
	for _, n := range []int{10_000, 100_000, 1_000_000} {
		b.Run(fmt.Sprintf("events=%s", shortCount(n)), func(b *testing.B) {
			path := filepath.Join(b.TempDir(), "log.jsonl")
			if err := writeLongLog(b, path, n); err != nil {
				b.Fatal(err)
			}
			info, err := os.Stat(path)
			if err != nil {
				b.Fatal(err)
			}
			ctx := context.Background()
			var resume, first, resumeCPU, firstCPU time.Duration
			b.ResetTimer()
			for range b.N {
				t0, c0 := time.Now(), cpuTime()
				f, _, err := session.OpenFile(path)
				if err != nil {
					b.Fatal(err)
				}
				l, err := session.Open(ctx, f, session.WithSyncPolicy(session.SyncNever))
				if err != nil {
					b.Fatal(err)
				}
				cfg := turnConfig(b, l, llm.NewScripted(calls("c1:echo", "c2:echo"), text("done")))
				a, err := Resume(ctx, cfg)
				if err != nil {
					b.Fatal(err)
				}
				t1, c1 := time.Now(), cpuTime()
				resumeCPU += c1 - c0
				if err := a.Followup(ctx, dsh.UserMessage{Content: []dsh.ContentBlock{dsh.TextBlock{Text: "go"}}}); err != nil {
					b.Fatal(err)
				}
				if err := a.Wait(ctx); err != nil {
					b.Fatal(err)
				}
				b.StopTimer()
				resume += t1.Sub(t0)
				first += time.Since(t1)
				firstCPU += cpuTime() - c1
				_ = a.Close()
				_ = l.Close()
				// Drop the events the first turn appended, so every op resumes the same log.
				if err := truncateLines(path, n); err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
			}
			b.ReportMetric(float64(info.Size())/1e6, "MB")
			b.ReportMetric(float64(resume.Milliseconds())/float64(b.N), "resume-ms")
			b.ReportMetric(float64(resumeCPU.Milliseconds())/float64(b.N), "resume-cpu-ms")
			b.ReportMetric(float64(first.Microseconds())/1e3/float64(b.N), "first-turn-ms")
			b.ReportMetric(float64(firstCPU.Microseconds())/1e3/float64(b.N), "first-turn-cpu-ms")
		})
	}
}

// shortCount renders 10000 as 10k and 1000000 as 1M.
func shortCount(n int) string {
	switch {
	case n%1_000_000 == 0:
		return strconv.Itoa(n/1_000_000) + "M"
	case n%1000 == 0:
		return strconv.Itoa(n/1000) + "k"
	}
	return strconv.Itoa(n)
}

// turnConfig returns the config of the benchmark agent (one echo tool) over l.
func turnConfig(tb testing.TB, l *session.Log, model llm.Model) Config {
	reg := dsh.NewRegistry(dsh.WithLogger(quiet))
	toolReg := tools.NewRegistry()
	if _, err := toolReg.Register(okTool("echo", true)); err != nil {
		tb.Fatal(err)
	}
	return Config{ID: "bench", Registry: reg, Tools: tools.New(toolReg, reg, tools.WithLogger(quiet)),
		Model: model, Log: l, LLM: dsh.LLMCallConfig{Provider: "test", Model: "m"}, Logger: quiet}
}

// writeLongLog writes a log of n events to path (it may end inside a turn, which Resume
// closes as interrupted). It runs a real agent for three turns of two tool calls and a text on a memory store, then
// repeats the events of the second turn with the turn number and the seqs shifted, so
// that the log is what an agent would have written, without running n/20 turns.
func writeLongLog(tb testing.TB, path string, n int) error {
	ctx := context.Background()
	mem := session.NewMemory()
	l, err := session.Open(ctx, mem)
	if err != nil {
		return err
	}
	var script []llm.ScriptedResponse
	for range 3 {
		script = append(script, calls("c1:echo", "c2:echo"), text("done"))
	}
	a, err := New(ctx, turnConfig(tb, l, llm.NewScripted(script...)))
	if err != nil {
		return err
	}
	for range 3 {
		followup(tb, a, "", "go")
		wait(tb, a)
	}
	_ = a.Close()
	var evs []session.Event
	for ev, err := range l.Events() {
		if err != nil {
			return err
		}
		evs = append(evs, ev)
	}
	_ = l.Close()
	// The second turn: the events after the first turn/end (the follow-up's splice into
	// the inbox) to its turn/end.
	start, end := -1, -1
	for i, ev := range evs {
		if ev.Type == dsh.TurnEndType && bytes.Contains(ev.Data, []byte(`"turn":1`)) {
			start = i + 1
		}
		if ev.Type == dsh.TurnEndType && bytes.Contains(ev.Data, []byte(`"turn":2`)) {
			end = i + 1
		}
	}
	if start < 0 || end < 0 {
		return fmt.Errorf("no second turn in %d events", len(evs))
	}
	out, err := os.Create(path)
	if err != nil {
		return err
	}
	w := bufio.NewWriterSize(out, 1<<20)
	write := func(ev session.Event) error {
		line, err := ev.MarshalJSON()
		if err != nil {
			return err
		}
		w.Write(line)
		return w.WriteByte('\n')
	}
	seq := int64(0)
	for _, ev := range evs[:start] {
		if err := write(ev); err != nil {
			return err
		}
		seq++
	}
	for turn := 2; seq < int64(n); turn++ {
		shift := seq - int64(start)
		for _, ev := range evs[start:end] {
			if seq == int64(n) {
				break
			}
			ev.Seq = seq
			ev.Data = bytes.ReplaceAll(ev.Data, []byte(`"turn":2`), []byte(`"turn":`+strconv.Itoa(turn)))
			if len(ev.SourceEventSeqs) > 0 {
				srcs := make([]int64, len(ev.SourceEventSeqs))
				for i, s := range ev.SourceEventSeqs {
					srcs[i] = s + shift
				}
				ev.SourceEventSeqs = srcs
			}
			if err := write(ev); err != nil {
				return err
			}
			seq++
		}
	}
	if err := w.Flush(); err != nil {
		return err
	}
	return out.Close()
}

// truncateLines cuts the file at path after its first n lines.
func truncateLines(path string, n int) error {
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return err
	}
	defer f.Close()
	r := bufio.NewReaderSize(f, 1<<20)
	var off int64
	for range n {
		line, err := r.ReadSlice('\n')
		for err == bufio.ErrBufferFull {
			off += int64(len(line))
			line, err = r.ReadSlice('\n')
		}
		if err != nil {
			return err
		}
		off += int64(len(line))
	}
	return f.Truncate(off)
}
