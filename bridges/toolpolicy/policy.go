package toolpolicy

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"

	"github.com/pelletier/go-toml/v2"

	"github.com/dshkit/dsh/bridges/dialect"
)

// Decisions a rule makes.
const (
	Allow = "allow"
	Deny  = "deny"
	Ask   = "ask_user"
)

// Rule is one policy rule: a rule of a policy file, an entry of the settings' lists, or
// the engine's catch-all.
type Rule struct {
	// Tool is the tool's name: "*" any tool, "<prefix>*" any MCP tool, "<prefix><server>_*"
	// any tool of the server, else the name itself.
	Tool string
	// Server, when set, is the MCP server the call's tool must be of ("*": any).
	Server string
	// Args, when set, must match the call's arguments as the engine writes them
	// (StableArgs).
	Args *regexp.Regexp
	// Decision is Allow, Deny or Ask.
	Decision string
	// Priority ranks the rule: the higher first.
	Priority float64
	// Modes, when set, are the approval modes the rule holds in.
	Modes []string
	// Interactive, when set, says the rule holds only in an interactive run (true) or
	// only in a headless one (false).
	Interactive *bool
	// Message follows the denial text (the table's DeniedWith).
	Message string
	// Source is where the rule was written ("FILE: rule #N", "FILE: tools.exclude").
	Source string
}

// ErrPolicy is wrapped by every error of LoadPolicies.
var ErrPolicy = errors.New("policy file")

// modes are the engine's approval modes, which a rule's modes may name.
var modes = []string{"default", "autoEdit", "yolo", "plan"}

// Policies are the rules of the policy files, and the directories skipped.
type Policies struct {
	// Rules are in load order.
	Rules []Rule
	// Skipped says which directory was not read, and why, for a notice.
	Skipped []string
}

// LoadPolicies reads the policy files of the table's directories (home is the user's
// home directory, root the file system's root, "/" when empty): each *.toml file of a
// directory, in name order. A file that does not parse, or a rule that is malformed or
// that asks for what dsh does not do, is an error naming the file and the rule: dsh
// never runs without a rule the user wrote. A missing directory is skipped; a directory
// the table says must be secure is skipped, with a notice, when root does not own it or
// group or others may write it (as the engine skips it).
func LoadPolicies(t *dialect.ToolPolicy, home, root string) (Policies, error) {
	var (
		out  Policies
		errs []error
	)
	if root == "" {
		root = "/"
	}
	for _, d := range t.Dirs {
		base := home
		if d.Base == "root" {
			base = root
		}
		if base == "" {
			continue
		}
		dir := filepath.Join(base, filepath.FromSlash(d.Path))
		fi, err := os.Stat(dir)
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("%w: %v", ErrPolicy, err))
			continue
		}
		if !fi.IsDir() {
			continue
		}
		if d.Secure {
			if why := insecure(dir, fi); why != "" {
				out.Skipped = append(out.Skipped, dir+": "+why)
				continue
			}
		}
		files, err := filepath.Glob(filepath.Join(dir, "*.toml"))
		if err != nil {
			errs = append(errs, fmt.Errorf("%w: %s: %v", ErrPolicy, dir, err))
			continue
		}
		sort.Strings(files)
		for _, f := range files {
			if fi, err := os.Stat(f); err != nil || !fi.Mode().IsRegular() {
				continue
			}
			rules, err := readPolicyFile(t, f, d.Tier, d.Name)
			if err != nil {
				errs = append(errs, err)
				continue
			}
			out.Rules = append(out.Rules, rules...)
		}
	}
	return out, errors.Join(errs...)
}

