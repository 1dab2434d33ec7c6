package gen

import (
	"encoding/json"
	"fmt"

	"github.com/dshkit/dsh/gen/ir"
	"github.com/dshkit/dsh/gen/load"
)

// CheckScenarios cross-checks the conformance scenarios of conf against the canonical spec:
// every listener's extension point exists, every scripted decision is a variant of that
// point's decision union with its required fields, and every expected session event type
// exists. Each problem is reported at its scenario's position with a JSON path.
func CheckScenarios(conf, canon *ir.Spec, display string) error {
	events := map[string]*ir.Event{}
	for _, e := range canon.Events {
		events[e.Name] = e
	}
	types := map[string]bool{}
	for _, se := range canon.SessionEvents {
		types[se.Type] = true
	}
	e := &load.Error{Dir: display}
	for _, sc := range conf.Scenarios {
		bad := func(path, format string, args ...any) {
			e.Problems = append(e.Problems, load.Problem{Pos: sc.Pos,
				Msg: fmt.Sprintf("scenario %q: %s: %s", sc.ID, path, fmt.Sprintf(format, args...))})
		}
		var data struct {
			Setup struct {
				Listeners []struct {
					Point string `json:"point"`
					Do    []struct {
						Kind     string          `json:"kind"`
						Decision json.RawMessage `json:"decision"`
					} `json:"do"`
				} `json:"listeners"`
			} `json:"setup"`
			Expect struct {
				Log      []string `json:"log"`
				LogTypes []string `json:"logTypes"`
				Events   []struct {
					Type string `json:"type"`
				} `json:"events"`
			} `json:"expect"`
		}
		if err := json.Unmarshal(sc.Data, &data); err != nil {
			bad("", "%v", err)
			continue
		}
		for i, l := range data.Setup.Listeners {
			ev := events[l.Point]
			if ev == nil {
				bad(fmt.Sprintf("setup.listeners[%d].point", i), "unknown extension point %q", l.Point)
				continue
			}
			for j, a := range l.Do {
				if a.Kind != "decide" {
					continue
				}
				where := fmt.Sprintf("setup.listeners[%d].do[%d].decision", i, j)
				if ev.Decision == nil || ev.Decision.Kind != ir.Union {
					bad(where, "%s (%s) takes no decision", ev.Name, ev.Domain)
					continue
				}
				if msg := checkDecision(ev.Decision, a.Decision); msg != "" {
					bad(where, "%s", msg)
				}
			}
		}
		check := func(path string, ts []string) {
			for i, t := range ts {
				if !types[t] {
					bad(fmt.Sprintf("%s[%d]", path, i), "unknown session event type %q", t)
				}
			}
		}
		check("expect.log", data.Expect.Log)
		check("expect.logTypes", data.Expect.LogTypes)
		for i, ev := range data.Expect.Events {
			check(fmt.Sprintf("expect.events[%d].type", i), []string{ev.Type})
		}
	}
	if len(e.Problems) > 0 {
		return e
	}
	return nil
}

// checkDecision checks a decision's kind and required fields against union u.
func checkDecision(u *ir.Type, raw json.RawMessage) string {
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(raw, &obj); err != nil {
		return "a decision must be an object with a kind"
	}
	var kind string
	_ = json.Unmarshal(obj["kind"], &kind)
	for _, v := range u.Variants {
		if v.Kind != kind {
			continue
		}
		for _, f := range v.Type.Fields {
			if _, ok := obj[f.JSONName]; f.Required && !f.Runtime && !ok {
				return fmt.Sprintf("%s %q needs field %q", u.Name, kind, f.JSONName)
			}
		}
		return ""
	}
	kinds := make([]string, len(u.Variants))
	for i, v := range u.Variants {
		kinds[i] = v.Kind
	}
	return fmt.Sprintf("%q is not a kind of %s (kinds: %v)", kind, u.Name, kinds)
}
