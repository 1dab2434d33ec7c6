package tools

import (
	"context"
	"encoding/json"
	"log/slog"
	"sync"
	"unsafe"

	"github.com/dshkit/dsh/generated/dsh"
	"github.com/dshkit/dsh/runtime/approval"
)

// The copies of the sealed call the phases get, one each (see view).
const (
	viewPre = iota
	viewGuard
	viewExecute
	viewBody
	viewPost
	viewFinalize
	viewResult
	// nViews is the number of argument copies a call carves from one allocation: one per
	// phase payload, the body, the finalizer.
	nViews
	// maxArena is the size of the largest arguments whose copies share one allocation;
	// larger ones are copied separately, so that a kept copy does not retain the others.
	maxArena = 2048
)

// call is the state of one execution. It holds the payloads of the phases, so that a call
// costs few allocations.
type call struct {
	rt      *Runtime
	ctx     context.Context // the caller's context: its cancellation is the caller's abort
	exec    dsh.ToolExecution
	agentID string
	def     *tool // the definition visible at creation (nil: unknown); it is immutable
	hidden  bool  // Input.Hidden: the tool is unknown to this call
	halt    *Halt
	rw      *rewriteState // what tools/rewrite-input made of the call; nil: nobody listened
	// approved is the digest of the arguments an allowed-once answer was given for; the
	// body must get exactly those (dispatch checks it).
	approved string
	// allowedOnAsk says the call asked for approval and was allowed (by approval/answer or
	// the approver): RunContext.Approved.
	allowedOnAsk bool

	// survivors are the contexts every failure path keeps (docs/design/SEMANTICS.md#a5-deferred-contexts-survive-every-failure):
	// the body's deferred contexts, or those of a post-execute block that replaced them.
	// They are private and lossless.
	survivors []dsh.UserMessage

	// cand is the candidate result, private: what the last stage made of the call, and
	// while the wrappers run, core dispatch's own result.
	cand outcome

	agentIDs [nViews]string

	pre   dsh.PreToolPayload
	guard dsh.GuardPayload
	exe   dsh.ExecutePayload
	post  dsh.PostToolPayload
	res   dsh.ToolResultPayload

	mu          sync.Mutex // guards the dispatch state below
	sealed      bool       // core dispatch can no longer start a body
	bodyInvoked bool
	hasMinted   bool // core dispatch's own result is set (kept in cand while the wrappers run)
	// arena: the arguments are followed, in their allocation, by room for nViews copies.
	// It and the handle's state (at, finished) are not guarded by mu: they sit here to
	// pack the struct below 1784 bytes (with its malloc header, the 1792-byte class).
	arena    bool
	wrapped  bool           // tools/execute wrappers ran around core dispatch
	at       stage          // the next stage the handle runs
	finished bool           // the handle has the result
	depth    uint8          // Input.depth (fits the padding before body)
	body     sync.WaitGroup // a started body
	rc       RunContext
	handed   resultID // identity of the copy of it handed to the wrappers

	staged Call // the call's handle, returned by Runtime.Start

	// The tail call's needs (tail.go): the caller's context as Start got it (ctx may gain
	// approval marks), the call's turn and step, its tail decision, and its place in a
	// chain of tail calls (0: the model's own call).
	caller     context.Context
	turn, step int
	tail       *dsh.PostToolTail
	tails      uint8
}

// stage is where a step of the pipeline sends the call.
type stage uint8

const (
	toPolicy   stage = iota // run pre-dispatch: the abort check, pre-execute, ask, guards
	toDispatch              // run the tools/execute wrappers around the body
	toPost                  // run post-execute over the candidate
	toFinish                // a final candidate: finalize, publish
)

