package breaking_test

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/dshkit/dsh/gen"
	"github.com/dshkit/dsh/gen/ir"
	"github.com/dshkit/dsh/spec"
)

var goldenLog = flag.String("golden-log", "", "write a golden session log of today's spec, one event of every session-event type, to this file")

// TestWriteGoldenLog writes the golden session log runtime/session replays in every
// future version (go test ./gen/breaking -run TestWriteGoldenLog -golden-log
// ../../runtime/session/testdata/golden/spec-X.Y.Z.jsonl). Every session-event type
// appears, with every field set and each union at each of its variants in turn. Without
// the flag it checks that such a log can be synthesized.
func TestWriteGoldenLog(t *testing.T) {
	tree, err := gen.LoadFS(spec.FS, "spec", gen.DefaultLayout)
	if err != nil {
		t.Fatal(err)
	}
	s := tree.Main().Spec
	var lines []string
	seq := 0
	add := func(typ string, data any) {
		raw, err := json.Marshal(data)
		if err != nil {
			t.Fatal(err)
		}
		at := time.Date(2026, 12, 4, 10, 0, 0, 0, time.UTC).Add(time.Duration(seq) * time.Millisecond)
		lines = append(lines, fmt.Sprintf(`{"type":%q,"seq":%d,"time":%q,"data":%s}`, typ, seq, at.Format(time.RFC3339Nano), raw))
		seq++
	}
	byType := map[string]*ir.SessionEvent{}
	for _, se := range s.SessionEvents {
		byType[se.Type] = se
	}
	created := synth(byType["session/created"].Data, 0).(map[string]any)
	created["specVersion"] = s.Version
	add("session/created", created)
	add("turn/start", map[string]any{"turn": 1})
	add("step/start", map[string]any{"turn": 1, "step": 1})
	for _, se := range s.SessionEvents {
		switch se.Type {
		case "session/created", "turn/start", "turn/end", "step/start", "step/end":
			continue
		case "agent/inbox/spliced":
			in := synth(se.Data, 0).(map[string]any)
			delete(in, "removedCount")
			delete(in, "outcome")
			in["start"] = 0
			add(se.Type, in)
			out := synth(se.Data, 1).(map[string]any)
			out["start"], out["removedCount"], out["inserted"], out["target"] = 0, 1, []any{}, in["target"]
			add(se.Type, out)
			continue
		}
		for i := 0; i < variants(se.Data); i++ {
			add(se.Type, synth(se.Data, i))
		}
	}
	add("step/end", map[string]any{"turn": 1, "step": 1})
	end := synth(byType["turn/end"].Data, 0).(map[string]any)
	end["turn"] = 1
	add("turn/end", end)
	if *goldenLog == "" {
		return
	}
	if err := os.WriteFile(*goldenLog, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
}

// variants is the largest number of variants of a union reachable from t: how many
// events it takes to show each variant once.
func variants(t *ir.Type) int {
	n := 1
	ir.Walk(t, func(t *ir.Type) {
		if len(t.Variants) > n {
			n = len(t.Variants)
		}
	})
	return n
}

// synth is a JSON value of type t with every field set; unions take variant i (mod their
// count), enums value i (mod theirs); of an exclusive group only the first field is set.
func synth(t *ir.Type, i int) any {
	return synthType(t, i, 0)
}

func synthType(t *ir.Type, i, depth int) any {
	switch t.Kind {
	case ir.Enum:
		return t.Values[i%len(t.Values)].Value
	case ir.Union:
		v := t.Variants[i%len(t.Variants)]
		m := synthType(v.Type, i, depth+1).(map[string]any)
		m[t.Discriminator] = v.Kind
		return m
	}
	m := map[string]any{}
	skip := map[string]bool{}
	for _, g := range t.Exclusive {
		for _, f := range g[1:] {
			skip[f] = true
		}
	}
	for _, f := range t.Fields {
		if f.Runtime || skip[f.JSONName] || (depth > 3 && !f.Required) {
			continue
		}
		m[f.JSONName] = synthRef(f.Type, f.JSONName, i, depth+1)
	}
	return m
}

func synthRef(r *ir.TypeRef, name string, i, depth int) any {
	switch r.Kind {
	case ir.String:
		return "golden-" + name
	case ir.Int, ir.Duration:
		return 1
	case ir.Float:
		return 1.5
	case ir.Bool:
		return true
	case ir.JSON:
		return map[string]any{"golden": name}
	case ir.List:
		if depth > 3 {
			return []any{}
		}
		return []any{synthRef(r.Elem, name, i, depth)}
	case ir.Map:
		if depth > 3 {
			return map[string]any{}
		}
		return map[string]any{"k": synthRef(r.Elem, name, i, depth)}
	case ir.Named:
		return synthType(r.Type, i, depth)
	}
	return nil
}
