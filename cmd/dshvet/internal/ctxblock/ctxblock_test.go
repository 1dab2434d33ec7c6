package ctxblock_test

import (
	"testing"

	"golang.org/x/tools/go/analysis/analysistest"

	"github.com/dshkit/dsh/cmd/dshvet/internal/ctxblock"
	"github.com/dshkit/dsh/cmd/dshvet/internal/vettest"
)

func TestAnalyzer(t *testing.T) {
	analysistest.Run(t, vettest.Dir(t), ctxblock.Analyzer, "ctxblock")
}
