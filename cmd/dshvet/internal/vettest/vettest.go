// Package vettest holds what the analyzers' tests share: the GOPATH tree of their testdata,
// with stand-ins for the generated surface and the tool pipeline.
package vettest

import (
	"path/filepath"
	"runtime"
	"testing"
)

// Dir is the absolute path of cmd/dshvet/internal/testdata, the analysistest GOPATH.
func Dir(t testing.TB) string {
	t.Helper()
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		t.Fatal("vettest: no caller information")
	}
	return filepath.Join(filepath.Dir(file), "..", "testdata")
}
