package hookproto

import "testing"

// A hook/result record carries a notice and a diagnostic only when the run had some, each
// joined one per line.
func TestRecordNoticeAndDiagnostic(t *testing.T) {
	if rec := (HookRun{}).Record(1); rec.Notice != nil || rec.Diagnostic != nil || rec.StderrSummary != nil {
		t.Errorf("a quiet run records notice %v, diagnostic %v, stderr %v", rec.Notice, rec.Diagnostic, rec.StderrSummary)
	}
	run := HookRun{Verdict: Verdict{Notices: []string{"n1", "n2"}, Diagnostics: []string{"d1", "d2"}}, StderrSummary: "err"}
	rec := run.Record(2)
	if rec.Turn != 2 || rec.Notice == nil || *rec.Notice != "n1\nn2" || rec.Diagnostic == nil || *rec.Diagnostic != "d1\nd2" ||
		rec.StderrSummary == nil || *rec.StderrSummary != "err" {
		t.Errorf("record = %+v", rec)
	}
}
