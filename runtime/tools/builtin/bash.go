package builtin

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"os"
	"os/exec"
	"slices"
	"strings"
	"time"

	"github.com/dshkit/dsh/generated/dsh"
	"github.com/dshkit/dsh/runtime/tools"
)

const bashSchema = `{
  "type": "object",
  "properties": {
    "command": {"type": "string", "description": "The command to run with bash -c in the workspace."},
    "description": {"type": "string", "description": "What the command does, in a few words."},
    "timeout": {"type": "integer", "minimum": 1, "description": "Timeout in milliseconds."}
  },
  "required": ["command"],
  "additionalProperties": false
}`

// bashResult is Bash's canonical value; the model sees it rendered as text.
type bashResult struct {
	Stdout          string `json:"stdout"`
	Stderr          string `json:"stderr"`
	ExitCode        int    `json:"exitCode"`
	OutputTruncated bool   `json:"outputTruncated,omitempty"`
	// WallTime is how long the command ran, in seconds (to the microsecond).
	WallTime float64 `json:"wallTime"`
	// PGID is the command's process group (StyleGemini only: Gemini CLI tells the model).
	PGID int `json:"pgid,omitempty"`
}

// CodeUnsupported is the failure of a call that asks for something dsh's tool does not
// do (Bash's run_in_background, a sandboxed Bash's dangerouslyDisableSandbox, Read's pages):
// nothing runs, and the message says what to do instead.
const CodeUnsupported = "UNSUPPORTED"

// bashUnsupported refuses the inputs of Claude Code's Bash that dsh does not honour:
// run_in_background (dsh runs no background commands: the turn would not be told when it
// ends) and, when a sandbox confines the commands, dangerouslyDisableSandbox (dsh does not
// lift its sandbox for one call). Without a sandbox dangerouslyDisableSandbox changes
// nothing: the command runs unconfined as every command does.
func bashUnsupported(o Options, in bashInput) error {
	switch {
	case in.RunInBackground:
		return tools.NewError(CodeUnsupported, "run_in_background is not supported here: dsh runs commands in the foreground only. Run the command without it (with a timeout if it is long).")
	case in.DangerouslyDisableSandbox && o.Sandbox != nil:
		return tools.NewError(CodeUnsupported, "dangerouslyDisableSandbox is not supported here: dsh does not lift its sandbox for one command. Run the command without it.")
	}
	return nil
}

// callTimeout is a call's timeout of ms milliseconds, capped at max; compared in
// milliseconds, so that no value overflows into a negative duration (which would kill the
// command at once).
func callTimeout[I ~int | ~int64](ms I, max time.Duration) time.Duration {
	if int64(ms) >= int64(max/time.Millisecond) {
		return max
	}
	return time.Duration(ms) * time.Millisecond
}

func bash(o Options) tools.Definition {
	d := tools.Definition{
		Name:        "Bash",
		Description: "Runs a shell command (bash -c) in the workspace and returns its stdout, stderr and exit code.",
		InputSchema: json.RawMessage(bashSchema),
		Output: &tools.Output{Render: renderText(func(r bashResult) string {
			if o.Style == StyleCodex {
				return renderCodex(r)
			}
			return renderBash(r, o.NoOutputText)
		}), PresentationMeta: bashMeta},
		Run: runWith(func(ctx context.Context, in bashInput) (bashResult, error) {
			if err := bashUnsupported(o, in); err != nil {
				return bashResult{}, err
			}
			timeout := o.BashTimeout
			if in.Timeout > 0 {
				// A number of milliseconds; compared as a float first, so that no value
				// overflows int64 on the way.
				timeout = o.MaxBashTimeout
				if in.Timeout < float64(o.MaxBashTimeout/time.Millisecond) {
					timeout = callTimeout(max(int64(in.Timeout), 1), o.MaxBashTimeout)
				}
			}
			res, err := runBash(ctx, o, in.Command, timeout)
			if err != nil {
				return bashResult{}, err
			}
			if o.Style == StyleClaudeCode && res.ExitCode != 0 {
				return bashResult{}, tools.NewError(CodeBashExit, claudeExitText(res))
			}
			return res, nil
		}),
	}
	if o.Style == StyleClaudeCode {
		// Claude Code shows a failed command's text as it is, without dsh's "Error: " (a
		// content a listener replaced stays as it is).
		d.FinalizeContent = func(_ dsh.ToolExecution, result dsh.ToolExecutionResult) ([]dsh.ContentBlock, error) {
			f, ok := result.(dsh.ToolFailure)
			if !ok || f.Error.Info == nil || f.Error.Info.Code != CodeBashExit || len(f.Content) != 1 {
				return nil, nil
			}
			if t, ok := f.Content[0].(dsh.TextBlock); ok && t.Text == "Error: "+f.Error.Message {
				return []dsh.ContentBlock{dsh.TextBlock{Text: f.Error.Message}}, nil
			}
			return nil, nil
		}
	}
	return d
}

// bashMeta is the presentation metadata of a command that exited non-zero,
// {"exitCode": N}, so that a log reader (dsh log) tells a failed command from a
// successful one whatever the style worded it as; nil for exit 0.
func bashMeta(_, value json.RawMessage) (json.RawMessage, error) {
	var r bashResult
	if err := json.Unmarshal(value, &r); err != nil || r.ExitCode == 0 {
		return nil, err
	}
	return json.Marshal(map[string]int{"exitCode": r.ExitCode})
}

