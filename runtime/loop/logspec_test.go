package loop

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/dshkit/dsh/generated/dsh"
	"github.com/dshkit/dsh/runtime/session"
)

// The session-log type sequences of the tests are written compactly: one short name per
// event type (see short), "name*n" for a run of n, session/created left out.

// short is the compact name of each event type.
var short = map[string]string{
	dsh.InboxSplicedType:           "spliced",
	dsh.TurnStartType:              "turn/start",
	dsh.TurnEndType:                "turn/end",
	dsh.StepStartType:              "step/start",
	dsh.StepEndType:                "step/end",
	dsh.UserMessageLoggedType:      "user",
	dsh.RequestHeaderLoggedType:    "header",
	dsh.RequestContextType:         "context",
	dsh.AssistantChunkLoggedType:   "chunk",
	dsh.AssistantMessageLoggedType: "assistant",
	dsh.ToolCallType:               "call",
	dsh.ToolResultLoggedType:       "result",
	dsh.ContinuationCappedType:     "capped",
	dsh.StartListenerOverrunType:   "overrun",
	dsh.DecisionRecordedType:       "decision",
}

// logOf expands a compact sequence into event types.
func logOf(spec string) []string {
	long := map[string]string{}
	for k, v := range short {
		long[v] = k
	}
	out := []string{}
	for _, tok := range strings.Fields(spec) {
		name, count, _ := strings.Cut(tok, "*")
		n := 1
		if count != "" {
			n, _ = strconv.Atoi(count)
		}
		typ, ok := long[name]
		if !ok {
			typ = name
		}
		for range n {
			out = append(out, typ)
		}
	}
	return out
}

// compact writes event types compactly.
func compact(types []string) string {
	var toks []string
	for i := 0; i < len(types); {
		j := i
		for j < len(types) && types[j] == types[i] {
			j++
		}
		name, ok := short[types[i]]
		if !ok {
			name = types[i]
		}
		if j-i > 1 {
			name += "*" + strconv.Itoa(j-i)
		}
		toks = append(toks, name)
		i = j
	}
	return strings.Join(toks, " ")
}

var recordMu sync.Mutex

// checkLog compares the whole type sequence of l (session/created left out) with spec,
// with go-cmp. With DSH_RECORD_LOGS=<file> it appends the actual sequence to the file.
func checkLog(t *testing.T, l *session.Log, spec string) {
	t.Helper()
	got := types(l)
	if path := os.Getenv("DSH_RECORD_LOGS"); path != "" {
		recordMu.Lock()
		defer recordMu.Unlock()
		f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
		if err == nil {
			fmt.Fprintf(f, "%s\t%s\n", t.Name(), compact(got))
			f.Close()
		}
		return
	}
	diff(t, "session log", logOf(spec), got)
}
