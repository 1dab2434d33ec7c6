// Package tools is a stand-in for the tool pipeline: a Definition's Run is a tool body.
package tools

import "context"

// RunContext is what a tool body gets.
type RunContext struct{}

// Definition is a tool.
type Definition struct {
	Name string
	Run  func(ctx context.Context, rc *RunContext) (any, error)
}
