package tools

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"log/slog"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/dshkit/dsh/generated/dsh"
	"github.com/dshkit/dsh/internal/jsonmerge"
)

// ConflictPolicy says what happens when two listeners of the tools/rewrite-input fold
// rewrite the same top-level field of a call's arguments (docs/design/REWRITE-COMPACTION.md#13-composing-several-rewriters).
type ConflictPolicy string

const (
	// ConflictOrdered lets the later rewrite win; the chain records both (the default).
	ConflictOrdered ConflictPolicy = "ordered"
	// ConflictFail fails the call closed with REWRITE_CONFLICT, naming the field.
	ConflictFail ConflictPolicy = "fail"
)

// DefaultRewriteDeadline bounds each tools/rewrite-input listener unless
// WithRewriteDeadline says otherwise: a listener still running then fails the call closed
// (REWRITE_FAILED) and is abandoned a short grace later.
const DefaultRewriteDeadline = 30 * time.Second

// WithRewriteConflict sets the conflict policy of the tools/rewrite-input fold (default
// ConflictOrdered). Another value is ignored.
func WithRewriteConflict(p ConflictPolicy) Option {
	return func(rt *Runtime) {
		if p == ConflictOrdered || p == ConflictFail {
			rt.conflict = p
		}
	}
}

// WithRewriteDeadline bounds each tools/rewrite-input listener by d (default
// DefaultRewriteDeadline). d <= 0 runs the listeners unbounded on the caller's goroutine,
// where one that never returns wedges its call.
func WithRewriteDeadline(d time.Duration) Option {
	return func(rt *Runtime) { rt.rewriteBound = d }
}

// Codes and name of the failures of the tools/rewrite-input phase and of a stale approval.
const (
	// NameRewriteError is the error name of a REWRITE_* failure.
	NameRewriteError = "RewriteError"
	// CodeRewriteInvalid: a rewrite that is not lossless JSON or fails the tool's input
	// schema (a missing required field, an unknown field on a closed schema).
	CodeRewriteInvalid = string(dsh.RewriteErrorCodeREWRITEINVALID)
	// CodeRewriteConflict: two rewrites of one top-level field under ConflictFail.
	CodeRewriteConflict = string(dsh.RewriteErrorCodeREWRITECONFLICT)
	// CodeRewriteFailed: a rewriter returned an error, panicked or overran its deadline.
	CodeRewriteFailed = string(dsh.RewriteErrorCodeREWRITEFAILED)
	// NameApprovalError is the error name of an APPROVAL_STALE denial.
	NameApprovalError = "ApprovalError"
	// CodeApprovalStale: an allowed-once answer echoed the digest of other arguments than
	// the sealed call's; the call is denied.
	CodeApprovalStale = "APPROVAL_STALE"
)

// noticeValueMax bounds the JSON text of one value in a rewrite notice, in bytes.
const noticeValueMax = 200

// rewriteState is what the tools/rewrite-input phase made of a call that has listeners.
type rewriteState struct {
	model    json.RawMessage // the model's arguments, lossless (Raw: the raw text as a JSON string)
	modelRaw bool
	changed  bool            // the effective arguments differ from the model's
	args     json.RawMessage // the effective arguments, canonical (when changed)
	chain    []dsh.RewriteStep
	notice   bool // some change is disclosed
	by       []string
	err      *dsh.RewriteError

	// The first listener's payload and the fold, allocated with the state.
	p       dsh.RewriteInputPayload
	f       fold
	agentID string
	yes     bool // true, for the payload's raw flags
}