// readPolicyFile reads the rules of one policy file.
func readPolicyFile(t *dialect.ToolPolicy, path string, tier int, tierName string) ([]Rule, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrPolicy, err)
	}
	var doc map[string]any
	if err := toml.NewDecoder(bytes.NewReader(data)).Decode(&doc); err != nil {
		var de *toml.DecodeError
		if errors.As(err, &de) {
			row, col := de.Position()
			return nil, fmt.Errorf("%w: %s:%d:%d: not TOML: %v", ErrPolicy, path, row, col, de.Error())
		}
		return nil, fmt.Errorf("%w: %s: not TOML: %v", ErrPolicy, path, err)
	}
	var errs []error
	for k := range doc {
		switch k {
		case "rule":
		case "safety_checker":
			errs = append(errs, fmt.Errorf("%w: %s: safety_checker: dsh does not run the engine's safety checkers", ErrPolicy, path))
		default:
			errs = append(errs, fmt.Errorf("%w: %s: %q: not a key of a policy file (rule, safety_checker)", ErrPolicy, path, k))
		}
	}
	raw, ok := doc["rule"]
	if !ok {
		return nil, errors.Join(errs...)
	}
	list, ok := raw.([]any)
	if !ok {
		return nil, errors.Join(append(errs, fmt.Errorf("%w: %s: rule: not an array of tables ([[rule]])", ErrPolicy, path))...)
	}
	var rules []Rule
	for i, it := range list {
		where := fmt.Sprintf("%s: rule #%d", path, i+1)
		m, ok := it.(map[string]any)
		if !ok {
			errs = append(errs, fmt.Errorf("%w: %s: not a table", ErrPolicy, where))
			continue
		}
		rs, err := compileRule(t, m, where, tier, tierName+": "+filepath.Base(path))
		if err != nil {
			errs = append(errs, fmt.Errorf("%w: %s: %w", ErrPolicy, where, err))
			continue
		}
		rules = append(rules, rs...)
	}
	return rules, errors.Join(errs...)
}

