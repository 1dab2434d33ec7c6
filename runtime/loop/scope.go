package loop

import "context"

// scope says which agent, turn, step and tool call a context belongs to. The agent puts
// it in every context it dispatches under, so that the decision audit (audit.go) and the
// approval recorder can find the session log of the agent a decision concerns.
type scope struct {
	agent  *Agent
	turn   int    // 0 outside a turn
	step   int    // 0 outside a step
	callID string // "" outside a tool call
}

// scopeKey is the context key of a scope.
type scopeKey struct{}

// withScope returns ctx carrying s.
func withScope(ctx context.Context, s scope) context.Context {
	return context.WithValue(ctx, scopeKey{}, s)
}

// scopeOf returns the scope ctx carries.
func scopeOf(ctx context.Context) (scope, bool) {
	if ctx == nil {
		return scope{}, false
	}
	s, ok := ctx.Value(scopeKey{}).(scope)
	return s, ok && s.agent != nil
}

// AgentFromContext returns the agent a context passed to a listener, a tool body or an
// approver belongs to, when the agent dispatched under it.
func AgentFromContext(ctx context.Context) (*Agent, bool) {
	s, ok := scopeOf(ctx)
	return s.agent, ok
}
