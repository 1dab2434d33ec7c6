package main

import (
	"fmt"
	"os"
	"path"
	"strings"
)

// envDeny is the repeatable --env-deny PATTERN flag: variables kept away from Bash, hooks
// and MCP servers.
type envDeny []string

func (e *envDeny) String() string { return strings.Join(*e, ",") }

// Set adds a pattern: a variable name, or a glob over names (path.Match: *, ?, [...]).
func (e *envDeny) Set(v string) error {
	if v == "" || strings.Contains(v, "=") {
		return fmt.Errorf("%q: want a variable name or a glob over names, such as AWS_* or *_TOKEN", v)
	}
	if _, err := path.Match(v, ""); err != nil {
		return fmt.Errorf("%q: %v", v, err)
	}
	*e = append(*e, v)
	return nil
}

// childEnv is the environment Bash, hooks and MCP servers start from: dsh's own without
// the variables whose names match a pattern; nil (each one's default: dsh's whole
// environment) when there is no pattern.
func (e envDeny) childEnv() []string {
	if len(e) == 0 {
		return nil
	}
	return filterEnv(os.Environ(), e)
}

// filterEnv returns env (KEY=value pairs) without the variables whose names match one of
// patterns.
func filterEnv(env, patterns []string) []string {
	out := make([]string, 0, len(env))
	for _, kv := range env {
		name, _, _ := strings.Cut(kv, "=")
		denied := false
		for _, p := range patterns {
			if ok, _ := path.Match(p, name); ok {
				denied = true
				break
			}
		}
		if !denied {
			out = append(out, kv)
		}
	}
	return out
}

// names is a repeatable flag of names (--mcp-trust).
type names []string

func (n *names) String() string { return strings.Join(*n, ",") }

// Set adds a name.
func (n *names) Set(v string) error {
	if v == "" {
		return fmt.Errorf("want a non-empty name")
	}
	*n = append(*n, v)
	return nil
}
