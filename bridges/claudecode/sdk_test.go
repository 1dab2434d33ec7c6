package claudecode_test

import (
	"os"
	"reflect"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/dshkit/dsh/generated/hookmap"
	"github.com/dshkit/dsh/generated/wire/claudecode"
)

// sdkVersion is the Claude Agent SDK release whose type declarations the wire spec is
// checked against.
const sdkVersion = "0.3.328"

const sdkHowTo = `DSH_CLAUDE_SDK_DTS is not set: it must name sdk.d.ts of @anthropic-ai/claude-agent-sdk@` + sdkVersion + `.
Get it with:
	cd /tmp && npm pack @anthropic-ai/claude-agent-sdk@` + sdkVersion + ` && mkdir -p claude-sdk && tar -xzf anthropic-ai-claude-agent-sdk-` + sdkVersion + `.tgz -C claude-sdk
	export DSH_CLAUDE_SDK_DTS=/tmp/claude-sdk/package/sdk.d.ts
(scripts/test, the README's test command, fetches it the same way.)`

// sdkOmitted lists the SDK hook fields the Claude Code wire spec deliberately leaves out,
// keyed "<SDK type>.<field>", with the reason. Input fields are ones dsh cannot produce;
// output fields are ones dsh does not act on (the wire output records are open, so a hook
// printing them is tolerated and the field ignored). An entry that the wire spec no
// longer omits fails the test, so the list stays exact.
var sdkOmitted = map[string]string{

	"SessionStartHookInput.session_title": "dsh sessions have no title",

	"UserPromptSubmitHookInput.source":        "dsh does not classify who authored a prompt (user, sdk, loop wakeup, ...)",
	"UserPromptSubmitHookInput.session_title": "dsh sessions have no title",

	"PreToolUseHookInput.mcp_server":         "the tool pipeline carries no MCP server provenance",
	"PostToolUseHookInput.mcp_server":        "the tool pipeline carries no MCP server provenance",
	"PermissionRequestHookInput.mcp_server":  "the tool pipeline carries no MCP server provenance",
	"PostToolUseFailureHookInput.mcp_server": "the tool pipeline carries no MCP server provenance",

	"StopFailureHookInput.error_details": "not sent by Claude Code 2.1.328 for the error measured (a 400); dsh says the error in last_assistant_message",

	"SyncHookJSONOutput.terminalSequence": "dsh drives no terminal; ignored",

	"SessionStartHookSpecificOutput.initialUserMessage": "not acted on: dsh sessions start from the caller's prompt",
	"SessionStartHookSpecificOutput.sessionTitle":       "dsh sessions have no title",
	"SessionStartHookSpecificOutput.watchPaths":         "dsh has no file watcher",
	"SessionStartHookSpecificOutput.reloadSkills":       "dsh has no skill directories to re-scan",

	"UserPromptSubmitHookSpecificOutput.sessionTitle":           "dsh sessions have no title",
	"UserPromptSubmitHookSpecificOutput.suppressOriginalPrompt": "a rejected prompt is never echoed by dsh",

	"PostToolUseHookSpecificOutput.classifierContext": "dsh has no auto-mode permission classifier",
}

