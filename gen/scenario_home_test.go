package gen_test

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	sc "github.com/dshkit/dsh/generated/conformance"
)

// TestScenarioIDsHaveOneHome: a conformance scenario lives in spec/conformance only. No
// handwritten Go file of the module names a scenario id (a test repeating a scenario is
// either gone or named for what it checks); generated files (generated/) and test fixtures
// (testdata/) may.
func TestScenarioIDsHaveOneHome(t *testing.T) {
	entries, err := sc.Scenarios()
	if err != nil {
		t.Fatal(err)
	}
	ids := map[string]bool{}
	for _, e := range entries {
		ids[e.ID] = true
	}
	// An id is a whole word of letters, digits and dashes: every such word is looked up.
	word := regexp.MustCompile(`[\w-]+`)
	root := filepath.Join("..")
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			name := d.Name()
			if path != root && (strings.HasPrefix(name, ".") || name == "testdata" || name == "node_modules" ||
				filepath.ToSlash(path) == "../generated") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") {
			return nil
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, w := range word.FindAll(data, -1) {
			if ids[string(w)] {
				t.Errorf("%s names scenario %s: a scenario's home is spec/conformance (test what it does not check under a name of its own)", filepath.ToSlash(path), w)
				break
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