// Rewritten is what the tools/rewrite-input phase made of a call, for its tool/call record.
type Rewritten struct {
	// Changed is set when the effective arguments differ from the model's; Arguments then
	// holds them as canonical JSON, for tool/call.arguments (the model's raw string goes to
	// tool/call.modelArguments).
	Changed bool
	// Arguments is the effective arguments as canonical JSON when Changed; empty otherwise.
	Arguments string
	// Rewrite is the chain, for tool/call.rewrite; nil when every listener kept the input.
	Rewrite *dsh.ToolCallRewrite
	// Error is the phase's failure, for tool/call.rewriteError; the call then failed
	// closed with the model's arguments.
	Error *dsh.RewriteError
	// Notice is the model-facing notice, for tool/result.rewriteNotice; nil when nothing
	// changed or every change was silent.
	Notice *dsh.RewriteNotice
}

// rewrite runs the tools/rewrite-input phase of the call (docs/design/REWRITE-COMPACTION.md#11-placement-and-ordering to docs/design/REWRITE-COMPACTION.md#14-validation-and-failure-fail-closed)
// and returns the arguments creation goes on with. Nobody listening, a cancelled context
// or arguments that are not lossless JSON leave the arguments as they are. A failure sets
// c.rw.err (and returns the model's arguments); a cancellation while a listener runs
// leaves no partial rewrite and is seen by the abort check of pre-dispatch.
func (c *call) rewrite(in Input) json.RawMessage {
	hooks := c.rt.hooks
	if !hooks.Listens(dsh.RewriteInputEventName) || c.ctx.Err() != nil {
		return in.Arguments
	}
	raw, ok := losslessJSON(in.Arguments)
	if !ok {
		return in.Arguments // the materialization failure is final, as without a rewriter
	}
	// One allocation for the state, the payload and the fold; one for the model's
	// arguments and the payload's two copies of them.
	rw := &rewriteState{modelRaw: isRaw(in.RawArguments, raw), agentID: c.agentID, yes: true}
	n := len(raw)
	buf := make([]byte, 3*n)
	copy(buf, raw)
	model := json.RawMessage(buf[:n:n])
	rw.model = model
	c.rw = rw
	p := &rw.p
	*p = dsh.RewriteInputPayload{CallID: c.exec.CallID, Name: c.exec.Name, Turn: in.Turn, Step: in.Step, Parent: c.exec.Parent,
		Input: buf[n : 2*n : 2*n], ModelInput: buf[2*n : 3*n : 3*n]}
	copy(p.Input, raw)
	copy(p.ModelInput, raw)
	if rw.modelRaw {
		p.InputRaw, p.ModelRaw = &rw.yes, &rw.yes
	}
	if c.def != nil && len(c.def.def.InputSchema) > 0 {
		p.Schema = cloneRaw(c.def.def.InputSchema)
	}
	if c.exec.AgentID != nil {
		p.AgentID = &rw.agentID
	}
	if c.exec.Lineage != nil {
		lineage := *c.exec.Lineage
		p.Lineage = &lineage
	}
	if c.exec.OriginalName != nil {
		name := *c.exec.OriginalName
		p.OriginalName = &name
	}
	f := &rw.f
	*f = fold{c: c, rw: rw, cur: model, curRaw: rw.modelRaw}
	// An abandoned (overrunning) listener may still read p: it is never written again.
	err := hooks.RunRewriteInput(c.ctx, p, c.rt.rewriteBound, f.apply)
	switch {
	case c.ctx.Err() != nil:
		c.rw = nil // no partial rewrite: the call is aborted with the model's arguments
		return in.Arguments
	case err != nil:
		rw.fail(err)
		return model
	}
	if canonicalEqual(f.cur, model) {
		return model
	}
	args, err := canonicalJSON(f.cur)
	if err != nil { // unreachable: f.cur is lossless
		rw.err = &dsh.RewriteError{Code: dsh.RewriteErrorCodeREWRITEFAILED, Message: "tools/rewrite-input: " + err.Error()}
		return model
	}
	last := rw.by[len(rw.by)-1]
	if c.def != nil && c.def.input != nil {
		if v := c.def.input.validate(args, ""); v != "" {
			rw.err = &dsh.RewriteError{By: &last, Code: dsh.RewriteErrorCodeREWRITEINVALID,
				Message: "tool " + quoted(c.exec.Name) + ": the arguments rewritten by " + last + " are invalid: " + v}
			return model
		}
	}
	rw.changed, rw.args = true, args
	c.exec.ModelArguments = model
	return args
}

