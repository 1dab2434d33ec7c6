package hookproto

import (
	"errors"
	"fmt"
	"strings"
	"unicode"

	"github.com/dshkit/dsh/generated/dsh"
	"github.com/dshkit/dsh/generated/hookmap"
)

// ErrUnsafeSubstitution is wrapped by the error of a shell-form hook that dsh does not
// run because a variable it would substitute into the command text holds shell
// metacharacters (see [SubstitutionError]).
var ErrUnsafeSubstitution = errors.New("unsafe substitution into a hook's command")

// SubstitutionError reports a variable whose value would be parsed as shell code once
// substituted into a shell-form hook's command text: a directory named `proj$(touch x)`
// substituted for $GEMINI_PROJECT_DIR inside double quotes runs `touch x`, in dsh as in
// Gemini CLI, which shell-quotes the value but not for the context it lands in. Every
// dialect's substitutions follow one rule ([PlainValue]): a plain value is substituted, any
// other refuses the hook, which then fails closed (see [FailClosed]). The variable is
// still exported, and the shell's own expansion of it ("$NAME") is never re-parsed.
type SubstitutionError struct {
	// Var is the variable's name, e.g. "GEMINI_PROJECT_DIR".
	Var string
	// Value is the value it would substitute.
	Value string
}

// Error names the variable and says what to do instead.
func (e *SubstitutionError) Error() string {
	return fmt.Sprintf("%v: %s is %q, which holds shell metacharacters the shell would parse once it is substituted into the command text; dsh does not run the hook (read the exported variable instead: the shell's expansion of \"$%s\" is never parsed as code)",
		ErrUnsafeSubstitution, e.Var, e.Value, e.Var)
}

// Unwrap returns [ErrUnsafeSubstitution].
func (e *SubstitutionError) Unwrap() error { return ErrUnsafeSubstitution }

// PlainValue reports whether s can be substituted into a shell command's text without any
// of it being parsed as code, whatever quotes the substitution lands between: ASCII
// letters and digits, `_ - . / : @ % + = ,`, space, and non-ASCII letters, digits and
// marks. Anything else (`$`, backquote, quotes, backslash, `;`, `&`, `|`, `(`, `<`, glob
// characters, control characters, …) is not plain.
func PlainValue(s string) bool {
	for _, r := range s {
		switch {
		case r < unicode.MaxASCII && (r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9'):
		case strings.ContainsRune("_-./:@%+=, ", r):
		case r > unicode.MaxASCII && r != unicode.ReplacementChar && (unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.IsMark(r)):
		default:
			return false
		}
	}
	return true
}

// unsafeSubstitution returns a *[SubstitutionError] for the first of vars (name, value
// pairs) whose placeholder occurs in command and whose value is not plain, else nil.
func unsafeSubstitution(command string, vars [][3]string) error {
	for _, v := range vars {
		if strings.Contains(command, v[1]) && !PlainValue(v[2]) {
			return &SubstitutionError{Var: v[0], Value: v[2]}
		}
	}
	return nil
}

// FailClosed is the verdict of a hook that dsh did not run because it cannot run safely
// or its matcher could not decide (err says why): the event's blocking outcome where
// exit 2 blocks, with err as the reason, so that a guard never lets the action through
// unchecked; elsewhere a recorded error. The diagnostic always carries err.
func FailClosed(ev *hookmap.Event, err error) Verdict {
	v := Verdict{Diagnostics: []string{"not run: " + err.Error()}}
	if ev.Exit2 == string(dsh.HookOutcomeError) {
		v.Outcome = dsh.HookOutcomeError
		return v
	}
	v.Outcome, v.Reason = blockingOutcome(ev), "dsh did not run this hook: "+err.Error()
	return v
}
