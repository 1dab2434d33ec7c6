package builtin_test

import (
	"context"
	"encoding/json"
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/dshkit/dsh/runtime/tools"
	"github.com/dshkit/dsh/runtime/tools/builtin"
)

// TestCodexExecAborted: an exec_command call whose context is cancelled while its command
// runs reads as Codex 0.169.0 words it ("Wall time: N seconds\naborted by user", N how
// long the command had run, to a tenth of a second: codex/subagent-send-interrupt, the
// row's aborted); a call cancelled before its body starts reads 0.0 seconds; a call of a
// row without aborted (write_stdin) keeps dsh's words.
func TestCodexExecAborted(t *testing.T) {
	rt, _ := setup(t, builtin.Options{Style: builtin.StyleCodex})
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		time.Sleep(300 * time.Millisecond)
		cancel()
	}()
	began := time.Now()
	r := rt.Execute(ctx, tools.Input{CallID: "c1", Name: "exec_command", Arguments: json.RawMessage(`{"cmd":"sleep 5","yield_time_ms":10000}`)})
	took := time.Since(began)
	m := regexp.MustCompile(`^Wall time: (\d+\.\d) seconds\naborted by user$`).FindStringSubmatch(text(r))
	if m == nil || !r.IsError() || errCode(r) != tools.CodeAborted {
		t.Fatalf("aborted exec_command = %q (error %v, code %q), want Codex's words", text(r), r.IsError(), errCode(r))
	}
	if secs, _ := strconv.ParseFloat(m[1], 64); secs < 0.2 || secs > took.Seconds()+0.05 {
		t.Errorf("wall time %s seconds, want about 0.3 (the call took %v)", m[1], took)
	}

	done, stop := context.WithCancel(context.Background())
	stop()
	r = rt.Execute(done, tools.Input{CallID: "c2", Name: "exec_command", Arguments: json.RawMessage(`{"cmd":"true"}`)})
	if got := text(r); got != "Wall time: 0.0 seconds\naborted by user" || errCode(r) != tools.CodeAbortedBeforeDispatch {
		t.Errorf("exec_command cancelled before it started = %q (code %q)", got, errCode(r))
	}
	r = rt.Execute(done, tools.Input{CallID: "c3", Name: "write_stdin", Arguments: json.RawMessage(`{"session_id":1}`)})
	if got := text(r); got != "tool call aborted before dispatch" {
		t.Errorf("write_stdin cancelled = %q, want dsh's words", got)
	}
}
