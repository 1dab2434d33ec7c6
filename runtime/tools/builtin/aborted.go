package builtin

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/dshkit/dsh/generated/dsh"
	"github.com/dshkit/dsh/runtime/tools"
)

// withAborted makes the model's text of d's calls that a cancellation aborted the row's
// Aborted words (a content a listener replaced stays as it is): {seconds} is how long the
// call's body had run when it was aborted, to a tenth of a second, 0.0 for a call aborted
// before its body started.
func withAborted(d tools.Definition, text string) tools.Definition {
	if text == "" {
		return d
	}
	var mu sync.Mutex
	started := map[dsh.Token]time.Time{}
	run, inner := d.Run, d.FinalizeContent
	d.Run = func(ctx context.Context, rc *tools.RunContext) (any, error) {
		tok := rc.Exec().Token
		mu.Lock()
		started[tok] = time.Now()
		mu.Unlock()
		return run(ctx, rc)
	}
	d.FinalizeContent = func(exec dsh.ToolExecution, result dsh.ToolExecutionResult) ([]dsh.ContentBlock, error) {
		mu.Lock()
		at, ran := started[exec.Token]
		delete(started, exec.Token)
		mu.Unlock()
		if f, ok := result.(dsh.ToolFailure); ok && isAbort(f) {
			secs := 0.0
			if ran {
				secs = time.Since(at).Seconds()
			}
			return []dsh.ContentBlock{dsh.TextBlock{Text: strings.ReplaceAll(text, "{seconds}", fmt.Sprintf("%.1f", secs))}}, nil
		}
		if inner != nil {
			return inner(exec, result)
		}
		return nil, nil
	}
	return d
}

// isAbort says whether f is the pipeline's cancellation failure, its content still the
// pipeline's own.
func isAbort(f dsh.ToolFailure) bool {
	if f.Error.Info == nil || (f.Error.Info.Code != tools.CodeAborted && f.Error.Info.Code != tools.CodeAbortedBeforeDispatch) || len(f.Content) != 1 {
		return false
	}
	t, ok := f.Content[0].(dsh.TextBlock)
	return ok && t.Text == "Error: "+f.Error.Message
}
