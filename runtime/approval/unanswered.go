package approval

import "context"

// Unanswered is the denial of an asked call that no one could answer: no Approver was
// mounted, so the tool pipeline denied the call with the ask's reason. It marks the
// context of the call's later phases (tools/post-execute, tools/result), where a hook
// bridge renders such a denial as its engine does.
type Unanswered struct {
	// Reason is the ask's reason: the denial's message.
	Reason string
}

// unansweredKey is the context key of an Unanswered.
type unansweredKey struct{}

// WithUnanswered returns ctx marked with u: the tool pipeline calls it for a call it
// denies because no one could answer its ask.
func WithUnanswered(ctx context.Context, u Unanswered) context.Context {
	return context.WithValue(ctx, unansweredKey{}, u)
}

// UnansweredOf returns the Unanswered ctx is marked with, and false when the call's ask
// was answered, or it had none.
func UnansweredOf(ctx context.Context) (Unanswered, bool) {
	u, ok := ctx.Value(unansweredKey{}).(Unanswered)
	return u, ok
}
