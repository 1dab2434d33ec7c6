package approval

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"

	"github.com/dshkit/dsh/generated/dsh"
)

// ErrInvalidOutcome is the failure of an answerer that returned a value that is neither an
// ApprovalOutcome nor Pass.
var ErrInvalidOutcome = errors.New("approval: invalid outcome")

// ErrInvalidPolicy is returned by SetPolicy for a policy other than PolicyAsk and
// PolicyNever.
var ErrInvalidPolicy = errors.New("approval: invalid policy")

// Option configures a Service.
type Option func(*Service)

// WithRecorder sets the recorder that receives the approval/asked and approval/decided
// events. Without one the service records nothing.
func WithRecorder(r Recorder) Option {
	return func(s *Service) { s.rec = r }
}

// WithPolicy sets the initial session policy (default PolicyAsk). An invalid policy is
// ignored.
func WithPolicy(p Policy) Option {
	return func(s *Service) {
		if p.Valid() {
			s.policy = p
		}
	}
}

// WithLogger sets the logger of the service (default slog.Default()).
func WithLogger(l *slog.Logger) Option {
	return func(s *Service) {
		if l != nil {
			s.log = l
		}
	}
}

// WithIDs sets the function that mints request ids (default: "apr_" and 26 random
// base32 characters). It must return distinct ids and be safe for concurrent use.
func WithIDs(newID func() string) Option {
	return func(s *Service) {
		if newID != nil {
			s.newID = newID
		}
	}
}

// Service is the standard Approver of one session. It is safe for concurrent use.
//
// For each request it records approval/asked, resolves the outcome, records
// approval/decided and returns the outcome. The outcome is cancelled when ctx is (or
// becomes) cancelled before an answer arrives; rejected under PolicyNever (no answerer
// runs); otherwise the first answerer that does not Pass decides, and unavailable is the
// outcome when there is none or all pass. An answerer's error or panic, or a failing
// Record, is returned as the request's error; the asked event then has no decided one.
type Service struct {
	rec   Recorder
	log   *slog.Logger
	newID func() string

	mu        sync.Mutex
	policy    Policy
	answerers []*answerer
}

type answerer struct{ a Answerer }

// NewService returns a service configured by opts.
func NewService(opts ...Option) *Service {
	s := &Service{log: slog.Default(), policy: PolicyAsk, newID: randomID}
	for _, o := range opts {
		if o != nil {
			o(s)
		}
	}
	return s
}

func randomID() string { return "apr_" + rand.Text() }

// Policy returns the current session policy.
func (s *Service) Policy() Policy {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.policy
}

// SetPolicy changes the session policy; it affects requests that start afterwards.
func (s *Service) SetPolicy(p Policy) error {
	if !p.Valid() {
		return fmt.Errorf("%w %q", ErrInvalidPolicy, string(p))
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.policy = p
	return nil
}

// AddAnswerer adds a after the answerers already added and returns a func that removes it
// (calling it again does nothing). a must not be nil.
func (s *Service) AddAnswerer(a Answerer) (remove func()) {
	if a == nil {
		panic("approval: nil answerer")
	}
	x := &answerer{a: a}
	s.mu.Lock()
	s.answerers = append(slices.Clip(s.answerers), x)
	s.mu.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			s.mu.Lock()
			defer s.mu.Unlock()
			if i := slices.Index(s.answerers, x); i >= 0 {
				s.answerers = slices.Delete(slices.Clone(s.answerers), i, i+1)
			}
		})
	}
}

// Approve resolves req (see Service).
func (s *Service) Approve(ctx context.Context, req Request) (dsh.ApprovalOutcome, error) {
	d, err := s.ApproveDigest(ctx, req)
	return d.Outcome, err
}