// fail records the failure err of the fold: a *rewriteError of apply, or a listener's.
func (rw *rewriteState) fail(err error) {
	var re *rewriteError
	if errors.As(err, &re) {
		rw.err = &re.e
		return
	}
	msg, _ := describe(err)
	by := ""
	var le *dsh.ListenerError
	if errors.As(err, &le) {
		by = le.Listener
		if errors.Is(err, dsh.ErrListenerOverrun) {
			msg = "overran its deadline"
		}
	}
	e := &dsh.RewriteError{Code: dsh.RewriteErrorCodeREWRITEFAILED, Message: "tools/rewrite-input listener " + by + " failed: " + jsonSafe(msg)}
	if by != "" {
		e.By = &by
	}
	rw.err = e
}

// rewriteError is a failure apply decides (invalid or conflicting rewrite).
type rewriteError struct{ e dsh.RewriteError }

func (e *rewriteError) Error() string { return e.e.Message }

// errRewrite is the failure code of the listener by, with the message.
func errRewrite(by string, code dsh.RewriteErrorCode, message string) error {
	return &rewriteError{dsh.RewriteError{By: &by, Code: code, Message: message}}
}

// fold is the state of one run of the tools/rewrite-input fold.
type fold struct {
	c      *call
	rw     *rewriteState
	cur    json.RawMessage // the current effective value, lossless
	curRaw bool
	fields map[string]string // ConflictFail: the top-level fields changed so far, by whom
}

// apply applies one listener's decision: the next listener gets the payload it returns.
func (f *fold) apply(_ context.Context, by string, d dsh.RewriteDecision) (*dsh.RewriteInputPayload, error) {
	var (
		next       json.RawMessage
		kind       dsh.RewriteStepKind
		reason     *string
		disclosure dsh.RewriteDisclosure
	)
	invalid := func(what string) error {
		return errRewrite(by, dsh.RewriteErrorCodeREWRITEINVALID, "tools/rewrite-input listener "+by+" returned "+what+" that is not lossless JSON")
	}
	switch v := d.(type) {
	case dsh.RewriteKeep:
		return nil, nil
	case dsh.RewriteReplace:
		snap, err := snapshotJSON(v.Args)
		if err != nil {
			return nil, invalid("arguments")
		}
		next, kind, reason, disclosure = snap, dsh.RewriteStepKindReplace, v.Reason, v.Disclosure
	case dsh.RewriteMerge:
		patch, err := snapshotJSON(v.Patch)
		if err != nil {
			return nil, invalid("a merge patch")
		}
		merged, err := mergePatchJSON(f.cur, f.curRaw, patch)
		if err != nil {
			return nil, invalid("a merge patch")
		}
		next, kind, reason, disclosure = merged, dsh.RewriteStepKindMerge, v.Reason, v.Disclosure
	default:
		return nil, errRewrite(by, dsh.RewriteErrorCodeREWRITEFAILED, "tools/rewrite-input listener "+by+" returned an unknown decision")
	}
	canon, err := canonicalJSON(next)
	if err != nil {
		return nil, invalid("arguments")
	}
	step := dsh.RewriteStep{By: by, Kind: kind, Digest: digestOf(canon)}
	if reason != nil {
		r := jsonSafe(*reason)
		step.Reason = &r
	}
	if canonicalEqual(next, f.cur) {
		step.Kind = dsh.RewriteStepKindNoop
		f.rw.chain = append(f.rw.chain, step)
		return nil, nil
	}
	if f.c.rt.conflict == ConflictFail {
		if f.fields == nil {
			f.fields = map[string]string{}
		}
		for _, name := range changedFields(f.cur, next) {
			if other, ok := f.fields[name]; ok && other != by {
				return nil, errRewrite(by, dsh.RewriteErrorCodeREWRITECONFLICT,
					"tools/rewrite-input listeners "+other+" and "+by+" both rewrote "+strconv.Quote(name))
			}
			f.fields[name] = by
		}
	}
	f.rw.chain = append(f.rw.chain, step)
	f.rw.by = append(f.rw.by, by)
	if disclosure != dsh.RewriteDisclosureSilent {
		f.rw.notice = true
	}
	f.cur, f.curRaw = next, false
	base := &f.rw.p
	p := &dsh.RewriteInputPayload{CallID: base.CallID, Name: base.Name, Turn: base.Turn, Step: base.Step, Parent: base.Parent,
		Input: cloneRaw(next), ModelInput: cloneRaw(f.rw.model), Schema: cloneRaw(base.Schema)}
	if f.rw.modelRaw {
		p.ModelRaw = newTrue()
	}
	if base.AgentID != nil {
		id := f.rw.agentID
		p.AgentID = &id
	}
	if base.Lineage != nil {
		lineage := *base.Lineage
		p.Lineage = &lineage
	}
	if base.OriginalName != nil {
		name := *base.OriginalName
		p.OriginalName = &name
	}
	return p, nil
}