// newCall creates the call (docs/design/SEMANTICS.md#42-stage-a-creation steps 1-2): reads the input, mints the
// token, resolves the visible definition, which captures its finalizer.
func (rt *Runtime) newCall(ctx context.Context, in Input) *call {
	c := &call{rt: rt, ctx: ctx, caller: ctx, agentID: in.AgentID, depth: in.depth, hidden: in.Hidden,
		turn: in.Turn, step: in.Step, tails: in.tails}
	c.exec = dsh.ToolExecution{
		CallID:     in.CallID,
		Name:       in.Name,
		RootCallID: in.RootCallID,
		Token:      dsh.NewToken(),
		Parent:     in.Parent,
	}
	if in.original != "" {
		original := in.original
		c.exec.OriginalName = &original
	}
	if c.exec.RootCallID == "" {
		c.exec.RootCallID = in.CallID
	}
	if in.AgentID != "" {
		c.exec.AgentID = &c.agentID
	}
	if in.Lineage != nil {
		lineage := *in.Lineage
		c.exec.Lineage = &lineage
	}
	c.def = c.lookup()
	return c
}

// lookup returns the definition of the call's tool visible to it now (nil: unknown, or
// hidden from the call).
func (c *call) lookup() *tool {
	if c.hidden {
		return nil
	}
	return c.rt.tools.lookup(c.agentID, c.exec.Name)
}

// finalizer is the FinalizeContent captured when the call was created, or nil.
func (c *call) finalizer() func(dsh.ToolExecution, dsh.ToolExecutionResult) ([]dsh.ContentBlock, error) {
	if c.def == nil {
		return nil
	}
	return c.def.def.FinalizeContent
}

// materialize snapshots the arguments (B §4.2 step 4) into one allocation that also holds
// the copies the phases will get.
func (c *call) materialize(args json.RawMessage) bool {
	raw, ok := losslessJSON(args)
	if !ok {
		return false
	}
	n := len(raw)
	if n > maxArena {
		c.exec.Arguments = append(json.RawMessage(nil), raw...)
		return true
	}
	buf := make([]byte, n*(nViews+1))
	copy(buf, raw)
	c.exec.Arguments, c.arena = buf[:n:n], true
	return true
}

// view sets *v to copy i of the sealed call (one of the view* constants, each taken
// once), with its own copy of the arguments and of the agent id, so that no phase can
// change what another sees.
func (c *call) view(v *dsh.ToolExecution, i int) {
	*v = c.exec
	if n := len(c.exec.Arguments); n > 0 {
		if c.arena {
			// The arguments' allocation holds them and then nViews copies of them.
			all := unsafe.Slice(unsafe.SliceData(c.exec.Arguments), n*(nViews+1))
			v.Arguments = all[(i+1)*n : (i+2)*n : (i+2)*n]
			copy(v.Arguments, c.exec.Arguments)
		} else {
			v.Arguments = cloneRaw(c.exec.Arguments)
		}
	}
	if c.exec.AgentID != nil {
		c.agentIDs[i] = c.agentID
		v.AgentID = &c.agentIDs[i]
	}
	if c.exec.ModelArguments != nil {
		v.ModelArguments = cloneRaw(c.exec.ModelArguments)
	}
	if c.exec.OriginalName != nil {
		name := *c.exec.OriginalName
		v.OriginalName = &name
	}
}

// nested reports whether the call was dispatched by a composite.
func (c *call) nested() bool { return !c.exec.Parent.IsZero() }

