package staleregister_test

import (
	"testing"

	"golang.org/x/tools/go/analysis/analysistest"

	"github.com/dshkit/dsh/cmd/dshvet/internal/staleregister"
	"github.com/dshkit/dsh/cmd/dshvet/internal/vettest"
)

// TestAnalyzer: a listener method plugin_gen.go misses.
func TestAnalyzer(t *testing.T) {
	analysistest.Run(t, vettest.Dir(t), staleregister.Analyzer, "staleregister")
}

// TestGone: plugin_gen.go registering a method that no longer exists (a package that does
// not compile, which the analyzer runs on all the same).
func TestGone(t *testing.T) {
	analysistest.Run(t, vettest.Dir(t), staleregister.Analyzer, "stalegone")
}
