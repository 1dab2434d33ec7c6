package vetsuite

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// TestSameAsCmdVet: the suite is the one the installed Go toolchain's cmd/vet runs (read
// from its source), so that the one vet pass in CI checks what go vet would.
func TestSameAsCmdVet(t *testing.T) {
	out, err := exec.Command("go", "env", "GOROOT").Output()
	if err != nil {
		t.Fatalf("go env GOROOT: %v", err)
	}
	src, err := os.ReadFile(filepath.Join(strings.TrimSpace(string(out)), "src", "cmd", "vet", "main.go"))
	if err != nil {
		t.Fatalf("reading cmd/vet's source: %v", err)
	}
	var want []string
	for _, m := range regexp.MustCompile(`"golang.org/x/tools/go/analysis/passes/(\w+)"`).FindAllStringSubmatch(string(src), -1) {
		want = append(want, m[1])
	}
	var got []string
	for _, a := range Analyzers() {
		got = append(got, a.Name)
	}
	// An analyzer's name is its package's, but for two.
	pkgOf := map[string]string{"composites": "composite", "copylocks": "copylock"}
	for i, n := range got {
		if p, ok := pkgOf[n]; ok {
			got[i] = p
		}
	}
	slices.Sort(want)
	slices.Sort(got)
	if len(want) < 30 || !slices.Equal(got, want) {
		t.Errorf("vetsuite has %q\ncmd/vet runs %q", got, want)
	}
}
