package breaking_test

import (
	"testing"

	"github.com/dshkit/dsh/gen"
	"github.com/dshkit/dsh/gen/breaking"
	"github.com/dshkit/dsh/gen/load"
	"github.com/dshkit/dsh/spec"
)

// BenchmarkCompareUnchanged is the work of `dshgen breaking` on an unchanged tree: two
// loads of the spec tree in one CUE context (without the conformance scenarios, as
// without --verbose) and the comparison.
func BenchmarkCompareUnchanged(b *testing.B) {
	for b.Loop() {
		ctx := load.NewContext()
		old, err := gen.LoadCompare(ctx, spec.FS, "spec", false)
		if err != nil {
			b.Fatal(err)
		}
		new, err := gen.LoadCompare(ctx, spec.FS, "spec", false)
		if err != nil {
			b.Fatal(err)
		}
		if r := breaking.Compare(old, new, "spec"); len(r.Findings) > 0 {
			b.Fatal(r.Findings)
		}
	}
}

// BenchmarkLoadCompare is one load of the whole tree, scenarios included (--verbose).
func BenchmarkLoadCompare(b *testing.B) {
	for b.Loop() {
		if _, err := gen.LoadCompare(load.NewContext(), spec.FS, "spec", true); err != nil {
			b.Fatal(err)
		}
	}
}