// claudeExitText is Claude Code's text of a command that exited non-zero: "Exit code N"
// and the output (its shell merges stdout and stderr; dsh has them apart, stdout first),
// trimmed.
func claudeExitText(r bashResult) string {
	parts := []string{fmt.Sprintf("Exit code %d", r.ExitCode)}
	if out := r.Stdout + r.Stderr; out != "" {
		parts = append(parts, out)
	}
	return strings.TrimSpace(strings.Join(parts, "\n"))
}

// capped is a writer that keeps the first max bytes and counts the rest.
type capped struct {
	buf       bytes.Buffer
	max       int
	truncated bool
}

func (c *capped) Write(p []byte) (int, error) {
	room := c.max - c.buf.Len()
	if room < len(p) {
		c.truncated = true
	}
	if room > 0 {
		c.buf.Write(p[:min(room, len(p))])
	}
	return len(p), nil
}

func runBash(ctx context.Context, o Options, command string, timeout time.Duration) (bashResult, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	shell := "bash"
	if _, err := exec.LookPath(shell); err != nil {
		shell = "/bin/sh"
	}
	env := o.Env
	if env == nil {
		env = os.Environ()
	}
	if o.EnvFile != "" {
		if shell == "bash" {
			env = append(slices.Clip(env), "BASH_ENV="+o.EnvFile)
		} else {
			command = "[ -f " + shellQuote(o.EnvFile) + " ] && . " + shellQuote(o.EnvFile) + "\n" + command
		}
	}
	cmd := exec.Command(shell, "-c", command)
	cmd.Dir = o.Workspace
	cmd.Env = env
	stdout, stderr := &capped{max: o.MaxOutput}, &capped{max: o.MaxOutput}
	cmd.Stdout, cmd.Stderr = stdout, stderr
	cmd.WaitDelay = 500 * time.Millisecond
	// Start runs the command in a process group of its own, confined when the options
	// carry a sandbox: killing the group ends the whole command either way.
	start := time.Now()
	proc, err := o.Sandbox.Start(cmd)
	if err != nil {
		return bashResult{}, err
	}
	done := make(chan error, 1)
	go func() { done <- proc.Wait() }()
	select {
	case err = <-done:
	case <-ctx.Done():
		proc.Kill()
		err = <-done
	}
	took := time.Since(start)
	// Whatever the command left running in its group goes with it.
	proc.Kill()
	if ctxErr := ctx.Err(); ctxErr != nil {
		if errors.Is(ctxErr, context.DeadlineExceeded) {
			return bashResult{}, tools.NewError(CodeBashTimeout, fmt.Sprintf("command timed out after %s", timeout))
		}
		return bashResult{}, ctxErr
	}
	res := bashResult{Stdout: text(stdout.buf.Bytes()), Stderr: text(stderr.buf.Bytes()), OutputTruncated: stdout.truncated || stderr.truncated,
		WallTime: float64(took.Microseconds()) / 1e6, ExitCode: proc.ExitCode()}
	if o.Style == StyleGemini {
		res.PGID = proc.Pid()
	}
	if err != nil && !errors.Is(err, exec.ErrWaitDelay) {
		return bashResult{}, err
	}
	return res, nil
}

// renderBash renders Bash's value as the text the model sees (StyleDSH and
// StyleClaudeCode): stdout, stderr on a line of its own, "[output truncated]" and
// "[exit code N]" on lines of their own; noOutput when all is empty.
func renderBash(r bashResult, noOutput string) string {
	var b strings.Builder
	line := func() {
		if b.Len() > 0 && !strings.HasSuffix(b.String(), "\n") {
			b.WriteByte('\n')
		}
	}
	b.WriteString(r.Stdout)
	if r.Stderr != "" {
		line()
		b.WriteString(r.Stderr)
	}
	if r.OutputTruncated {
		line()
		b.WriteString("[output truncated]")
	}
	if r.ExitCode != 0 {
		line()
		fmt.Fprintf(&b, "[exit code %d]", r.ExitCode)
	}
	if b.Len() == 0 {
		b.WriteString(noOutput)
	}
	return b.String()
}

// renderCodex renders Bash's value as Codex's exec_command output: "Chunk ID" (Codex's is
// random; dsh's is derived from the value, so a rendering is reproducible), "Wall time",
// "Process exited with code N", "Original token count" (Codex's estimate: a token per 4
// bytes, rounded up) and the output after "Output:".
func renderCodex(r bashResult) string {
	out := r.Stdout + r.Stderr
	if r.OutputTruncated {
		if out != "" && !strings.HasSuffix(out, "\n") {
			out += "\n"
		}
		out += "[output truncated]\n"
	}
	h := fnv.New32a()
	fmt.Fprintf(h, "%d\x00%g\x00%s", r.ExitCode, r.WallTime, out)
	return fmt.Sprintf("Chunk ID: %06x\nWall time: %.4f seconds\nProcess exited with code %d\nOriginal token count: %d\nOutput:\n%s",
		h.Sum32()&0xffffff, r.WallTime, r.ExitCode, (len(out)+3)/4, out)
}

// shellQuote quotes s for a POSIX shell.
func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }
