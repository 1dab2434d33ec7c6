// Package dsh is a small stand-in for the generated surface, in its shapes: sealed unions
// marked //sumtype:decl with value-receiver variants, payloads, listener types, next values
// and a Registrar.
package dsh

import "context"

// ToolExecution is a tool call.
type ToolExecution struct {
	Name      string
	Arguments []byte
	Meta      map[string]string
}

// PreToolDecision is a decision union.
//
//sumtype:decl
type PreToolDecision interface {
	isPreToolDecision()
}

type PreToolAllow struct{}
type PreToolDeny struct{ Reason string }
type PreToolAsk struct{ Reason string }

func (PreToolAllow) isPreToolDecision() {}
func (PreToolDeny) isPreToolDecision()  {}
func (PreToolAsk) isPreToolDecision()   {}

// GuardVerdict is a decision union.
//
//sumtype:decl
type GuardVerdict interface{ isGuardVerdict() }

type GuardDeny struct{ Reason string }
type GuardAbstain struct{}

func (GuardDeny) isGuardVerdict()    {}
func (GuardAbstain) isGuardVerdict() {}

// PostToolDecision is a decision union with a shared-field interface.
//
//sumtype:decl
type PostToolDecision interface{ isPostToolDecision() }

type PostToolAccept struct{ AdditionalContexts []string }
type PostToolBlock struct {
	Reason             string
	AdditionalContexts []string
}
type PostToolHalt struct{ Reason string }

func (PostToolAccept) isPostToolDecision() {}
func (PostToolBlock) isPostToolDecision()  {}
func (PostToolHalt) isPostToolDecision()   {}

// PostToolDecisionWithAdditionalContexts is not a union: the variants with contexts.
type PostToolDecisionWithAdditionalContexts interface {
	PostToolDecision
	GetAdditionalContexts() []string
}

func (d PostToolAccept) GetAdditionalContexts() []string { return d.AdditionalContexts }
func (d PostToolBlock) GetAdditionalContexts() []string  { return d.AdditionalContexts }

// ToolExecutionResult is a result union.
//
//sumtype:decl
type ToolExecutionResult interface{ isToolExecutionResult() }

type ToolSuccess struct{ Value any }
type ToolFailure struct{ Error string }

func (ToolSuccess) isToolExecutionResult() {}
func (ToolFailure) isToolExecutionResult() {}

// SessionEventData is an open interface marked as a union.
//
//sumtype:decl
type SessionEventData interface{ SessionEventType() string }

type TurnStart struct{}
type TurnEnd struct{}

func (TurnStart) SessionEventType() string { return "turn/start" }
func (TurnEnd) SessionEventType() string   { return "turn/end" }

// Unmarked is a sealed interface without the marker: not a union for the checker.
type Unmarked interface{ isUnmarked() }

type UnmarkedA struct{}
type UnmarkedB struct{}

func (UnmarkedA) isUnmarked() {}
func (UnmarkedB) isUnmarked() {}

// WaterfallNext runs the rest of a waterfall.
type WaterfallNext[D any] struct {
	fn func(context.Context) (D, error)
}

// Call runs the rest of the chain.
func (n WaterfallNext[D]) Call(ctx context.Context) (D, error) { return n.fn(ctx) }

// WrapperNext runs the rest of a wrapper chain.
type WrapperNext[D any] struct{ fn func(context.Context) D }

// Call runs the rest of the chain.
func (n WrapperNext[D]) Call(ctx context.Context) D { return n.fn(ctx) }

type PreToolPayload struct {
	Exec ToolExecution
	Tags []string
}
type PreToolNext = WaterfallNext[PreToolDecision]
type PreToolListener func(ctx context.Context, p *PreToolPayload, next PreToolNext) (PreToolDecision, error)

const PreToolEventName = "tools/pre-execute"

type PostToolPayload struct {
	Exec               ToolExecution
	AdditionalContexts []string
}
type PostToolNext = WaterfallNext[PostToolDecision]
type PostToolListener func(ctx context.Context, p *PostToolPayload, next PostToolNext) (PostToolDecision, error)

const PostToolEventName = "tools/post-execute"

type GuardPayload struct{ Exec ToolExecution }
type GuardListener func(ctx context.Context, p *GuardPayload) GuardVerdict

const GuardEventName = "tools/guard"

type ExecutePayload struct{ Exec ToolExecution }
type ExecuteNext = WrapperNext[ToolExecutionResult]
type ExecuteListener func(ctx context.Context, p *ExecutePayload, next ExecuteNext) ToolExecutionResult

const ExecuteEventName = "tools/execute"

type ToolResultPayload struct{ Exec ToolExecution }
type ToolResultListener func(ctx context.Context, p *ToolResultPayload)

const ToolResultEventName = "tools/result"

// Registrar registers listeners.
type Registrar struct{}

func (r *Registrar) OnPreTool(fn PreToolListener) (unregister func())       { return func() {} }
func (r *Registrar) OnPostTool(fn PostToolListener) (unregister func())     { return func() {} }
func (r *Registrar) Guard(fn GuardListener) (unregister func())             { return func() {} }
func (r *Registrar) WrapExecute(fn ExecuteListener) (unregister func())     { return func() {} }
func (r *Registrar) OnToolResult(fn ToolResultListener) (unregister func()) { return func() {} }
