// Package builtin holds dsh's built-in tools, with Claude Code's tool names and input
// shapes so that hook scripts written for Claude Code (which read tool_input.command or
// tool_input.file_path) work unchanged:
//
//	Bash{command, description?, timeout?}        runs a command in the workspace
//	Read{file_path, offset?, limit?}             reads a text file, numbered like cat -n
//	Write{file_path, content}                    writes a file
//	Edit{file_path, old_string, new_string, replace_all?}  replaces text in a file
//
// Their values have Claude Code's shapes too, the ones its PostToolUse hooks read as
// tool_response: Read {type: "text", file: {filePath, content, numLines, startLine,
// totalLines}}, Write {type: "create"|"update", filePath, content, structuredPatch,
// originalFile, userModified}, Edit {filePath, oldString, newString, originalFile,
// structuredPatch, userModified, replaceAll}; Bash's is {stdout, stderr, exitCode,
// outputTruncated?, wallTime} (Claude Code's bridge sends its own Bash shape from it).
// How the model reads them is Options.Style: dsh's own words, Claude Code's or Codex's;
// under StyleGemini the tools are Gemini CLI 0.61.0's, from its recorded toolset
// (spec/toolsets/gemini.json, see [Toolset]): run_shell_command, read_file, write_file and
// replace (these four tools under its names and inputs), and its own glob, grep_search,
// list_directory, web_fetch, write_todos and update_topic, whose values are
// {llmContent, returnDisplay} as the engine's AfterTool hooks see them. glob,
// grep_search and list_directory read beneath a workspace directory only; web_fetch
// refuses loopback, private and local hosts, by name and at every dial.
//
// Under StyleClaudeCode the tools are Claude Code 2.1.328's as its recorded toolset
// (spec/toolsets/claude-code.json, see [Toolset]) lists them, with the engine's names,
// descriptions and schemas: Bash, Read, Write and Edit as above, and its own tools
// TaskCreate, TaskGet, TaskList and TaskUpdate (the session's task list, in memory),
// NotebookEdit (one cell of a .ipynb file in the workspace) and WebFetch (one http or https
// URL on a public address; the page's text, not a model's answer to the prompt). The rows
// the engine offers that dsh does not (Agent, Skill, …) say why. ToolSearch finds the tools
// the toolset defers for the model (and the MCP servers' tools), which the requests declare
// only once a search loaded them (tools.LoadDeferred; see [ToolSearch]). An input of
// the engine's schemas that dsh does not honour fails the call before anything runs
// (CodeUnsupported).
//
// Read, Write and Edit are confined to the workspace: a relative path is taken under it,
// a path that resolves (symlinks included) outside it is an error result with code
// PATH_OUTSIDE_WORKSPACE, and the file is then opened through an [os.Root] on the
// workspace, which resolves every component beneath it at the moment of use, so a
// symlink swapped in after the check cannot lead outside either. They open only regular
// files: a FIFO, device, socket or directory is an error result with code
// NOT_REGULAR_FILE (a FIFO never blocks them). Read streams the file, keeping only the
// lines asked for, under Options.ReadMaxBytes and Options.ReadMaxLineLength.
//
// Under StyleCodex the tools are Codex's own, from spec/toolsets/codex.json (recorded from
// the engine, read by one generic path: [Toolset]):
//
//	exec_command{cmd, workdir?, shell?, login?, tty?, yield_time_ms?, ...}  runs a command
//	write_stdin{session_id, chars?, yield_time_ms?}  writes to a running command, polls it
//
// exec_command runs cmd with a shell (the call's, else the user's login shell from
// /etc/passwd, as Codex; a login shell only when login is true: Codex runs it in its
// snapshot of the login shell's environment) in the workspace or workdir, confined
// as Bash is, its stdout and stderr merged in order. A command still running after
// yield_time_ms is left in a session (an id from 1000 to 99999, as Codex's) that
// write_stdin continues: it writes chars to the command's stdin, which only a command run
// with tty has (a pipe: the command sees no terminal and nothing is echoed), then waits
// for the command to end or yield_time_ms to pass. A session's command is killed after
// Options.MaxBashTimeout. Their value is {stdout, exitCode?, sessionId?, wallTime} (and, for
// a write_stdin that saw the command end, the exec_command's command and callId), their
// failures read in Codex's words ("write_stdin failed: Unknown process id N").
//
// Bash runs in the workspace, in its own process group, with a timeout and a cap on
// captured output. With Options.Sandbox it runs confined (runtime/sandbox): under
// read-only or workspace-write it writes only where the mode lets it and has no network
// unless the policy allows it, and what the sandbox refuses reaches the model as the
// shell's own error ("Permission denied", "Read-only file system") in the command's
// output. Without a sandbox, or under danger-full-access, it runs with the user's rights
// and may read and write anything the user can.
package builtin