// rewritten returns the record of the phase (the zero Rewritten when nobody listened).
func (c *call) rewritten() Rewritten {
	rw := c.rw
	if rw == nil {
		return Rewritten{}
	}
	out := Rewritten{Error: rw.err}
	if len(rw.chain) > 0 && rw.err == nil {
		disc := dsh.RewriteDisclosureSilent
		if rw.notice {
			disc = dsh.RewriteDisclosureNotice
		}
		out.Rewrite = &dsh.ToolCallRewrite{Chain: slices.Clone(rw.chain), Disclosure: disc}
	}
	if rw.changed {
		out.Changed, out.Arguments = true, string(rw.args)
		if rw.notice {
			out.Notice = noticeOf(rw)
		}
	}
	return out
}

// isRaw reports whether the model's raw argument string was not valid JSON, so that
// ModelArguments made the JSON string model of it.
func isRaw(raw string, model json.RawMessage) bool {
	if raw == "" || len(model) == 0 || model[0] != '"' {
		return false
	}
	_, err := snapshotJSON([]byte(raw))
	return err != nil
}

// canonicalJSON is the canonical form of lossless JSON: object keys sorted, no
// insignificant space, numbers as written, strings without HTML escaping.
func canonicalJSON(data json.RawMessage) (json.RawMessage, error) {
	v, err := decodeJSON(data)
	if err != nil {
		return nil, err
	}
	return encodeCanonical(v)
}

