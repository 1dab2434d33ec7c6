package gotypes

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/dshkit/dsh/codec"
)

// TestEmittedCodeCallsTheCodecRuntime: the types files import the codec runtime and hold
// no copy of it, and meta_codec.go holds the version check with this codec's Version.
func TestEmittedCodeCallsTheCodecRuntime(t *testing.T) {
	for _, f := range emitOrFatal(t, testSpec(), "generated/dsh") {
		switch {
		case strings.HasSuffix(f.Path, "/meta_codec.go"):
			v := strconv.Itoa(codec.Version)
			for _, want := range []string{
				"_ = codec.EnforceVersion(" + v + " - codec.MinVersion)",
				"_ = codec.EnforceVersion(codec.MaxVersion - " + v + ")",
				"type DecodeError = codec.DecodeError",
				"ErrUnknownField = codec.ErrUnknownField",
			} {
				if !bytes.Contains(f.Data, []byte(want)) {
					t.Errorf("%s lacks %s", f.Path, want)
				}
			}
		case strings.HasSuffix(f.Path, "_types.go"):
			if !bytes.Contains(f.Data, []byte(`"github.com/dshkit/dsh/codec"`)) {
				t.Errorf("%s does not import the codec runtime", f.Path)
			}
			for _, copied := range []string{"type objectEncoder", "type objectDecoder", "func decodeValue", "json.Marshal("} {
				if bytes.Contains(f.Data, []byte(copied)) {
					t.Errorf("%s holds %q: a copy of the runtime", f.Path, copied)
				}
			}
		}
	}
}

// TestVersionMismatchDoesNotCompile builds the emitted code against a codec runtime whose
// supported range excludes it, both ways, and requires the build to fail at the check.
func TestVersionMismatchDoesNotCompile(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a module")
	}
	dir := writeModule(t)
	doc := filepath.Join(dir, "dsh", "codec", "doc.go")
	orig, err := os.ReadFile(doc)
	if err != nil {
		t.Fatal(err)
	}
	if out, err := run(t, dir, "build", "./demo"); err != nil {
		t.Fatalf("the emitted code does not build against its own runtime: %v\n%s", err, out)
	}
	v := codec.Version
	for name, edit := range map[string][2]string{
		"runtime too new": {"MinVersion = " + strconv.Itoa(codec.MinVersion), "MinVersion = " + strconv.Itoa(v+1)},
		"runtime too old": {"MaxVersion = Version", "MaxVersion = " + strconv.Itoa(v-1)},
	} {
		t.Run(name, func(t *testing.T) {
			if !bytes.Contains(orig, []byte(edit[0])) {
				t.Fatalf("codec/doc.go lacks %q", edit[0])
			}
			writeFile(t, doc, bytes.Replace(orig, []byte(edit[0]), []byte(edit[1]), 1))
			t.Cleanup(func() { writeFile(t, doc, orig) })
			out, err := run(t, dir, "build", "./demo")
			if err == nil {
				t.Fatal("the emitted code builds against a runtime that does not support its version")
			}
			if !strings.Contains(out, "meta_codec.go") || !strings.Contains(out, "EnforceVersion") {
				t.Errorf("the build fails elsewhere than at the version check:\n%s", out)
			}
		})
	}
}
