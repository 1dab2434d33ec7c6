package exhaustive

import "github.com/dshkit/dsh/generated/dsh"

func missing(d dsh.PreToolDecision) string {
	switch d.(type) { // want `type switch over dsh.PreToolDecision misses dsh.PreToolAsk and has no default`
	case dsh.PreToolAllow:
		return "allow"
	case dsh.PreToolDeny:
		return "deny"
	}
	return ""
}

func missingTwoBound(d dsh.PreToolDecision) string {
	switch v := d.(type) { // want `misses dsh.PreToolAsk, dsh.PreToolDeny and has no default`
	case dsh.PreToolAllow:
		_ = v
		return "allow"
	}
	return ""
}

// Both forms of a variant cover it: variants have value receivers.
func pointerForms(d dsh.GuardVerdict) string {
	switch d.(type) {
	case *dsh.GuardDeny:
		return "deny"
	case dsh.GuardAbstain:
		return "abstain"
	}
	return ""
}

func withDefault(d dsh.PreToolDecision) string {
	switch d.(type) {
	case dsh.PreToolAllow:
		return "allow"
	default:
		return "other"
	}
}

func complete(r dsh.ToolExecutionResult) string {
	switch r.(type) {
	case dsh.ToolSuccess, nil:
		return "ok"
	case dsh.ToolFailure:
		return "failed"
	}
	return ""
}

// An interface case covers the variants implementing it.
func interfaceCase(d dsh.PostToolDecision) string {
	switch d.(type) {
	case dsh.PostToolDecisionWithAdditionalContexts:
		return "contexts"
	case dsh.PostToolHalt:
		return "halt"
	}
	return ""
}

func interfaceCaseMissing(d dsh.PostToolDecision) string {
	switch d.(type) { // want `misses dsh.PostToolHalt and has no default`
	case dsh.PostToolDecisionWithAdditionalContexts:
		return "contexts"
	}
	return ""
}

// Session event data is marked too.
func sessionData(d dsh.SessionEventData) string {
	switch d.(type) { // want `type switch over dsh.SessionEventData misses dsh.TurnEnd`
	case dsh.TurnStart:
		return "start"
	}
	return ""
}

// An unmarked interface is not checked.
func unmarked(u dsh.Unmarked) string {
	switch u.(type) {
	case dsh.UnmarkedA:
		return "a"
	}
	return ""
}

// A local union, marked the same way, is checked too.
//
//sumtype:decl
type shape interface{ isShape() } // want shape:`union\(circle, square\)`

type circle struct{}
type square struct{}

func (circle) isShape()  {}
func (*square) isShape() {}

func local(s shape) string {
	switch s.(type) { // want `type switch over exhaustive.shape misses exhaustive.square`
	case circle:
		return "circle"
	}
	switch s.(type) {
	case *circle, *square:
		return "both"
	}
	return ""
}

// A switch over any is not a union switch.
func overAny(x any) {
	switch x.(type) {
	case dsh.PreToolAllow:
	}
}
