package runner

import (
	"context"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/dshkit/dsh/bridges/prompts"
	"github.com/dshkit/dsh/generated/dsh"
)

// Prompts says what a session adds to the model's input besides the prompt, as its
// dialect's engine does (the dialect's table: spec/bridges).
type Prompts struct {
	// SystemPrompt, when set, replaces dsh's system prompt (claude -p --system-prompt).
	SystemPrompt string
	// AppendSystemPrompt is added to the end of the system prompt after a blank line
	// (claude -p --append-system-prompt).
	AppendSystemPrompt string
	// NoInstructions reads no instruction files (CLAUDE.md, AGENTS.md, GEMINI.md).
	NoInstructions bool
	// NoCommands expands no slash commands.
	NoCommands bool
	// Home is the user's home directory, for the user's instruction files and commands;
	// "": $HOME (os.UserHomeDir).
	Home string
}

// home is the user's home directory of p ("" when it cannot be found).
func (p Prompts) home() string {
	if p.Home != "" {
		return p.Home
	}
	h, _ := os.UserHomeDir()
	return h
}

// system is the system prompt of a session in workspace.
func (p Prompts) system(workspace string) string {
	s := fmt.Sprintf("You are a coding agent working in %s. Use the tools to act; be brief.", workspace)
	if p.SystemPrompt != "" {
		s = p.SystemPrompt
	}
	if p.AppendSystemPrompt != "" {
		s += "\n\n" + p.AppendSystemPrompt
	}
	return s
}

// instructionFiles are the files read as agent/instructions-loaded announces them: the
// scope is the table's kind in lower case (User → user).
func instructionFiles(fs []prompts.File) []dsh.InstructionFile {
	out := make([]dsh.InstructionFile, len(fs))
	for i, f := range fs {
		out[i] = dsh.InstructionFile{Path: f.Path, Scope: dsh.InstructionScope(strings.ToLower(f.Kind)),
			Reason: dsh.InstructionReason(f.LoadReason())}
		if f.Parent != "" {
			p := f.Parent
			out[i].Parent = &p
		}
	}
	return out
}

// attachPrompts registers what reads the dialect's instruction files (injected when a
// new session starts, before its first prompt) and what expands its slash commands (at
// agent/pre-step, after the prompt's other listeners, the UserPromptSubmit hooks among
// them, saw the prompt as typed). Register it before the hook bridge.
func (s *Session) attachPrompts() error {
	p, t := s.cfg.Prompts, s.cfg.Hooks.desc().Table
	if t.Instructions != nil && !p.NoInstructions {
		loaded, err := prompts.LoadInstructions(t.Instructions, s.cfg.Workspace, p.home())
		if err != nil {
			return err
		}
		for _, n := range loaded.Notes {
			s.note(n)
		}
		s.Instructions = loaded.Files
		if text := prompts.Render(t.Instructions, loaded.Files, s.cfg.Workspace); text != "" {
			plugin := t.Plugin
			s.Hooks.Plugin("instructions").OnSessionStart(func(ctx context.Context, sp *dsh.SessionStartPayload) error {
				if sp.Source != dsh.SessionStartSourceStartup || sp.Agent == nil {
					return nil
				}
				return sp.Agent.Inject(ctx, dsh.UserMessage{ID: fmt.Sprintf("instructions-%d", time.Now().UnixNano()),
					Role: dsh.UserMessageRoleUser, Content: []dsh.ContentBlock{dsh.TextBlock{Text: text}},
					Source: dsh.SourcePlugin{Plugin: plugin, Form: dsh.PluginFormInstructions}})
			})
		}
	}
	if t.Commands != nil && !p.NoCommands {
		places := prompts.Places{Workspace: s.cfg.Hooks.project(s.cfg.Workspace), Home: p.home(), Trusted: s.cfg.Hooks.trusted()}
		s.Hooks.Plugin("commands").OnPreStep(func(ctx context.Context, sp *dsh.PreStepPayload, next dsh.PreStepNext) (dsh.PreStepDecision, error) {
			d, err := next.Call(ctx)
			enter, ok := d.(dsh.PreStepEnter)
			if err != nil || !ok {
				return d, err
			}
			out := make([]dsh.UserMessage, len(enter.Messages))
			copy(out, enter.Messages)
			for i, m := range out {
				text, ok := soleText(m)
				if !ok {
					continue
				}
				x, ok, err := prompts.Expand(t.Commands, text, places)
				if err != nil {
					return nil, err
				}
				if !ok {
					continue
				}
				blocks := make([]dsh.ContentBlock, len(x.Texts))
				for j, tx := range x.Texts {
					blocks[j] = dsh.TextBlock{Text: tx}
				}
				m.Content = blocks
				out[i] = m
			}
			return dsh.PreStepEnter{Messages: out}, nil
		})
	}
	return nil
}

// soleText is the text of a user-sourced message of one text block.
func soleText(m dsh.UserMessage) (string, bool) {
	if m.Source == nil || m.Source.Kind() != dsh.SourceUserKind || len(m.Content) != 1 {
		return "", false
	}
	t, ok := m.Content[0].(dsh.TextBlock)
	return t.Text, ok
}
