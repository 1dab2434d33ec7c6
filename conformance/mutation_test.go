package conformance_test

import (
	"testing"
	"time"

	"github.com/dshkit/dsh/conformance"
	"github.com/dshkit/dsh/conformance/dshrt"
)

// mutantTimeout bounds a scenario run against a mutant.
const mutantTimeout = 5 * time.Second

// TestMutantsAreDetected runs the whole suite against deliberately broken variants of
// dsh's runtime and requires each breakage to fail at least one scenario: a suite that
// passes against a mutant would not notice that bug in a real runtime. A scenario that
// wedges under a mutant counts as detecting it after mutantTimeout rather than the
// suite's 20 s (the intact runtime runs every scenario in milliseconds).
func TestMutantsAreDetected(t *testing.T) {
	entries, err := conformance.Scenarios()
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range dshrt.Mutations {
		t.Run(string(m), func(t *testing.T) {
			t.Parallel()
			var caught []string
			for _, e := range entries {
				if len(conformance.EvaluateWithin(t, func(tb testing.TB) conformance.Runtime { return dshrt.NewMutant(tb, m) }, e, mutantTimeout)) > 0 {
					caught = append(caught, e.ID)
				}
			}
			if len(caught) == 0 {
				t.Fatalf("no scenario detects the mutation %s", m)
			}
			t.Logf("%s: detected by %d of %d scenarios, e.g. %s", m, len(caught), len(entries), caught[0])
		})
	}
}

// TestIntactRuntimeConforms is the control: the unbroken runtime passes every scenario
// through the same Evaluate the mutation check uses.
func TestIntactRuntimeConforms(t *testing.T) {
	entries, err := conformance.Scenarios()
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if problems := conformance.Evaluate(t, dshrt.New, e); len(problems) > 0 {
			t.Errorf("%s: %v", e.ID, problems)
		}
	}
}