import (
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/dshkit/dsh/runtime/sandbox"
	"github.com/dshkit/dsh/runtime/tools"
)

// Error codes of the built-in tools' structured failures.
const (
	CodeOutsideWorkspace = "PATH_OUTSIDE_WORKSPACE"
	CodeNotFound         = "FILE_NOT_FOUND"
	CodeEditNoMatch      = "EDIT_NO_MATCH"
	CodeEditAmbiguous    = "EDIT_AMBIGUOUS"
	CodeBashTimeout      = "BASH_TIMEOUT"
	CodeBadInput         = "BAD_INPUT"
	// CodeNotRegular is the failure of Read, Write or Edit on a path that is not a
	// regular file (a FIFO, device, socket or directory).
	CodeNotRegular = "NOT_REGULAR_FILE"
	// CodeFileTooLarge is the failure of a Read over Options.ReadMaxBytes: a whole file
	// larger than it read without offset or limit, or a line range whose text passes it.
	CodeFileTooLarge = "FILE_TOO_LARGE"
	// CodeBashExit is the failure of a command that exited non-zero under StyleClaudeCode
	// (Claude Code's Bash fails then); its message is "Exit code N" and the output.
	CodeBashExit = "BASH_EXIT"
	// CodeWebFetchSkipped is the failure of the Gemini style's web_fetch when every URL
	// of its prompt names a host it may not reach (loopback, private, local).
	CodeWebFetchSkipped = "WEB_FETCH_PROCESSING_ERROR"
	// CodeWebFetchFailed is the failure of the Gemini style's web_fetch when no URL of
	// its prompt could be fetched.
	CodeWebFetchFailed = "WEB_FETCH_FALLBACK_FAILED"
)

// Style is how the tools word their results for the model, and whether a command that
// exits non-zero fails the call. The values are the same in every style.
type Style string

const (
	// StyleDSH is dsh's own wording (the zero value): Bash succeeds whatever the exit
	// code, with its output and then "[exit code N]" when N is not 0; Read numbers lines
	// like cat -n; Write and Edit say what they did ("wrote N bytes to PATH", "replaced N
	// occurrence(s) in PATH").
	StyleDSH Style = ""
	// StyleClaudeCode is Claude Code's (checked against the engine by the differential
	// suite): a command that exits non-zero fails the call, the model reading "Exit code
	// N" and the output, as an error (so tools/post-execute sees a failure: PostToolUse
	// does not run; PostToolUseFailure would); an empty output reads "(Bash completed
	// with no output)"; Read numbers lines "N\tline"; Write says "File created
	// successfully at: PATH" or "The file PATH has been updated successfully.", Edit "The
	// file PATH has been updated successfully.", both with the engine's "(file state is
	// current in your context — no need to Read it back)".
	StyleClaudeCode Style = "claude-code"
	// StyleCodex is Codex's: the tools are Codex's own, as spec/toolsets/codex.json records
	// them (exec_command and write_stdin; see [Definitions]), and their output has Codex's
	// header (Chunk ID, Wall time, "Process exited with code N" or "Process running with
	// session ID N", Original token count) then "Output:" and the output; a non-zero exit
	// does not fail the call.
	StyleCodex Style = "codex"
	// StyleGemini is Gemini CLI's: the tools are named run_shell_command, read_file,
	// write_file and replace, take Gemini CLI's inputs ({command, description?,
	// dir_path?}, {file_path, start_line?, end_line?}, {file_path, content}, {file_path,
	// instruction, old_string, new_string, allow_multiple?}) and word their results as it
	// does: the shell's output, exit code (not a failure) and process group inside
	// <untrusted_context>, a whole file's text as it is and a range after a note of the
	// lines shown, "Successfully created and wrote to new file: PATH. Here is the updated
	// code:" and the content, "Successfully modified file: PATH (N replacements). …", and
	// failures in its words without "Error: " ("File not found: PATH"). The values are
	// the other styles' (Bash's with its process group, PGID). The style's toolset
	// (spec/toolsets/gemini.json) adds Gemini CLI's glob, grep_search, list_directory,
	// web_fetch, write_todos and update_topic, with the engine's descriptions and schemas
	// for all ten.
	StyleGemini Style = "gemini"
)