// compileRule turns one [[rule]] table into the rules it stands for, one per tool name
// and command prefix, as the engine expands it.
func compileRule(t *dialect.ToolPolicy, m map[string]any, where string, tier int, source string) ([]Rule, error) {
	var errs []error
	bad := func(format string, a ...any) { errs = append(errs, fmt.Errorf(format, a...)) }
	for k := range m {
		switch k {
		case "toolName", "mcpName", "argsPattern", "commandPrefix", "commandRegex", "decision", "priority",
			"modes", "interactive", "allowRedirection", "allow_redirection", "denyMessage", "deny_message":
		case "subagent", "toolAnnotations":
			bad("%s: dsh does not match a rule on it (the rule would match more calls than written)", k)
		default:
			bad("%s: not a field of a rule", k)
		}
	}
	tools, ok := strings1(m["toolName"])
	if !ok || len(tools) == 0 {
		bad("toolName: required, a string or a list of strings")
	}
	if slices.Contains(tools, "") {
		bad(`toolName: empty (use "*" for every tool)`)
	}
	decision, _ := m["decision"].(string)
	if decision != Allow && decision != Deny && decision != Ask {
		bad("decision: %v is not allow, deny or ask_user", m["decision"])
	}
	prio, ok := m["priority"].(int64)
	if !ok || prio < 0 || prio > int64(t.MaxPriority) {
		bad("priority: %v is not an integer from 0 to %d", m["priority"], t.MaxPriority)
	}
	r := Rule{Decision: decision, Priority: float64(tier) + float64(prio)/float64(t.MaxPriority+1), Source: source}
	if v, ok := m["mcpName"]; ok {
		s, ok := v.(string)
		if !ok || s == "" {
			bad("mcpName: not a server name")
		}
		r.Server = s
	}
	if v, ok := m["modes"]; ok {
		ms, ok := strings1(v)
		if !ok {
			bad("modes: not a list of strings")
		}
		for _, md := range ms {
			if !slices.Contains(modes, md) {
				bad("modes: %q is not one of %s", md, strings.Join(modes, ", "))
			}
		}
		r.Modes = ms
	}
	if v, ok := m["interactive"]; ok {
		b, ok := v.(bool)
		if !ok {
			bad("interactive: not a boolean")
		}
		r.Interactive = &b
	}
	for _, k := range []string{"allowRedirection", "allow_redirection"} {
		if v, ok := m[k]; ok {
			if _, ok := v.(bool); !ok {
				bad("%s: not a boolean", k)
			}
		}
	}
	for _, k := range []string{"deny_message", "denyMessage"} { // the engine prefers denyMessage
		if v, ok := m[k]; ok {
			s, ok := v.(string)
			if !ok {
				bad("%s: not a string", k)
			}
			r.Message = s
		}
	}
	var patterns []string
	prefixes, hasPrefix := m["commandPrefix"]
	regex, hasRegex := m["commandRegex"]
	args, hasArgs := m["argsPattern"]
	if hasPrefix || hasRegex {
		if len(tools) != 1 || !slices.Contains(t.Shell, tools[0]) || isList(m["toolName"]) {
			bad("commandPrefix and commandRegex need toolName = %q (not a list)", firstOr(t.Shell))
		}
		if hasArgs {
			bad("commandPrefix or commandRegex, and argsPattern: one of them only")
		}
		if hasPrefix && hasRegex {
			bad("commandPrefix and commandRegex: one of them only")
		}
	}
	switch {
	case hasPrefix:
		ps, ok := strings1(prefixes)
		if !ok {
			bad("commandPrefix: not a string or a list of strings")
		}
		for _, p := range ps {
			patterns = append(patterns, prefixPattern(p))
		}
	case hasRegex:
		s, ok := regex.(string)
		if !ok {
			bad("commandRegex: not a string")
		}
		patterns = append(patterns, `"command":"`+s)
	case hasArgs:
		s, ok := args.(string)
		if !ok {
			bad("argsPattern: not a string")
		}
		patterns = append(patterns, s)
	default:
		patterns = append(patterns, "")
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	var out []Rule
	for _, p := range patterns {
		var re *regexp.Regexp
		if p != "" {
			var err error
			if re, err = regexp.Compile(p); err != nil {
				return nil, fmt.Errorf("pattern %q: dsh cannot run it (RE2 syntax: no lookaround, no backreferences): %v", p, err)
			}
		}
		for _, tool := range tools {
			rr := r
			rr.Args = re
			rr.Tool = tool
			if r.Server != "" {
				rr.Tool = mcpToolName(t.MCPPrefix, r.Server, tool)
			}
			out = append(out, rr)
		}
	}
	return out, nil
}

// mcpToolName is the engine's name of tool of server, "*" standing for any.
func mcpToolName(prefix, server, tool string) string {
	switch {
	case server == "*" && (tool == "" || tool == "*"):
		return prefix + "*"
	case server == "*":
		return prefix + "*_" + tool
	case tool == "" || tool == "*":
		return prefix + server + "_*"
	default:
		return prefix + server + "_" + tool
	}
}

// prefixPattern is the pattern of a command prefix over the arguments as the engine
// writes them: "command": the prefix as JSON, then a blank, the string's end or a quote.
func prefixPattern(prefix string) string {
	enc := jsString(prefix)
	return regexp.QuoteMeta(`"command":`+enc[:len(enc)-1]) + `(?:[\s"]|\\")`
}

// strings1 reads a string or a list of strings.
func strings1(v any) ([]string, bool) {
	switch v := v.(type) {
	case string:
		return []string{v}, true
	case []any:
		out := make([]string, 0, len(v))
		for _, it := range v {
			s, ok := it.(string)
			if !ok {
				return nil, false
			}
			out = append(out, s)
		}
		return out, true
	}
	return nil, false
}

func isList(v any) bool { _, ok := v.([]any); return ok }

func firstOr(s []string) string {
	if len(s) == 0 {
		return ""
	}
	return s[0]
}

// insecure says why a directory whose files only root may write is not so ("" when it
// is): root does not own it, or group or others may write it.
func insecure(dir string, fi os.FileInfo) string {
	if uid, ok := ownerUID(fi); ok && uid != 0 {
		return fmt.Sprintf("not owned by root (uid %d)", uid)
	}
	if fi.Mode().Perm()&0o022 != 0 {
		return fmt.Sprintf("writable by group or others (mode %o)", fi.Mode().Perm())
	}
	return ""
}
