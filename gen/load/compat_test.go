package load_test

import (
	"errors"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/dshkit/dsh/gen/load"
	"github.com/dshkit/dsh/spec"
)

// specFS is a one-record spec with the real meta.cue and the given extra source.
func specFS(t *testing.T, src string) fstest.MapFS {
	t.Helper()
	meta, err := spec.FS.ReadFile("meta.cue")
	if err != nil {
		t.Fatal(err)
	}
	return fstest.MapFS{
		"meta.cue": {Data: meta},
		"a.cue":    {Data: []byte("package dsh\n\n" + src)},
	}
}

func TestVersion(t *testing.T) {
	rec := "// #A is a record.\n#A: {\n\t// n is a number.\n\tn!: int\n}\n"
	s, _, err := load.NewContext().FSPackage(specFS(t, rec+"\nversion: \"2.13.0\"\n"), ".", "", "spec")
	if err != nil {
		t.Fatal(err)
	}
	if s.Version != "2.13.0" || s.VersionPos.File != "a.cue" || s.VersionPos.Line != 9 {
		t.Fatalf("version %q at %v", s.Version, s.VersionPos)
	}
	for _, bad := range []string{`"1.0"`, `"01.0.0"`, `"v1.0.0"`, `string`} {
		_, _, err := load.NewContext().FSPackage(specFS(t, rec+"\nversion: "+bad+"\n"), ".", "", "spec")
		if !errors.Is(err, load.ErrSpec) || !strings.HasPrefix(err.Error(), "spec/a.cue:9:") {
			t.Errorf("version %s: err = %v; want a spec error at spec/a.cue:9", bad, err)
		}
	}
}

func TestAccepts(t *testing.T) {
	ctx := load.NewContext()
	load1 := func(c *load.Context, src string) *load.Schemas {
		t.Helper()
		_, s, err := c.FSPackage(specFS(t, src), ".", "", "spec")
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	old := load1(ctx, "// #A is a record.\n#A: {\n\t// n is a number.\n\tn!: int & >0\n}\n")
	wider := load1(ctx, "// #A is a record.\n#A: {\n\t// n is a number.\n\tn!: int\n}\n")
	narrower := load1(ctx, "// #A is a record.\n#A: {\n\t// n is a number.\n\tn!: int & >5\n}\n")
	if err := wider.Accepts(old, "A"); err != nil {
		t.Errorf("a wider bound: %v", err)
	}
	if err := narrower.Accepts(old, "A"); err == nil || !strings.Contains(err.Error(), "subsumption") {
		t.Errorf("a narrower bound: %v, want a subsumption failure", err)
	}
	if err := narrower.Accepts(old, "Missing"); err != nil {
		t.Errorf("an undeclared name: %v, want nil (the IR reports additions and removals)", err)
	}
	other := load1(load.NewContext(), "// #A is a record.\n#A: {\n\t// n is a number.\n\tn!: int\n}\n")
	if err := other.Accepts(old, "A"); !errors.Is(err, load.ErrOtherContext) {
		t.Errorf("schemas of two contexts: %v, want ErrOtherContext", err)
	}
}

// TestAcceptsCommentOnly: rewording the doc comment of a definition that an open record
// embedding another definition refers to (CUE cannot decide such a record's subsumption)
// changes nothing it accepts: Accepts says so.
func TestAcceptsCommentOnly(t *testing.T) {
	ctx := load.NewContext()
	src := func(doc string) string {
		return "// #U holds shared fields.\n#U: {\n\t// ok is a flag.\n\tok?: bool\n}\n\n" +
			"// #Out is an output.\n#Out: {\n\t#U\n\t// spec holds the specific fields.\n\tspec?: #S\n\t...\n}\n\n" +
			"// #S holds the specific fields.\n#S: {\n\t// name names the event.\n\tname?: string\n\t// " + doc + "\n\tmore?: _\n\t...\n}\n"
	}
	load1 := func(s string) *load.Schemas {
		t.Helper()
		_, sc, err := ctx.FSPackage(specFS(t, s), ".", "", "spec")
		if err != nil {
			t.Fatal(err)
		}
		return sc
	}
	old, reworded := load1(src("more would do more; not applied.")), load1(src("more does more, as the engine does."))
	for _, name := range []string{"Out", "S"} {
		if err := reworded.Accepts(old, name); err != nil {
			t.Errorf("%s after a doc comment change: %v, want nil", name, err)
		}
	}
}