// Options configures the built-in tools.
type Options struct {
	// Agent is the agent tool of a toolset row whose impl is "agent" (runtime/subagent's
	// Runner.Definition, for a host that runs subagents); its name, description and schema
	// are the row's. Without a Run the row is not offered.
	Agent tools.Definition
	// Agents are the agent functions of the rows whose impl is one of Codex's
	// multi_agent_v1 functions ("codex.spawn_agent", …: runtime/subagent's
	// Runner.CodexTools), by function name; a row whose function is missing is not offered.
	Agents map[string]tools.Definition
	// AgentRoles are the agent roles of the session's configuration (Codex's [agents.NAME]
	// tables), which the spawning tool's schema lists (ToolRow.Roles).
	AgentRoles []AgentRole
	// MCPResources, when set, are the session's MCP servers, which Codex's resource
	// tools read (impls "codex.list_mcp_resources", …); without it they are not offered,
	// as Codex offers them only with MCP servers.
	MCPResources MCPResources
	// Workspace is the directory every path is confined to and Bash runs in. Required.
	Workspace string
	// BashTimeout is Bash's default timeout (default 2 minutes); a call's timeout (in
	// milliseconds, as in Claude Code) may lower or raise it up to MaxBashTimeout.
	BashTimeout time.Duration
	// MaxBashTimeout caps a call's timeout (default 10 minutes).
	MaxBashTimeout time.Duration
	// MaxOutput caps the bytes of stdout and of stderr Bash keeps (default 30000 each).
	MaxOutput int
	// Env is Bash's environment (default: the process's).
	Env []string
	// Style is how the tools word their results for the model (default StyleDSH).
	Style Style
	// NoOutputText is what Bash shows the model for a command with no output (default
	// "(no output)", under StyleClaudeCode "(Bash completed with no output)").
	NoOutputText string
	// EnvFile, when set, is a shell file sourced before every Bash command when it exists
	// (Claude Code's CLAUDE_ENV_FILE: SessionStart hooks write `export NAME=value` lines to
	// it for the session's commands). Under bash it is BASH_ENV.
	EnvFile string
	// ReadLimit is Read's default number of lines (default DefaultReadLimit, 2000).
	ReadLimit int
	// ReadMaxBytes caps the text one Read returns (default DefaultReadMaxBytes, 256 KiB,
	// as Claude Code): reading a larger file whole (no offset, no limit) fails with
	// FILE_TOO_LARGE before anything is read, saying to use offset and limit, and so does
	// a range whose lines add up to more. It also caps the old text the ACP bridge shows
	// for a Write ([CurrentText]).
	ReadMaxBytes int
	// EditMaxBytes caps the size of a file Write replaces or Edit changes, as found and as
	// the edit would leave it (default DefaultEditMaxBytes, 16 MiB): both tools hold the
	// file whole to compute its patch, so a larger one is refused with FILE_TOO_LARGE
	// before it is read, and nothing is written.
	EditMaxBytes int
	// ReadMaxLineLength caps the characters Read returns of one line (default
	// DefaultReadMaxLineLength, 2000); the rest of the line is cut and replaced by a note
	// "… [line truncated: N of its M bytes shown]". Only that much of a line is ever kept
	// in memory.
	ReadMaxLineLength int
	// Sandbox, when set, confines every Bash command ([sandbox.Sandbox.Wrap]); its policy's
	// workspace should be Workspace. Nil runs commands unconfined, as danger-full-access
	// does. The program must call [sandbox.Main] first in its main function (a test binary
	// in TestMain), since a confined command runs through the program re-executed.
	Sandbox *sandbox.Sandbox
	// Model is the session's model ("claude-sonnet-4-5"): a recorded toolset may offer a
	// model fewer tools (Toolset.Models).
	Model string
	// PermissionMode is the session's permission mode ("default", "bypassPermissions"):
	// a recorded toolset may word a tool otherwise under it (ModelTools.Modes).
	PermissionMode string
	// HTTPClient is WebFetch's client (default: one that connects to public addresses
	// only, refusing loopback, private, link-local and reserved ones at connect time).
	HTTPClient *http.Client

	// ReadFiles is what each agent's conversation read, for the rows' read-before-edit
	// rule (ToolRow.ReadFirst: Claude Code's NotebookEdit); nil: the rule is not applied
	// (a host without a session log to derive it from).
	ReadFiles ReadFiles

	// Tasks is the session's task list, which Claude Code's task tools share (and its
	// task reminder reads: NewTaskReminder); nil: a new list for each Definitions call.
	Tasks *TaskList

	// readFirst is the read-before-edit rule of the row being built, if any.
	readFirst *ReadFirst

	// registry is the registry Register registers the tools in, where ToolSearch looks
	// for tools (nil: ToolSearch finds none).
	registry *tools.Registry
	// search is the toolset's tool search for Model (ToolSearch's wording), if any.
	search *ToolSearch

	// execSessions are the commands Codex's exec_command left running (one table per
	// Definitions call, shared by its exec_command and write_stdin).
	execSessions *execSessions
}

func (o Options) withDefaults() (Options, error) {
	if o.Workspace == "" {
		return o, errors.New("builtin: Options.Workspace is required")
	}
	ws, err := filepath.Abs(o.Workspace)
	if err != nil {
		return o, err
	}
	if ws, err = filepath.EvalSymlinks(ws); err != nil {
		return o, fmt.Errorf("builtin: workspace: %w", err)
	}
	o.Workspace = ws
	if o.BashTimeout <= 0 {
		o.BashTimeout = 2 * time.Minute
	}
	if o.MaxBashTimeout <= 0 {
		o.MaxBashTimeout = 10 * time.Minute
	}
	if o.MaxOutput <= 0 {
		o.MaxOutput = 30000
	}
	if o.ReadLimit <= 0 {
		o.ReadLimit = DefaultReadLimit
	}
	if o.ReadMaxBytes <= 0 {
		o.ReadMaxBytes = DefaultReadMaxBytes
	}
	if o.ReadMaxLineLength <= 0 {
		o.ReadMaxLineLength = DefaultReadMaxLineLength
	}
	if o.EditMaxBytes <= 0 {
		o.EditMaxBytes = DefaultEditMaxBytes
	}
	switch o.Style {
	case StyleDSH, StyleCodex, StyleGemini:
	case StyleClaudeCode:
		if o.NoOutputText == "" {
			o.NoOutputText = "(Bash completed with no output)"
		}
	default:
		return o, fmt.Errorf("builtin: Options.Style %q: want %q, %q, %q or %q", o.Style, StyleDSH, StyleClaudeCode, StyleCodex, StyleGemini)
	}
	if o.NoOutputText == "" {
		o.NoOutputText = "(no output)"
	}
	if o.Tasks == nil {
		o.Tasks = &TaskList{}
	}
	return o, nil
}

// Definitions returns the built-in tools, configured by o: the tools of the style's
// recorded [Toolset] when it has one (spec/toolsets: StyleCodex's), else the four tools.
func Definitions(o Options) ([]tools.Definition, error) {
	o, err := o.withDefaults()
	if err != nil {
		return nil, err
	}
	if defs, ok, err := toolsetDefinitions(o); ok || err != nil {
		return defs, err
	}
	return []tools.Definition{bash(o), read(o), write(o), edit(o)}, nil
}

// Register registers the style's tools (see [Definitions]) globally in r and returns a func that
// unregisters them and kills the commands Codex's exec_command left running (call it when
// the session ends: a command in a session would otherwise outlive it).
func Register(r *tools.Registry, o Options) (unregister func(), err error) {
	sessions := newExecSessions()
	o.execSessions, o.registry = sessions, r
	defs, err := Definitions(o)
	if err != nil {
		return nil, err
	}
	var undo []func()
	unregister = func() {
		for _, u := range undo {
			u()
		}
		sessions.killAll()
	}
	for _, d := range defs {
		u, err := r.Register(d)
		if err != nil {
			unregister()
			return nil, err
		}
		undo = append(undo, u)
	}
	return unregister, nil
}

// resolve maps a tool's file_path to an absolute path inside the workspace, resolving
// the symlinks of its deepest existing ancestor so that a link cannot lead outside.
func resolve(workspace, p string) (string, error) {
	if strings.TrimSpace(p) == "" {
		return "", tools.NewError(CodeBadInput, "file_path is empty")
	}
	if !filepath.IsAbs(p) {
		p = filepath.Join(workspace, p)
	}
	p = filepath.Clean(p)
	existing, rest := p, ""
	for {
		if _, err := os.Lstat(existing); err == nil {
			break
		}
		parent := filepath.Dir(existing)
		if parent == existing {
			break
		}
		rest = filepath.Join(filepath.Base(existing), rest)
		existing = parent
	}
	real, err := filepath.EvalSymlinks(existing)
	if err != nil {
		return "", tools.NewError(CodeBadInput, fmt.Sprintf("cannot resolve %s: %v", p, err))
	}
	full := filepath.Join(real, rest)
	if full != workspace && !strings.HasPrefix(full, workspace+string(filepath.Separator)) {
		return "", tools.NewError(CodeOutsideWorkspace, fmt.Sprintf("path %s is outside the workspace %s", p, workspace))
	}
	return full, nil
}