// TestSDKTypes checks, for every event the Claude Code table maps, that the generated
// wire input and output types carry every field the Claude Agent SDK's hook input and
// output types declare, apart from the explicit omissions above.
func TestSDKTypes(t *testing.T) {
	path := os.Getenv("DSH_CLAUDE_SDK_DTS")
	if path == "" {
		t.Fatal(sdkHowTo)
	}
	src, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("reading DSH_CLAUDE_SDK_DTS: %v\n%s", err, sdkHowTo)
	}
	decls := parseDTS(string(src))
	if len(decls) < 50 {
		t.Fatalf("%s: found only %d type declarations; is it sdk.d.ts?", path, len(decls))
	}

	// wire types per event: input, output and hookSpecificOutput records.
	wire := map[string][3]any{
		"SessionStart":     {claudecode.SessionStartInput{}, claudecode.SessionStartOutput{}, claudecode.SessionStartSpecific{}},
		"UserPromptSubmit": {claudecode.UserPromptSubmitInput{}, claudecode.UserPromptSubmitOutput{}, claudecode.UserPromptSubmitSpecific{}},
		"PreToolUse":       {claudecode.PreToolUseInput{}, claudecode.PreToolUseOutput{}, claudecode.PreToolUseSpecific{}},
		"PostToolUse":      {claudecode.PostToolUseInput{}, claudecode.PostToolUseOutput{}, claudecode.PostToolUseSpecific{}},
		"Stop":             {claudecode.StopInput{}, claudecode.StopOutput{}, claudecode.StopSpecific{}},
		// The SDK declares no hookSpecificOutput for these (dsh's PostCompactSpecific, with
		// additionalContext, is a superset the real engine rejects).
		"PreCompact":         {claudecode.PreCompactInput{}, claudecode.PreCompactOutput{}, nil},
		"PostCompact":        {claudecode.PostCompactInput{}, claudecode.PostCompactOutput{}, nil},
		"SessionEnd":         {claudecode.SessionEndInput{}, claudecode.SessionEndOutput{}, nil},
		"StopFailure":        {claudecode.StopFailureInput{}, claudecode.StopFailureOutput{}, nil},
		"InstructionsLoaded": {claudecode.InstructionsLoadedInput{}, claudecode.InstructionsLoadedOutput{}, nil},
		"PermissionRequest": {claudecode.PermissionRequestInput{}, claudecode.PermissionRequestOutput{},
			claudecode.PermissionRequestSpecific{}},
		"PostToolUseFailure": {claudecode.PostToolUseFailureInput{}, claudecode.PostToolUseFailureOutput{},
			claudecode.PostToolUseFailureSpecific{}},
		"Notification": {claudecode.NotificationInput{}, claudecode.NotificationOutput{}, claudecode.NotificationSpecific{}},
		"PostToolBatch": {claudecode.PostToolBatchInput{}, claudecode.PostToolBatchOutput{},
			claudecode.PostToolBatchSpecific{}},
		"Setup": {claudecode.SetupInput{}, claudecode.SetupOutput{}, claudecode.SetupSpecific{}},
		"SubagentStart": {claudecode.SubagentStartInput{}, claudecode.SubagentStartOutput{},
			claudecode.SubagentStartSpecific{}},
		"SubagentStop": {claudecode.SubagentStopInput{}, claudecode.SubagentStopOutput{}, claudecode.StopSpecific{}},
		"UserPromptExpansion": {claudecode.UserPromptExpansionInput{}, claudecode.UserPromptExpansionOutput{},
			claudecode.UserPromptExpansionSpecific{}},
	}
	used := map[string]bool{}
	check := func(sdkType string, goType any) {
		t.Helper()
		fields, ok := resolveFields(decls, sdkType, map[string]bool{})
		if !ok {
			t.Errorf("sdk.d.ts declares no type %s", sdkType)
			return
		}
		have := jsonFields(reflect.TypeOf(goType))
		for _, f := range fields {
			key := f.owner + "." + f.name
			if have[f.name] {
				if _, listed := sdkOmitted[key]; listed {
					used[key] = true
					t.Errorf("%s is listed as omitted but %T has it: drop it from sdkOmitted", key, goType)
				}
				continue
			}
			if _, listed := sdkOmitted[key]; listed {
				used[key] = true
				continue
			}
			t.Errorf("%T lacks %s (declared by the SDK's %s): add it to spec/wire/claudecode.cue or list it in sdkOmitted with a reason", goType, f.name, key)
		}
	}
	for _, ev := range hookmap.ClaudeCode.Events {
		w, ok := wire[ev.Name]
		if !ok {
			t.Errorf("the table maps %s, which this test does not know: add its wire types", ev.Name)
			continue
		}
		check(ev.Name+"HookInput", w[0])
		check("SyncHookJSONOutput", w[1])
		if w[2] != nil {
			check(ev.Name+"HookSpecificOutput", w[2])
		}
	}
	var stale []string
	for k := range sdkOmitted {
		if !used[k] {
			stale = append(stale, k)
		}
	}
	sort.Strings(stale)
	for _, k := range stale {
		t.Errorf("sdkOmitted lists %s, which the SDK no longer declares on a mapped event: remove it", k)
	}
}

// sdkField is one property of a TypeScript object type, with the declared type it
// appears in (for the allow-list key).
type sdkField struct {
	owner, name string
	optional    bool
}

// jsonFields returns the JSON names of a Go struct's fields.
func jsonFields(t reflect.Type) map[string]bool {
	out := map[string]bool{}
	for i := range t.NumField() {
		name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ",")
		if name != "" && name != "-" {
			out[name] = true
		}
	}
	return out
}

