package approval

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/dshkit/dsh/generated/dsh"
)

// eventLog records the session events a service appends.
type eventLog struct {
	mu     sync.Mutex
	events []dsh.SessionEventData
	fail   error
}

func (l *eventLog) Record(ctx context.Context, data dsh.SessionEventData) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.fail != nil {
		return l.fail
	}
	l.events = append(l.events, data)
	return nil
}

func (l *eventLog) get() []dsh.SessionEventData {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.events)
}

func newService(l *eventLog, opts ...Option) *Service {
	var n atomic.Int64
	ids := func() string { return fmt.Sprint("id", n.Add(1)) }
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	return NewService(append([]Option{WithRecorder(l), WithIDs(ids), WithLogger(quiet)}, opts...)...)
}

func fixed(o dsh.ApprovalOutcome) Answerer {
	return AnswererFunc(func(context.Context, Request) (dsh.ApprovalOutcome, error) { return o, nil })
}

var req = Request{AgentID: "a1", ToolName: "echo", CallID: "c1", Reason: "hook wants a human"}

func TestApproveRecordsThePair(t *testing.T) {
	l := &eventLog{}
	s := newService(l)
	s.AddAnswerer(fixed(dsh.ApprovalOutcomeAllowedOnce))
	got, err := s.Approve(context.Background(), req)
	if err != nil || got != dsh.ApprovalOutcomeAllowedOnce {
		t.Fatalf("Approve = %q, %v", got, err)
	}
	var got2 []string
	for _, ev := range l.get() {
		data, _ := json.Marshal(ev)
		got2 = append(got2, ev.SessionEventType()+" "+string(data))
	}
	want := []string{
		`approval/asked {"id":"id1","toolName":"echo","callId":"c1","reason":"hook wants a human"}`,
		`approval/decided {"id":"id1","outcome":"allowed-once"}`,
	}
	if !slices.Equal(got2, want) {
		t.Errorf("events = %q, want %q", got2, want)
	}
	// Without a reason or call id, the asked event omits them.
	if _, err := s.Approve(context.Background(), Request{AgentID: "a1", ToolName: "echo"}); err != nil {
		t.Fatal(err)
	}
	if asked := l.get()[2].(dsh.ApprovalAsked); asked.CallID != nil || asked.Reason != nil || asked.ID != "id2" {
		t.Errorf("asked = %+v", asked)
	}
}

func TestFirstWinsAndUnavailable(t *testing.T) {
	l := &eventLog{}
	s := newService(l)
	if got, _ := s.Approve(context.Background(), req); got != dsh.ApprovalOutcomeUnavailable {
		t.Errorf("no answerer: %q", got)
	}
	var asked []string
	s.AddAnswerer(AnswererFunc(func(context.Context, Request) (dsh.ApprovalOutcome, error) {
		asked = append(asked, "pass")
		return Pass, nil
	}))
	if got, _ := s.Approve(context.Background(), req); got != dsh.ApprovalOutcomeUnavailable {
		t.Errorf("all pass: %q", got)
	}
	remove := s.AddAnswerer(fixed(dsh.ApprovalOutcomeRejected))
	lastRan := 0
	s.AddAnswerer(AnswererFunc(func(context.Context, Request) (dsh.ApprovalOutcome, error) {
		lastRan++
		return dsh.ApprovalOutcomeAllowedOnce, nil
	}))
	if got, _ := s.Approve(context.Background(), req); got != dsh.ApprovalOutcomeRejected || lastRan != 0 {
		t.Errorf("first wins: %q (later answerer ran %d times)", got, lastRan)
	}
	remove()
	remove()
	if got, _ := s.Approve(context.Background(), req); got != dsh.ApprovalOutcomeAllowedOnce {
		t.Errorf("after removal: %q", got)
	}
	if len(asked) != 3 {
		t.Errorf("passing answerer asked %d times", len(asked))
	}
}

func TestPolicyNeverRejectsBeforeAnyAnswerer(t *testing.T) {
	l := &eventLog{}
	s := newService(l, WithPolicy(PolicyNever))
	s.AddAnswerer(AnswererFunc(func(context.Context, Request) (dsh.ApprovalOutcome, error) {
		t.Error("an answerer ran under policy never")
		return dsh.ApprovalOutcomeAllowedOnce, nil
	}))
	if got, err := s.Approve(context.Background(), req); got != dsh.ApprovalOutcomeRejected || err != nil {
		t.Errorf("Approve = %q, %v", got, err)
	}
	if ev := l.get(); len(ev) != 2 || ev[1].(dsh.ApprovalDecided).Outcome != dsh.ApprovalOutcomeRejected {
		t.Errorf("events %+v", ev)
	}
	if err := s.SetPolicy("sometimes"); !errors.Is(err, ErrInvalidPolicy) {
		t.Errorf("SetPolicy: %v", err)
	}
	if err := s.SetPolicy(PolicyAsk); err != nil || s.Policy() != PolicyAsk {
		t.Errorf("SetPolicy(ask): %v, %q", err, s.Policy())
	}
}

func TestCancellationIsCancelled(t *testing.T) {
	l := &eventLog{}
	s := newService(l)
	release := make(chan struct{})
	defer close(release)
	s.AddAnswerer(AnswererFunc(func(ctx context.Context, r Request) (dsh.ApprovalOutcome, error) {
		<-release // an answerer that ignores ctx
		return dsh.ApprovalOutcomeAllowedOnce, nil
	}))
	ctx, cancel := context.WithCancel(context.Background())
	go func() { time.Sleep(5 * time.Millisecond); cancel() }()
	got, err := s.Approve(ctx, req)
	if got != dsh.ApprovalOutcomeCancelled || err != nil {
		t.Errorf("Approve = %q, %v", got, err)
	}
	if ev := l.get(); len(ev) != 2 || ev[1].(dsh.ApprovalDecided).Outcome != dsh.ApprovalOutcomeCancelled {
		t.Errorf("events %+v", ev)
	}
	// Already cancelled: no answerer runs.
	if got, _ := s.Approve(ctx, req); got != dsh.ApprovalOutcomeCancelled {
		t.Errorf("pre-cancelled: %q", got)
	}
	// An answer that arrives with the cancellation is cancelled too.
	s2 := newService(&eventLog{})
	ctx2, cancel2 := context.WithCancel(context.Background())
	s2.AddAnswerer(AnswererFunc(func(ctx context.Context, r Request) (dsh.ApprovalOutcome, error) {
		cancel2()
		return dsh.ApprovalOutcomeAllowedOnce, nil
	}))
	if got, _ := s2.Approve(ctx2, req); got != dsh.ApprovalOutcomeCancelled {
		t.Errorf("answer with cancellation: %q", got)
	}
}

func TestFailures(t *testing.T) {
	for _, tc := range []struct {
		name     string
		answerer Answerer
		rec      error
		want     string
		events   int
	}{
		{"answerer error", AnswererFunc(func(context.Context, Request) (dsh.ApprovalOutcome, error) {
			return "", errors.New("ui gone")
		}), nil, "approval: answerer 1: ui gone", 1},
		{"answerer panic", AnswererFunc(func(context.Context, Request) (dsh.ApprovalOutcome, error) { panic("boom") }),
			nil, "approval: answerer 1: panic: boom", 1},
		{"invalid outcome", fixed("yolo"), nil, `approval: answerer 1: approval: invalid outcome "yolo"`, 1},
		{"record fails", fixed(dsh.ApprovalOutcomeAllowedOnce), errors.New("disk full"), "approval: record approval/asked: disk full", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l := &eventLog{fail: tc.rec}
			s := newService(l)
			s.AddAnswerer(tc.answerer)
			got, err := s.Approve(context.Background(), req)
			if err == nil || err.Error() != tc.want || got != "" {
				t.Errorf("Approve = %q, %v; want error %q", got, err, tc.want)
			}
			if len(l.get()) != tc.events {
				t.Errorf("events %+v", l.get())
			}
		})
	}
}

func TestConcurrentApprovals(t *testing.T) {
	l := &eventLog{}
	s := newService(l, WithIDs(nil)) // nil keeps the counter ids of newService
	s.AddAnswerer(fixed(dsh.ApprovalOutcomeAllowedOnce))
	var wg sync.WaitGroup
	for range 50 {
		wg.Go(func() {
			if got, err := s.Approve(context.Background(), req); got != dsh.ApprovalOutcomeAllowedOnce || err != nil {
				t.Errorf("Approve = %q, %v", got, err)
			}
		})
	}
	wg.Wait()
	if len(l.get()) != 100 {
		t.Errorf("%d events", len(l.get()))
	}
}

func TestDefaultIDs(t *testing.T) {
	s := NewService()
	a, b := s.newID(), s.newID()
	if a == b || len(a) < 10 {
		t.Errorf("ids %q %q", a, b)
	}
}
