package editnotes_test

import (
	"context"
	"testing"

	"github.com/dshkit/dsh/examples/editnotes"
	"github.com/dshkit/dsh/generated/dsh"
	"github.com/dshkit/dsh/runtime/tools"
)

func TestNoteAfterWrite(t *testing.T) {
	hooks := dsh.NewRegistry()
	(&editnotes.Plugin{Note: "changed: %s"}).Register(hooks.Plugin("editnotes"))
	reg := tools.NewRegistry()
	for _, name := range []string{"Write", "Read"} {
		if _, err := reg.Register(tools.Definition{Name: name, Run: func(ctx context.Context, rc *tools.RunContext) (any, error) {
			return "ok", nil
		}}); err != nil {
			t.Fatal(err)
		}
	}
	rt := tools.New(reg, hooks)
	res := rt.Execute(context.Background(), tools.Input{CallID: "c1", Name: "Write", Arguments: []byte(`{"file_path":"a.txt","content":"x"}`)})
	ctxs := res.AdditionalContexts()
	if len(ctxs) != 1 {
		t.Fatalf("contexts after Write = %d, want 1", len(ctxs))
	}
	if tb, ok := ctxs[0].Content[0].(dsh.TextBlock); !ok || tb.Text != "changed: a.txt" {
		t.Errorf("context = %+v", ctxs[0].Content)
	}
	if src, ok := ctxs[0].Source.(dsh.SourcePlugin); !ok || src.Plugin != "editnotes" {
		t.Errorf("source = %+v", ctxs[0].Source)
	}
	res = rt.Execute(context.Background(), tools.Input{CallID: "c2", Name: "Read", Arguments: []byte(`{"file_path":"a.txt"}`)})
	if n := len(res.AdditionalContexts()); n != 0 {
		t.Errorf("contexts after Read = %d, want 0", n)
	}
}