var (
	declRE    = regexp.MustCompile(`(?m)^export declare type ([A-Za-z_$][\w$]*)\s*(?:<[^=]*>)?\s*=\s*`)
	commentRE = regexp.MustCompile(`(?s)/\*.*?\*/|//[^\n]*`)
	propRE    = regexp.MustCompile(`^\s*(?:readonly\s+)?['"]?([A-Za-z_$][\w$]*)['"]?(\?)?\s*:`)
	identRE   = regexp.MustCompile(`^[A-Za-z_$][\w$]*$`)
)

// parseDTS returns the right-hand side of every `export declare type X = ...;`, comments
// removed, keyed by name. A declaration ends at the first ';' outside brackets.
func parseDTS(src string) map[string]string {
	src = commentRE.ReplaceAllString(src, "")
	out := map[string]string{}
	for _, m := range declRE.FindAllStringSubmatchIndex(src, -1) {
		name := src[m[2]:m[3]]
		depth, end := 0, len(src)
	scan:
		for i := m[1]; i < len(src); i++ {
			switch src[i] {
			case '{', '(', '[', '<':
				depth++
			case '}', ')', ']', '>':
				if depth > 0 && !(src[i] == '>' && i > 0 && src[i-1] == '=') {
					depth--
				}
			case ';':
				if depth == 0 {
					end = i
					break scan
				}
			}
		}
		out[name] = src[m[1]:end]
	}
	return out
}

// resolveFields returns the properties of a declared type: the properties of its
// top-level object literals plus those of the declared types it intersects (&).
func resolveFields(decls map[string]string, name string, seen map[string]bool) ([]sdkField, bool) {
	rhs, ok := decls[name]
	if !ok || seen[name] {
		return nil, ok
	}
	seen[name] = true
	var out []sdkField
	for _, part := range splitTop(rhs, '&') {
		part = strings.TrimSpace(part)
		for strings.HasPrefix(part, "(") && strings.HasSuffix(part, ")") {
			inner := part[1 : len(part)-1]
			if len(splitTop(inner, '&')) > 1 {
				for _, p := range splitTop(inner, '&') {
					out = append(out, partFields(decls, name, strings.TrimSpace(p), seen)...)
				}
				part = ""
				break
			}
			part = strings.TrimSpace(inner)
		}
		if part != "" {
			out = append(out, partFields(decls, name, part, seen)...)
		}
	}
	return out, true
}

func partFields(decls map[string]string, owner, part string, seen map[string]bool) []sdkField {
	switch {
	case strings.HasPrefix(part, "{") && strings.HasSuffix(part, "}"):
		var out []sdkField
		for _, member := range splitTop(part[1:len(part)-1], ';') {
			for _, line := range splitTop(member, '\n') {
				if m := propRE.FindStringSubmatch(line); m != nil {
					out = append(out, sdkField{owner: owner, name: m[1], optional: m[2] == "?"})
					break
				}
			}
		}
		return out
	case identRE.MatchString(part):
		fs, _ := resolveFields(decls, part, seen)
		return fs
	}
	return nil
}

// splitTop splits s on sep outside brackets.
func splitTop(s string, sep byte) []string {
	var out []string
	depth, start := 0, 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '{', '(', '[', '<':
			depth++
		case '}', ')', ']', '>':
			if depth > 0 && !(s[i] == '>' && i > 0 && s[i-1] == '=') {
				depth--
			}
		default:
			if s[i] == sep && depth == 0 {
				out = append(out, s[start:i])
				start = i + 1
			}
		}
	}
	return append(out, s[start:])
}

// TestDTSReader checks the reader on a small declaration file.
func TestDTSReader(t *testing.T) {
	decls := parseDTS(`
export declare type Base = {
    session_id: string;
    /** doc; with a semicolon */
    effort?: {
        level: string;
    };
};
export declare type E = Base & {
    hook_event_name: 'E';
    tool_input: unknown;
    cb: (a: string) => void;
    opt?: Record<string, unknown>;
};
export declare type F = (Base & {
    a: string;
}) & {
    b?: string[];
};`)
	names := func(fs []sdkField) string {
		var out []string
		for _, f := range fs {
			out = append(out, f.owner+"."+f.name)
		}
		return strings.Join(out, " ")
	}
	e, _ := resolveFields(decls, "E", map[string]bool{})
	if got := names(e); got != "Base.session_id Base.effort E.hook_event_name E.tool_input E.cb E.opt" {
		t.Errorf("E: %s", got)
	}
	f, _ := resolveFields(decls, "F", map[string]bool{})
	if got := names(f); got != "Base.session_id Base.effort F.a F.b" {
		t.Errorf("F: %s", got)
	}
}
