package claudecode_test

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/dshkit/dsh/bridges/hookproto"
	ht "github.com/dshkit/dsh/bridges/internal/hooktest"
	"github.com/dshkit/dsh/generated/dsh"
)

// maintenance returns the owners of hook records, "turn:N" or "maint:ID@N".
func maintenance(recs []dsh.SessionEventData) []string {
	var out []string
	for _, r := range recs {
		//dshvet:partial the test reads the hook records; the other events are not about their owner
		switch x := r.(type) {
		case dsh.HookInvoked:
			if x.Maintenance != nil {
				out = append(out, "invoked:"+*x.Maintenance+"@"+string(rune('0'+x.Turn)))
			} else {
				out = append(out, "invoked:turn@"+string(rune('0'+x.Turn)))
			}
		case dsh.HookResult:
			if x.Maintenance != nil {
				out = append(out, "result:"+*x.Maintenance+"@"+string(rune('0'+x.Turn)))
			} else {
				out = append(out, "result:turn@"+string(rune('0'+x.Turn)))
			}
		}
	}
	return out
}

// PreCompact (docs/design/REWRITE-COMPACTION.md#23-mapping-claude-code-and-codex-hooks): the matcher tests the origin; plain stdout on
// exit 0 adds instructions; exit 2 and decision "block" defer; continue:false does not stop
// the compaction (as the real engine); the input carries trigger and custom_instructions
// (null for an automatic compaction) and no permission_mode; the records are owned by the
// attempt, with turn 0 for a manual compaction.
func TestPreCompact(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "in.json")
	h, _ := setup(t,
		ht.G("PreCompact", "manual", `cat > `+in+`; echo 'keep codename OSPREY'`),
		ht.G("PreCompact", "auto", `cat > `+in+`; grep -q '"custom_instructions":null' `+in+` || exit 0; echo 'not now' >&2; exit 2`))
	d, err := h.PreCompact(ctx, "cmp_1", dsh.CompactionOriginManual, "keep codename HERON", 0)
	if err != nil {
		t.Fatal(err)
	}
	if p, ok := d.(dsh.PreCompactProceed); !ok || !slices.Equal(p.Instructions, []string{"keep codename OSPREY"}) {
		t.Errorf("manual: %s", ht.Describe(d))
	}
	m := readJSON(t, in)
	if m["hook_event_name"] != "PreCompact" || m["trigger"] != "manual" || m["custom_instructions"] != "keep codename HERON" ||
		m["prompt_id"] != hookproto.UUIDFor("cmp_1") || m["session_id"] != "session-1" {
		t.Errorf("manual stdin %v", m)
	}
	if _, ok := m["permission_mode"]; ok {
		t.Errorf("stdin has permission_mode: %v", m)
	}
	if got := maintenance(h.Rec.Take()); !slices.Equal(got, []string{"invoked:cmp_1@0", "result:cmp_1@0"}) {
		t.Errorf("manual records %v", got)
	}

	d, err = h.PreCompact(ctx, "cmp_2", dsh.CompactionOriginAuto, "", 2)
	if err != nil {
		t.Fatal(err)
	}
	if x, ok := d.(dsh.PreCompactDefer); !ok || !strings.Contains(x.Reason, "not now") {
		t.Errorf("auto exit 2: %s", ht.Describe(d))
	}
	if m := readJSON(t, in); m["trigger"] != "auto" || m["custom_instructions"] != nil {
		t.Errorf("auto stdin %v", m)
	}
	if got := maintenance(h.Rec.Take()); !slices.Equal(got, []string{"invoked:cmp_2@2", "result:cmp_2@2"}) {
		t.Errorf("auto records %v", got)
	}

	for _, c := range []struct{ out, want string }{
		{`{"decision":"block","reason":"json says no"}`, "defer:json says no"},
		{`{"continue":false,"stopReason":"ignored"}`, "proceed"},
		{`{"systemMessage":"compacting"}`, "proceed"},
	} {
		h, _ := setup(t, ht.G("PreCompact", "", `echo '`+c.out+`'`))
		d, err := h.PreCompact(ctx, "cmp_3", dsh.CompactionOriginAuto, "", 1)
		if err != nil {
			t.Fatal(err)
		}
		got := ht.PreCompactString(d)
		if got != c.want {
			t.Errorf("%s: %s, want %s", c.out, got, c.want)
		}
		if hs := h.Agent.Halted(); len(hs) != 0 {
			t.Errorf("%s halted %v", c.out, hs)
		}
	}
}

// PostCompact gets compact_summary; hookSpecificOutput.additionalContext becomes a context
// after the checkpoint; plain stdout is ignored. SessionStart[compact] runs as the
// attempt's, with the model and the prompt id.
func TestPostCompactAndSessionStartCompact(t *testing.T) {
	dir := t.TempDir()
	in, ss := filepath.Join(dir, "in.json"), filepath.Join(dir, "ss.json")
	h, _ := setup(t,
		ht.G("PostCompact", "manual", `cat > `+in+`; echo '{"hookSpecificOutput":{"hookEventName":"PostCompact","additionalContext":"restore HERON"}}'`),
		ht.G("PostCompact", "auto", `echo 'plain words'`),
		ht.G("SessionStart", "compact", `cat > `+ss+`; echo '{"hookSpecificOutput":{"hookEventName":"SessionStart","additionalContext":"after compact"}}'`))
	d, err := h.PostCompact(ctx, "cmp_1", dsh.CompactionOriginManual, "<summary>S</summary>", 0)
	if err != nil {
		t.Fatal(err)
	}
	a, ok := d.(dsh.PostCompactAppend)
	if !ok || len(a.Contexts) != 1 || !slices.Equal(ht.Texts(a.Contexts[0]), []string{"restore HERON"}) || ht.Source(a.Contexts[0]) != "plugin:hooks-claude-code" {
		t.Errorf("manual: %s", ht.Describe(d))
	}
	if m := readJSON(t, in); m["compact_summary"] != "<summary>S</summary>" || m["trigger"] != "manual" || m["hook_event_name"] != "PostCompact" {
		t.Errorf("stdin %v", m)
	}
	h.Rec.Take()
	if d, err := h.PostCompact(ctx, "cmp_2", dsh.CompactionOriginAuto, "S", 1); err != nil || d.Kind() != dsh.PostCompactAcceptKind {
		t.Errorf("plain stdout: %s, %v", ht.Describe(d), err)
	}
	h.Rec.Take()
	if err := h.SessionStartCompact(ctx, "cmp_1", 0); err != nil {
		t.Fatal(err)
	}
	m := readJSON(t, ss)
	if m["source"] != "compact" || m["model"] != "test-model" || m["prompt_id"] != hookproto.UUIDFor("cmp_1") {
		t.Errorf("SessionStart stdin %v", m)
	}
	if got := h.Agent.Injected(); len(got) != 1 || !slices.Equal(ht.Texts(got[0]), []string{"after compact"}) {
		t.Errorf("injected %+v", got)
	}
	if got := maintenance(h.Rec.Take()); !slices.Equal(got, []string{"invoked:cmp_1@0", "result:cmp_1@0"}) {
		t.Errorf("SessionStart[compact] records %v", got)
	}
}
