package pgtest

import (
	"errors"
	"fmt"
	"runtime"
	"testing"
)

// fakeTB records whether Need skipped or failed; both end the goroutine, as in a test.
type fakeTB struct {
	testing.TB
	skipped, failed string
}

func (f *fakeTB) Helper()                   { f.TB.Helper() }
func (f *fakeTB) Skip(args ...any)          { f.skipped = fmt.Sprint(args...); runtime.Goexit() }
func (f *fakeTB) Fatal(args ...any)         { f.failed = fmt.Sprint(args...); runtime.Goexit() }
func (f *fakeTB) Fatalf(s string, a ...any) { f.Fatal(fmt.Sprintf(s, a...)) }

// need runs Need on a fake TB in its own goroutine.
func need(t *testing.T, err error) *fakeTB {
	f := &fakeTB{TB: t}
	done := make(chan struct{})
	go func() {
		defer close(done)
		Need(f, nil, err)
	}()
	<-done
	return f
}

// TestNeedWithoutBinaries: missing binaries skip a test, saying how to install them, and
// fail it under CI; any other start error fails it.
func TestNeedWithoutBinaries(t *testing.T) {
	t.Setenv("CI", "")
	if f := need(t, ErrNoPostgres); f.skipped == "" || f.failed != "" {
		t.Errorf("locally: skipped %q, failed %q; want a skip", f.skipped, f.failed)
	}
	t.Setenv("CI", "true")
	if f := need(t, ErrNoPostgres); f.failed == "" || f.skipped != "" {
		t.Errorf("under CI: skipped %q, failed %q; want a failure", f.skipped, f.failed)
	}
	t.Setenv("CI", "")
	if f := need(t, errors.New("initdb: boom")); f.failed == "" {
		t.Errorf("another start error: skipped %q; want a failure", f.skipped)
	}
}