// create completes creation (B §4.2 step 4): the arguments are snapshotted, then
// validated against the input schema. Either failure is final and wins over an abort.
func (c *call) create(in Input) stage {
	if c.unknownAtCreation(in) {
		if !c.materialize(in.Arguments) {
			return c.settle(failureOf(msgArgsNotJSON, nil), toFinish)
		}
		return c.settle(unknownTool(c.rt.unknown(c.agentID, c.exec.Name)), toFinish)
	}
	// dsh: the tool's own check before any listener (Definition.Precheck) is final too.
	if c.def != nil && c.def.def.Precheck != nil && json.Valid(in.Arguments) {
		if err := precheck(c.def.def.Precheck, in.Arguments); err != nil {
			if !c.materialize(in.Arguments) { // unreachable: the arguments are valid JSON
				return c.settle(failureOf(msgArgsNotJSON, nil), toFinish)
			}
			return c.settle(failure(err), toFinish)
		}
	}
	args := c.rewrite(in)
	if c.rw != nil && c.rw.err != nil {
		// docs/design/REWRITE-COMPACTION.md#14-validation-and-failure-fail-closed: a failed rewrite fails the call closed, with the
		// model's arguments: no pre-execute, no dispatch; finalization still runs.
		c.logRewrite()
		if !c.materialize(args) { // unreachable: the model's arguments were lossless
			return c.settle(failureOf(msgArgsNotJSON, nil), toFinish)
		}
		return c.settle(rewriteFailure(c.rw.err), toFinish)
	}
	if !c.materialize(args) {
		return c.settle(failureOf(msgArgsNotJSON, nil), toFinish)
	}
	// dsh: arguments are validated at creation, before any policy; a violation is final
	// like a materialization failure.
	if c.def != nil && c.def.input != nil {
		if v := c.def.input.validate(c.exec.Arguments, ""); v != "" {
			return c.settle(failure(errInvalidArgs(v)), toFinish)
		}
	}
	// dsh: a call nested too deep is final too (see MaxNesting).
	if c.depth > MaxNesting {
		return c.settle(failure(errNestingTooDeep(c.exec.Name)), toFinish)
	}
	// dsh: and so is a tail call past the end of its chain (see MaxTailCalls).
	if c.tails > MaxTailCalls {
		return c.settle(failure(errTailTooDeep(c.exec.Name)), toFinish)
	}
	return toPolicy
}

// precheck runs check on args, a panic becoming its error.
func precheck(check func(json.RawMessage) error, args json.RawMessage) (err error) {
	defer func() {
		if v := recover(); v != nil {
			err = &panicError{value: v}
		}
	}()
	return check(cloneRaw(args))
}

// unknownAtCreation reports whether the call fails as an unknown tool at creation
// (WithUnknownTool): a call the model made, of a tool no registration visible to it has.
func (c *call) unknownAtCreation(in Input) bool {
	return c.rt.unknown != nil && in.Turn > 0 && in.depth == 0 && in.tails == 0 && in.Parent.IsZero() &&
		c.rt.tools.lookup(c.agentID, c.exec.Name) == nil
}

// settle makes o the candidate and returns to.
func (c *call) settle(o outcome, to stage) stage {
	c.cand = o
	return to
}

// policy runs pre-dispatch (B §4.3): a pre-aborted call is final; a denial or a later
// abort goes to post-execute; a failure is final.
func (c *call) policy() stage {
	o, to := c.decide()
	if to != toDispatch {
		c.cand = o
	}
	return to
}

// decide is policy, returning the candidate (none for toDispatch).
func (c *call) decide() (outcome, stage) {
	if c.ctx.Err() != nil {
		return aborted(false), toFinish
	}
	hooks := c.rt.hooks
	// A phase nobody listens to is not run: its payload is not built, and its default
	// (allow, abstain) is the outcome.
	var decision dsh.PreToolDecision = dsh.PreToolAllow{}
	if hooks.Listens(dsh.PreToolEventName) {
		c.view(&c.pre.Exec, viewPre)
		d, err := hooks.RunPreTool(c.ctx, &c.pre, nil)
		if err != nil {
			return c.listenerFailure(err), toFinish
		}
		decision = d
	}
	var (
		reason string
		denied bool
	)
	switch d := decision.(type) {
	case dsh.PreToolAllow:
	case dsh.PreToolDeny:
		reason, denied = d.Reason, true
	case dsh.PreToolHalt:
		reason, denied = d.Reason, true
		c.halt = &Halt{Reason: jsonSafe(d.Reason), Point: HaltPreExecute}
	case dsh.PreToolAsk:
		if o, to, ok := c.ask(d.Reason, &reason, &denied); ok {
			return o, to
		}
	default:
		return failureOf("unreachable: tools/pre-execute returned an unknown decision", nil), toFinish
	}
	// B §4.3 step 5: guards run only for an allow.
	if !denied && hooks.Listens(dsh.GuardEventName) {
		c.view(&c.guard.Exec, viewGuard)
		verdict, err := hooks.RunGuard(c.ctx, &c.guard)
		if err != nil {
			return c.listenerFailure(err), toFinish
		}
		//dshvet:partial only a denial stops the call; an abstention lets the next guard decide
		switch v := verdict.(type) {
		case dsh.GuardDeny:
			reason, denied = v.Reason, true
		}
	}
	if denied {
		return denial(reason), toPost
	}
	// B §4.3 step 6: an allow that settles after cancellation does not dispatch.
	if c.ctx.Err() != nil {
		return aborted(false), toPost
	}
	return outcome{}, toDispatch
}

