package variant_test

import (
	"testing"

	"github.com/dshkit/dsh/generated/dsh"
	"github.com/dshkit/dsh/runtime/internal/variant"
)

func TestValue(t *testing.T) {
	text := dsh.TextBlock{Text: "t"}
	for _, tc := range []struct {
		name    string
		in, out dsh.ContentBlock
	}{
		{"value form", text, text},
		{"pointer form", &text, text},
		{"nested pointer kept", &dsh.ToolResultBlock{ToolCallID: "c", Content: []dsh.ContentBlock{&text}},
			dsh.ToolResultBlock{ToolCallID: "c", Content: []dsh.ContentBlock{&text}}},
		{"nil pointer", (*dsh.ImageBlock)(nil), nil},
		{"nil", nil, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := variant.Value(tc.in)
			switch want := tc.out.(type) {
			case nil:
				if got != nil {
					t.Errorf("got %#v, want nil", got)
				}
			case dsh.ToolResultBlock:
				g, ok := got.(dsh.ToolResultBlock)
				if !ok || g.ToolCallID != want.ToolCallID || len(g.Content) != 1 || g.Content[0] != want.Content[0] {
					t.Errorf("got %#v, want %#v", got, want)
				}
			default:
				if got != tc.out {
					t.Errorf("got %#v, want %#v", got, tc.out)
				}
			}
		})
	}
	p := &dsh.SourcePlugin{Plugin: "p"}
	v := variant.Value[dsh.MessageSource](p)
	p.Plugin = "changed"
	if v != (dsh.SourcePlugin{Plugin: "p"}) {
		t.Errorf("the value form is not a copy: %#v", v)
	}
}

// notAVariant is a struct whose value does not satisfy the interface it is passed as.
type notAVariant struct{}

func (*notAVariant) String() string { return "" }

type stringer interface{ String() string }

func TestValueLeavesOtherPointers(t *testing.T) {
	var nilPtr *notAVariant
	if got := variant.Value[stringer](nilPtr); got == nil {
		t.Error("a nil pointer whose value is not a variant became nil")
	}
	n := &notAVariant{}
	if got := variant.Value[stringer](n); got != stringer(n) {
		t.Errorf("got %#v, want the pointer itself", got)
	}
}

func TestValueDoesNotAllocateForValueForms(t *testing.T) {
	var b dsh.ContentBlock = dsh.TextBlock{Text: "t"}
	if n := testing.AllocsPerRun(100, func() { b = variant.Value(b) }); n != 0 {
		t.Errorf("%v allocations per call, want 0", n)
	}
}

func BenchmarkValue(b *testing.B) {
	for _, bc := range []struct {
		name string
		b    dsh.ContentBlock
	}{{"value", dsh.TextBlock{Text: "t"}}, {"pointer", &dsh.TextBlock{Text: "t"}}} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				_ = variant.Value(bc.b)
			}
		})
	}
}
