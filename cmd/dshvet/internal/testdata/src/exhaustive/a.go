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

// A switch marked partial, with a reason, is not reported; the marker goes on the line of
// the switch or the line above.
func partialAbove(d dsh.PreToolDecision) string {
	//dshvet:partial the other decisions keep the call as it is
	switch d.(type) {
	case dsh.PreToolDeny:
		return "deny"
	}
	return ""
}

func partialSameLine(d dsh.PreToolDecision) string {
	switch d.(type) { //dshvet:partial only a denial is logged
	case dsh.PreToolDeny:
		return "deny"
	}
	return ""
}

// A marker must give a reason, mark a switch that misses a variant, and mark a switch.
func partialWithoutReason(d dsh.PreToolDecision) string {
	//dshvet:partial // want `//dshvet:partial needs a reason`
	switch d.(type) {
	case dsh.PreToolDeny:
		return "deny"
	}
	return ""
}

func partialButComplete(r dsh.ToolExecutionResult) string {
	//dshvet:partial both are handled // want `on a type switch that misses no variant: remove the marker`
	switch r.(type) {
	case dsh.ToolSuccess:
		return "ok"
	case dsh.ToolFailure:
		return "failed"
	}
	return ""
}

func partialWithDefault(d dsh.PreToolDecision) string {
	//dshvet:partial the default handles the rest // want `on a type switch with a default: remove the marker`
	switch d.(type) {
	case dsh.PreToolDeny:
		return "deny"
	default:
		return "other"
	}
}

func partialOnNothing(d dsh.PreToolDecision) bool {
	//dshvet:partial not a switch // want `marks no type switch over a union: remove it`
	_, ok := d.(dsh.PreToolDeny)
	return ok
}

// A marker on a switch over an interface that is no union marks nothing.
func partialOverAny(x any) {
	//dshvet:partial not a union // want `marks no type switch over a union: remove it`
	switch x.(type) {
	case dsh.PreToolAllow:
	}
}