// ask resolves an ask decision through the approval seam (B §2.10). It either sets the
// denial (reason, denied), or leaves both to allow, or returns a candidate (ok): an
// ABORTED_BEFORE_DISPATCH for post-execute, or a final failure.
func (c *call) ask(reasonPtr *string, reason *string, denied *bool) (outcome, stage, bool) {
	name := quoted(c.exec.Name)
	deny := func(r string) (outcome, stage, bool) {
		*reason, *denied = r, true
		return outcome{}, 0, false
	}
	// approval/answer: a listener may answer before the seam asks anyone (and whether or
	// not one is mounted).
	if o, to, ok, answered := c.answer(reasonPtr, reason, denied); answered {
		return o, to, ok
	}
	if c.rt.approver == nil {
		if reasonPtr != nil && *reasonPtr != "" {
			// The later phases see why: no one could answer (approval.UnansweredOf).
			c.ctx = approval.WithUnanswered(c.ctx, approval.Unanswered{Reason: *reasonPtr})
			return deny(*reasonPtr)
		}
		return deny("permission to use tool " + name + " was requested, but it has not been granted (no one can answer here)")
	}
	if c.exec.AgentID == nil {
		return deny("tool " + name + " requires approval, but the call has no agent to route it through")
	}
	// docs/design/REWRITE-COMPACTION.md#17-approval-binds-to-the-effective-arguments: the approval is bound to the sealed (effective)
	// arguments by their digest.
	digest := ArgsDigest(c.exec.Arguments)
	req := approval.Request{AgentID: c.agentID, ToolName: c.exec.Name, CallID: c.exec.CallID,
		Arguments: cloneRaw(c.exec.Arguments), ModelArguments: cloneRaw(c.exec.ModelArguments), ArgsDigest: digest}
	if reasonPtr != nil {
		req.Reason = *reasonPtr
	}
	if hooks := c.rt.hooks; hooks.Listens(dsh.ApprovalPromptEventName) {
		p := &dsh.ApprovalPromptPayload{Reason: req.ReasonPtr()}
		c.freshView(&p.Exec)
		// Observer failures are contained (logged by the registry) and change nothing.
		_ = hooks.EmitApprovalPrompt(c.ctx, p)
	}
	outcomeOf, echo, err := callApprover(c.ctx, c.rt.approver, req)
	if err != nil {
		c.rt.log.LogAttrs(c.ctx, slog.LevelWarn, "tools: approval failed",
			slog.String("tool", c.exec.Name), slog.String("callId", c.exec.CallID), slog.Any("error", err))
		return failure(err), toFinish, true
	}
	switch outcomeOf {
	case dsh.ApprovalOutcomeAllowedOnce:
		if echo != digest {
			// A stale answer (for other arguments) is a denial.
			return failureOf("approval for tool "+name+" was given for other arguments than the call's (stale argument digest)",
				&dsh.ToolErrorInfo{Name: NameApprovalError, Code: CodeApprovalStale}), toPost, true
		}
		c.approved, c.allowedOnAsk = digest, true
		return outcome{}, 0, false
	case dsh.ApprovalOutcomeRejected:
		return deny("the user rejected tool " + name)
	case dsh.ApprovalOutcomeCancelled:
		if c.ctx.Err() != nil {
			return aborted(false), toPost, true
		}
		return deny("approval for tool " + name + " was cancelled")
	case dsh.ApprovalOutcomeUnavailable:
		return deny("tool " + name + " requires approval, but no approval channel is available")
	}
	return failureOf("unreachable: approval returned the unknown outcome "+quoted(string(outcomeOf)), nil), toFinish, true
}

