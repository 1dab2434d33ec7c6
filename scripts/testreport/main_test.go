package main

import (
	"strings"
	"testing"
)

// TestReport: a passing test's output is dropped, a failing one's is shown, the
// packages' result lines are kept, and every skip is listed with its reason at the end.
func TestReport(t *testing.T) {
	in := strings.Join([]string{
		`{"Action":"run","Package":"p","Test":"TestOK"}`,
		`{"Action":"output","Package":"p","Test":"TestOK","Output":"=== RUN   TestOK\n"}`,
		`{"Action":"output","Package":"p","Test":"TestOK","Output":"    ok_test.go:3: chatter\n"}`,
		`{"Action":"pass","Package":"p","Test":"TestOK"}`,
		`{"Action":"output","Package":"p","Test":"TestOracle","Output":"=== RUN   TestOracle\n"}`,
		`{"Action":"output","Package":"p","Test":"TestOracle","Output":"    oracle.go:37: test oracle missing: /x/shared; skipping outside CI\n"}`,
		`{"Action":"output","Package":"p","Test":"TestOracle","Output":"--- SKIP: TestOracle (0.00s)\n"}`,
		`{"Action":"skip","Package":"p","Test":"TestOracle"}`,
		`{"Action":"output","Package":"p","Output":"PASS\n"}`,
		`{"Action":"output","Package":"p","Output":"ok  \tp\t0.1s\n"}`,
		`{"Action":"pass","Package":"p"}`,
		`{"Action":"output","Package":"q","Test":"TestBad","Output":"    bad_test.go:9: it broke\n"}`,
		`{"Action":"output","Package":"q","Test":"TestBad","Output":"--- FAIL: TestBad (0.00s)\n"}`,
		`{"Action":"fail","Package":"q","Test":"TestBad"}`,
		`{"Action":"output","Package":"q","Output":"FAIL\tq\t0.2s\n"}`,
		`{"Action":"fail","Package":"q"}`,
		`# a build failure`,
	}, "\n") + "\n"
	var out strings.Builder
	failed, err := report(strings.NewReader(in), &out)
	if err != nil || !failed {
		t.Fatalf("report: failed %v, err %v", failed, err)
	}
	want := "ok  \tp\t0.1s\n" +
		"    bad_test.go:9: it broke\n--- FAIL: TestBad (0.00s)\n" +
		"FAIL\tq\t0.2s\n" +
		"# a build failure\n" +
		"\nskipped (1), with the reasons they gave:\n" +
		"  p TestOracle: oracle.go:37: test oracle missing: /x/shared; skipping outside CI\n"
	if out.String() != want {
		t.Errorf("report:\n%s\nwant:\n%s", out.String(), want)
	}
	if _, err := report(strings.NewReader("{not json\n"), &out); err == nil || !strings.Contains(err.Error(), "line 1") {
		t.Errorf("a damaged line: %v, want an error naming line 1", err)
	}
}