// ApproveDigest resolves req (see Service) and reports the argument digest the deciding
// answerer echoed: a DigestAnswerer's own, any other answerer's req.ArgsDigest. The
// approval/asked event carries req.ArgsDigest and approval/decided the echo.
func (s *Service) ApproveDigest(ctx context.Context, req Request) (Decision, error) {
	s.mu.Lock()
	policy, answerers := s.policy, s.answerers
	s.mu.Unlock()

	id := s.newID()
	asked := dsh.ApprovalAsked{ID: id, ToolName: req.ToolName}
	if req.CallID != "" {
		asked.CallID = &req.CallID
	}
	if req.Reason != "" {
		asked.Reason = &req.Reason
	}
	if req.ArgsDigest != "" {
		asked.ArgsDigest = &req.ArgsDigest
	}
	if err := s.record(ctx, asked); err != nil {
		return Decision{}, err
	}

	var (
		outcome dsh.ApprovalOutcome
		echo    = req.ArgsDigest
		err     error
	)
	switch {
	case ctx.Err() != nil:
		outcome = dsh.ApprovalOutcomeCancelled
	case policy == PolicyNever:
		outcome = dsh.ApprovalOutcomeRejected
	default:
		var a answer
		a, err = s.ask(ctx, req, answerers)
		outcome = a.outcome
		if a.echoed {
			echo = a.digest
		}
	}
	if err != nil {
		s.log.LogAttrs(ctx, slog.LevelWarn, "approval: request failed",
			slog.String("id", id), slog.String("tool", req.ToolName), slog.Any("error", err))
		return Decision{}, err
	}
	decided := dsh.ApprovalDecided{ID: id, Outcome: outcome}
	if echo != "" {
		decided.ArgsDigest = &echo
	}
	if err := s.record(ctx, decided); err != nil {
		return Decision{}, err
	}
	return Decision{Outcome: outcome, ArgsDigest: echo}, nil
}

// record appends data when a recorder is set. It uses a context that is not cancelled
// with ctx, so that a cancelled request still records its decision.
func (s *Service) record(ctx context.Context, data dsh.SessionEventData) error {
	if s.rec == nil {
		return nil
	}
	if err := s.rec.Record(context.WithoutCancel(ctx), data); err != nil {
		return fmt.Errorf("approval: record %s: %w", data.SessionEventType(), err)
	}
	return nil
}

type answer struct {
	outcome dsh.ApprovalOutcome
	digest  string // the digest a DigestAnswerer echoed
	echoed  bool
	err     error
}

// ask resolves the answerers, racing them against ctx: a cancellation before the answer
// gives cancelled, and the late answer is dropped.
func (s *Service) ask(ctx context.Context, req Request, answerers []*answerer) (answer, error) {
	cancelled := answer{outcome: dsh.ApprovalOutcomeCancelled}
	if ctx.Done() == nil {
		a := resolve(ctx, req, answerers)
		return a, a.err
	}
	ch := make(chan answer, 1)
	go func() { ch <- resolve(ctx, req, answerers) }()
	select {
	case a := <-ch:
		if ctx.Err() != nil {
			return cancelled, nil
		}
		return a, a.err
	case <-ctx.Done():
		return cancelled, nil
	}
}

// resolve asks each answerer in order until one decides.
func resolve(ctx context.Context, req Request, answerers []*answerer) answer {
	for i, x := range answerers {
		outcome, digest, echoed, err := callAnswerer(ctx, x.a, req)
		switch {
		case err != nil:
			return answer{err: fmt.Errorf("approval: answerer %d: %w", i+1, err)}
		case outcome == Pass:
			continue
		case !outcome.Valid():
			return answer{err: fmt.Errorf("approval: answerer %d: %w %q", i+1, ErrInvalidOutcome, string(outcome))}
		}
		return answer{outcome: outcome, digest: digest, echoed: echoed}
	}
	return answer{outcome: dsh.ApprovalOutcomeUnavailable}
}

// callAnswerer calls a (AnswerDigest for a DigestAnswerer, which echoes a digest),
// turning a panic into an error.
func callAnswerer(ctx context.Context, a Answerer, req Request) (outcome dsh.ApprovalOutcome, digest string, echoed bool, err error) {
	defer func() {
		if v := recover(); v != nil {
			outcome, err = "", &PanicError{Value: v}
		}
	}()
	if da, ok := a.(DigestAnswerer); ok {
		d, err := da.AnswerDigest(ctx, req)
		return d.Outcome, d.ArgsDigest, true, err
	}
	outcome, err = a.Answer(ctx, req)
	return outcome, "", false, err
}

// PanicError is the error of an answerer that panicked.
type PanicError struct {
	// Value is the recovered panic value.
	Value any
}

// Error renders the panic value.
func (e *PanicError) Error() string {
	return "panic: " + printable(e.Value)
}

// printable renders v, or "<unprintable panic value>" when even that panics.
func printable(v any) (s string) {
	defer func() {
		if recover() != nil {
			s = "<unprintable panic value>"
		}
	}()
	switch v := v.(type) {
	case error:
		return v.Error()
	case fmt.Stringer:
		return v.String()
	case string:
		return v
	}
	return fmt.Sprint(v)
}