// answer runs approval/answer (when anyone listens). answered is false when every
// listener passed: the request goes on to the approval seam. Otherwise it either sets the
// denial (reason, denied; an interrupt also halts), or leaves both to allow, or returns a
// final failure (ok).
func (c *call) answer(reasonPtr *string, reason *string, denied *bool) (o outcome, to stage, ok, answered bool) {
	hooks := c.rt.hooks
	if !hooks.Listens(dsh.ApprovalAnswerEventName) {
		return outcome{}, 0, false, false
	}
	p := &dsh.ApprovalAnswerPayload{}
	if reasonPtr != nil && *reasonPtr != "" {
		r := *reasonPtr
		p.Reason = &r
	}
	c.freshView(&p.Exec)
	d, err := hooks.RunApprovalAnswer(c.ctx, p, nil)
	if err != nil {
		return c.listenerFailure(err), toFinish, true, true
	}
	var deny *dsh.ApprovalAnswerDeny
	switch x := d.(type) {
	case dsh.ApprovalAnswerPass:
		return outcome{}, 0, false, false
	case dsh.ApprovalAnswerAllow:
		c.allowedOnAsk = true
		return outcome{}, 0, false, true
	case dsh.ApprovalAnswerDeny:
		deny = &x
	default:
		return failureOf("unreachable: approval/answer returned an unknown decision", nil), toFinish, true, true
	}
	msg := "the approval was denied"
	if deny.Message != nil && *deny.Message != "" {
		msg = *deny.Message
	}
	*reason, *denied = msg, true
	if deny.Interrupt != nil && *deny.Interrupt {
		c.halt = &Halt{Reason: jsonSafe(msg), Point: HaltApprovalAnswer}
	}
	return outcome{}, 0, false, true
}

// freshView sets *v to a copy of the sealed call with its own copy of the arguments and
// of the agent id, for the payloads of the rarely run approval points (view carves the
// common phases' copies from one allocation).
func (c *call) freshView(v *dsh.ToolExecution) {
	*v = c.exec
	if len(c.exec.Arguments) > 0 {
		v.Arguments = cloneRaw(c.exec.Arguments)
	}
	if c.exec.AgentID != nil {
		id := c.agentID
		v.AgentID = &id
	}
}

// callApprover calls the approver (ApproveDigest for a DigestApprover), turning a panic
// into an error. echo is the argument digest the answer was given for: req.ArgsDigest for
// an approver that does not report one.
func callApprover(ctx context.Context, a approval.Approver, req approval.Request) (outcome dsh.ApprovalOutcome, echo string, err error) {
	defer func() {
		if v := recover(); v != nil {
			outcome, err = "", &panicError{value: v}
		}
	}()
	if da, ok := a.(approval.DigestApprover); ok {
		d, err := da.ApproveDigest(ctx, req)
		return d.Outcome, d.ArgsDigest, err
	}
	outcome, err = a.Approve(ctx, req)
	return outcome, req.ArgsDigest, err
}

// listenerFailure is the final failure of a failed listener run; it is logged.
func (c *call) listenerFailure(err error) outcome {
	c.rt.log.LogAttrs(c.ctx, slog.LevelWarn, "tools: listener failed",
		slog.String("tool", c.exec.Name), slog.String("callId", c.exec.CallID), slog.Any("error", err))
	return c.finalFailure(err)
}

// finalFailure is the failure of err with the contexts that survive every failure.
func (c *call) finalFailure(err error) outcome {
	f := failure(err)
	f.contexts = c.survivors
	return f
}