func encodeCanonical(v any) (json.RawMessage, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// canonicalEqual reports whether two lossless JSON values have the same canonical form.
func canonicalEqual(a, b json.RawMessage) bool {
	if bytes.Equal(a, b) {
		return true
	}
	ca, err1 := canonicalJSON(a)
	cb, err2 := canonicalJSON(b)
	return err1 == nil && err2 == nil && bytes.Equal(ca, cb)
}

// ArgsDigest is the digest the approval seam binds an answer to: "sha256:" and the hex
// SHA-256 of the canonical JSON of args (keys sorted, no insignificant space). It is ""
// for arguments that are not valid JSON.
func ArgsDigest(args json.RawMessage) string {
	canon, err := canonicalJSON(args)
	if err != nil {
		return ""
	}
	return digestOf(canon)
}

func digestOf(canon []byte) string {
	sum := sha256.Sum256(canon)
	return "sha256:" + hex.EncodeToString(sum[:])
}

// mergePatchJSON applies the JSON merge patch (RFC 7396) patch to target; Raw target text
// counts as no object.
func mergePatchJSON(target json.RawMessage, raw bool, patch json.RawMessage) (json.RawMessage, error) {
	p, err := decodeJSON(patch)
	if err != nil {
		return nil, err
	}
	var t any
	if !raw {
		if t, err = decodeJSON(target); err != nil {
			return nil, err
		}
	}
	return encodeCanonical(jsonmerge.Apply(t, p))
}

// wholeValue is the field name a conflict or notice uses for arguments that are not an
// object.
const wholeValue = "(arguments)"

// changedFields lists the top-level fields whose values differ between two lossless
// values, sorted; wholeValue when either is not an object.
func changedFields(a, b json.RawMessage) []string {
	am, aok := objectOf(a)
	bm, bok := objectOf(b)
	if !aok || !bok {
		return []string{wholeValue}
	}
	var out []string
	for k, v := range bm {
		if w, ok := am[k]; !ok || !canonicalEqual(v, w) {
			out = append(out, k)
		}
	}
	for k := range am {
		if _, ok := bm[k]; !ok {
			out = append(out, k)
		}
	}
	sort.Strings(out)
	return out
}

func objectOf(data json.RawMessage) (map[string]json.RawMessage, bool) {
	if len(data) == 0 || data[0] != '{' {
		return nil, false
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(data, &m) != nil {
		return nil, false
	}
	return m, true
}

// noticeOf is the model-facing notice of a disclosed change: the listeners that changed
// the value and the changed top-level fields with bounded values.
func noticeOf(rw *rewriteState) *dsh.RewriteNotice {
	n := &dsh.RewriteNotice{By: slices.Clone(rw.by), Fields: []dsh.RewriteNoticeField{}}
	model := rw.model
	if rw.modelRaw {
		model = nil
	}
	_, aok := objectOf(model)
	bm, bok := objectOf(rw.args)
	if !aok || !bok {
		v := bounded(string(rw.args))
		n.Value = &v
		return n
	}
	for _, name := range changedFields(model, rw.args) {
		f := dsh.RewriteNoticeField{Name: name}
		if v, ok := bm[name]; ok {
			canon, err := canonicalJSON(v)
			if err != nil {
				canon = v
			}
			s := bounded(string(canon))
			f.Value = &s
		}
		n.Fields = append(n.Fields, f)
	}
	return n
}

// bounded cuts s to at most noticeValueMax bytes on a rune boundary, marking a cut "…".
func bounded(s string) string {
	if len(s) <= noticeValueMax {
		return s
	}
	cut := noticeValueMax
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

// RewriteNoticeText renders a rewrite notice as the text the model sees first in the
// call's tool result, e.g. `[dsh] The arguments of this call were rewritten by p before it
// ran: "command" = "( cd w && make )"; "env" removed.`
func RewriteNoticeText(n dsh.RewriteNotice) string {
	var b strings.Builder
	b.WriteString("[dsh] The arguments of this call were rewritten by ")
	b.WriteString(strings.Join(n.By, ", "))
	b.WriteString(" before it ran")
	switch {
	case n.Value != nil:
		b.WriteString(": the arguments are now ")
		b.WriteString(*n.Value)
	case len(n.Fields) > 0:
		b.WriteString(": ")
		for i, f := range n.Fields {
			if i > 0 {
				b.WriteString("; ")
			}
			b.WriteString(strconv.Quote(f.Name))
			if f.Value != nil {
				b.WriteString(" = ")
				b.WriteString(*f.Value)
			} else {
				b.WriteString(" removed")
			}
		}
	}
	b.WriteString(".")
	return b.String()
}

// rewriteFailure is the final failure of a failed rewrite phase.
func rewriteFailure(e *dsh.RewriteError) outcome {
	return failureOf(e.Message, &dsh.ToolErrorInfo{Name: NameRewriteError, Code: string(e.Code)})
}

// logRewrite logs a failed rewrite phase.
func (c *call) logRewrite() {
	if c.rw != nil && c.rw.err != nil {
		c.rt.log.LogAttrs(c.ctx, slog.LevelWarn, "tools: rewrite failed",
			slog.String("tool", c.exec.Name), slog.String("callId", c.exec.CallID),
			slog.String("code", string(c.rw.err.Code)), slog.String("error", c.rw.err.Message))
	}
}
