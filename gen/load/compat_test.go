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
