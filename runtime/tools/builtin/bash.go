package builtin

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
	"syscall"
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
}

func bash(o Options) tools.Definition {
	return tools.Definition{
		Name:        "Bash",
		Description: "Runs a shell command (bash -c) in the workspace and returns its stdout, stderr and exit code.",
		InputSchema: json.RawMessage(bashSchema),
		Output: &tools.Output{Render: func(args, value json.RawMessage) ([]dsh.ContentBlock, error) {
			return renderBash(args, value, o.NoOutputText)
		}},
		Run: func(ctx context.Context, rc *tools.RunContext) (any, error) {
			var in struct {
				Command string `json:"command"`
				Timeout int64  `json:"timeout"`
			}
			if err := rc.BindArguments(&in); err != nil {
				return nil, tools.NewError(CodeBadInput, err.Error())
			}
			timeout := o.BashTimeout
			if in.Timeout > 0 {
				timeout = min(time.Duration(in.Timeout)*time.Millisecond, o.MaxBashTimeout)
			}
			return runBash(ctx, o, in.Command, timeout)
		},
	}
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

func runBash(ctx context.Context, o Options, command string, timeout time.Duration) (any, error) {
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
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	stdout, stderr := &capped{max: o.MaxOutput}, &capped{max: o.MaxOutput}
	cmd.Stdout, cmd.Stderr = stdout, stderr
	cmd.WaitDelay = 500 * time.Millisecond
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	var err error
	select {
	case err = <-done:
	case <-ctx.Done():
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		err = <-done
	}
	// Whatever the command left running in its group goes with it.
	_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	if ctxErr := ctx.Err(); ctxErr != nil {
		if errors.Is(ctxErr, context.DeadlineExceeded) {
			return nil, tools.NewError(CodeBashTimeout, fmt.Sprintf("command timed out after %s", timeout))
		}
		return nil, ctxErr
	}
	res := bashResult{Stdout: stdout.buf.String(), Stderr: stderr.buf.String(), OutputTruncated: stdout.truncated || stderr.truncated}
	var exitErr *exec.ExitError
	switch {
	case errors.As(err, &exitErr):
		res.ExitCode = exitErr.ExitCode()
	case err != nil && !errors.Is(err, exec.ErrWaitDelay):
		return nil, err
	}
	return res, nil
}

// renderBash renders Bash's value as the text the model sees; noOutput is the text of
// an empty output ("" means "(no output)").
func renderBash(args, value json.RawMessage, noOutput string) ([]dsh.ContentBlock, error) {
	var r bashResult
	if err := json.Unmarshal(value, &r); err != nil {
		return nil, err
	}
	var b strings.Builder
	b.WriteString(r.Stdout)
	if r.Stderr != "" {
		if b.Len() > 0 && !strings.HasSuffix(b.String(), "\n") {
			b.WriteByte('\n')
		}
		b.WriteString(r.Stderr)
	}
	if r.OutputTruncated {
		b.WriteString("\n[output truncated]")
	}
	if r.ExitCode != 0 {
		fmt.Fprintf(&b, "\n[exit code %d]", r.ExitCode)
	}
	if b.Len() == 0 {
		if noOutput == "" {
			noOutput = "(no output)"
		}
		b.WriteString(noOutput)
	}
	return []dsh.ContentBlock{dsh.TextBlock{Text: b.String()}}, nil
}

// shellQuote quotes s for a POSIX shell.
func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }
