package ir

import "encoding/json"

// Bridge is the mapping table of one hook dialect (spec/bridges/*.cue): which external
// event maps to which extension point and how hook output becomes an outcome.
type Bridge struct {
	// Dialect names the protocol, e.g. "claude-code".
	Dialect string `json:"dialect"`
	// GoName is the Go identifier of the dialect, e.g. "ClaudeCode".
	GoName string `json:"-"`
	// Doc is the table's doc comment.
	Doc string `json:"-"`
	// File is the spec file (relative to spec/bridges) the table is declared in.
	File string `json:"-"`
	// Pos is where the table is declared.
	Pos Pos `json:"-"`
	// Wire is the spec/wire package of the dialect's input and output types.
	Wire string `json:"wire"`
	// Plugin is the source stamped on every message the bridge adds.
	Plugin string `json:"plugin"`
	// DefaultTimeoutSec is a command handler's timeout when it sets none.
	DefaultTimeoutSec int `json:"defaultTimeoutSec"`
	// EventTimeoutSec gives the command handlers at the events it names another default
	// timeout.
	EventTimeoutSec map[string]int `json:"eventTimeoutSec"`
	// Exit2EmptyStderr is what exit 2 with blank stderr does: "block" or "failed".
	Exit2EmptyStderr string `json:"exit2EmptyStderr"`
	// JSONPrefixes are the first characters that make stdout count as JSON.
	JSONPrefixes []string `json:"jsonPrefixes"`
	// InvalidJSON is the outcome of JSON-looking stdout that does not decode.
	InvalidJSON string `json:"invalidJSON"`
	// StdinNewline says whether the stdin JSON ends with a newline.
	StdinNewline bool `json:"stdinNewline"`
	// SystemContextModels are the models (path.Match patterns) whose hook contexts go on
	// the Messages API as "system" messages rather than <system-reminder> user text.
	SystemContextModels []string `json:"systemContextModels"`
	// EffortModels are the models (path.Match patterns) for which the engine writes its
	// effort setting on a hook's stdin, each with the level it writes by default.
	EffortModels map[string]string `json:"effortModels"`
	// EffortEvents are the events whose stdin carries that effort field.
	EffortEvents []string `json:"effortEvents"`
	// Exit2ReadsJSON says whether JSON stdout still counts on exit 2 (its contexts, and a
	// block or deny reason over stderr).
	Exit2ReadsJSON bool `json:"exit2ReadsJSON"`
	// Events are the mapped events, sorted by name.
	Events []*BridgeEvent `json:"-"`
	// Shell is the argv prefix hooks run under; nil: the dialect's own.
	Shell []string `json:"shell"`
	// TimeoutUnit is the unit of a configured timeout: "s" or "ms".
	TimeoutUnit string `json:"timeoutUnit"`
	// NonPositiveTimeout is what a timeout of 0 or less does: "default" or "expire".
	NonPositiveTimeout string `json:"nonPositiveTimeout"`
	// ReadAnyExit says output is read whatever the exit code (stdout, else stderr).
	ReadAnyExit bool `json:"readAnyExit"`
	// WarningPrefix prefixes the notice of plain text on exit 1 (ReadAnyExit).
	WarningPrefix string `json:"warningPrefix"`
	// PlainNotice makes plain exit-0 text that is no context a notice.
	PlainNotice bool `json:"plainNotice"`
	// SequentialGroups says a group may set "sequential": true.
	SequentialGroups bool `json:"sequentialGroups"`
	// DedupeByName says identical hooks (same name and command) run once.
	DedupeByName bool `json:"dedupeByName"`
	// RegexDialect is the syntax of regex matchers: "ecmascript" or "re2".
	RegexDialect string `json:"regexDialect"`
	// InvalidRegexExact makes a regex matcher that does not compile an exact string.
	InvalidRegexExact bool `json:"invalidRegexExact"`
	// CommandVars maps a $NAME substituted in commands (and exported) to a stdin field.
	CommandVars map[string]string `json:"commandVars"`
	// SettingsBlock is the settings key of the {enabled, disabled} block; "" for none.
	SettingsBlock string `json:"settingsBlock"`
	// Unfired maps each event of the engine that dsh never fires to why.
	Unfired map[string]string `json:"unfired"`
	// Pending maps each event of the engine that dsh has the capability for but does not
	// fire yet to where it would fire.
	Pending map[string]string `json:"pending"`
	// ToolInputs are, per tool of the engine's own, how the engine writes its input to a
	// hook: the keys in order and the defaults it fills in.
	ToolInputs map[string]ToolInput `json:"toolInputs"`
	// SuspectCapture is what JSON output counts for when a process the hook left running
	// kept its output open: "honour" or "harmlessOnly".
	SuspectCapture string `json:"suspectCapture"`
	// Handlers are the handler types the engine runs besides "command", by type.
	Handlers map[string]*HandlerType `json:"handlers"`
	// RuleTools are, per tool, where a permission rule's specifier is read and how.
	RuleTools map[string]RuleTool `json:"ruleTools"`
	// IfEvents are the events at which a handler's "if" rule is tested.
	IfEvents []string `json:"ifEvents"`
	// OnFailure is what "onFailure": "block" does; nil: the dialect has no onFailure.
	OnFailure *OnFailure `json:"onFailure"`
	// ContextLimit is how a handler's additionalContextLimit spills a longer context; nil:
	// the dialect has no such field.
	ContextLimit *ContextLimit `json:"contextLimit"`
	// AsyncRewake says a handler may set "asyncRewake": awaited, only its exit 2 counts.
	AsyncRewake  bool          `json:"asyncRewake"` // Instructions are the engine's instruction files and their placement; nil: none.
	Instructions *Instructions `json:"instructions"`
	// Commands are the engine's custom slash commands; nil: none.
	Commands *Commands `json:"commands"`
	// Permissions are the engine's permission settings and modes; nil: none dsh reads.
	Permissions *Permissions `json:"permissions"`
	// ToolPolicy is how the engine's settings lists and policy files narrow its toolset;
	// nil: none dsh reads.
	ToolPolicy *ToolPolicy `json:"toolPolicy"`
	// MCPToolName is the name the engine gives an MCP server's tool ({server}, {tool});
	// empty: "mcp__{server}__{tool}".
	MCPToolName string `json:"mcpToolName"`
}

// ToolPolicy is how an engine's settings lists and policy rules narrow its toolset (spec
// #ToolPolicy).
type ToolPolicy struct {
	// Key is the settings key of the lists; Core and Exclude name them.
	Key     string `json:"key"`
	Core    string `json:"core"`
	Exclude string `json:"exclude"`
	// CorePriority, CoreOthersPriority and ExcludePriority rank the lists' rules.
	CorePriority       float64 `json:"corePriority"`
	CoreOthersPriority float64 `json:"coreOthersPriority"`
	ExcludePriority    float64 `json:"excludePriority"`
	// Shell are the shell tool's names.
	Shell []string `json:"shell"`
	// Denied, DeniedWith and Unanswered are the texts the model reads.
	Denied     string `json:"denied"`
	DeniedWith string `json:"deniedWith"`
	Unanswered string `json:"unanswered"`
	// DisplayNames are the tools' display names.
	DisplayNames map[string]string `json:"displayNames"`
	// Dirs are the policy files' directories, in load order.
	Dirs []PolicyDir `json:"dirs"`
	// MaxPriority bounds a policy rule's priority.
	MaxPriority int `json:"maxPriority"`
	// Mode is the approval mode dsh's runs stand for.
	Mode string `json:"mode"`
	// CatchAll is the engine's own rule below every rule dsh reads.
	CatchAll PolicyRule `json:"catchAll"`
	// MCPPrefix begins an MCP tool's name.
	MCPPrefix string `json:"mcpPrefix"`
	// Unsupported are the restricting settings dsh does not honour, by dotted path, each
	// with why.
	Unsupported map[string]string `json:"unsupported"`
}

// PolicyDir is one directory of policy files.
type PolicyDir struct {
	Path   string `json:"path"`
	Base   string `json:"base"`
	Tier   int    `json:"tier"`
	Name   string `json:"name"`
	Secure bool   `json:"secure"`
}

// PolicyRule is a rule the engine adds itself.
type PolicyRule struct {
	Decision string  `json:"decision"`
	Priority float64 `json:"priority"`
}

// Permissions are an engine's permission rules and modes (spec #Permissions).
type Permissions struct {
	// Key is the settings key of the {allow, ask, deny, defaultMode} block.
	Key string `json:"key"`
	// Untrusted are the lists an untrusted project's own settings file cannot set.
	Untrusted []string `json:"untrusted"`
	// Modes are the permission modes by name.
	Modes map[string]PermissionMode `json:"modes"`
	// Unsupported are the engine's modes dsh does not have, each with why.
	Unsupported map[string]string `json:"unsupported"`
	// Denied is the text of a denied call, per tool ("*": any other).
	Denied map[string]string `json:"denied"`
	// WholeDenied is the text of a call to a tool a deny rule names whole.
	WholeDenied string `json:"wholeDenied"`
	// WholeDeniedHidden says a tool a deny rule names whole is not offered to the model.
	WholeDeniedHidden bool `json:"wholeDeniedHidden"`
	// Unanswered is the text of an ask no one answers, per tool ("*": any other).
	Unanswered map[string]string `json:"unanswered"`
	// RuleAsked is the text of an ask rule's ask no one answers, per tool ("*": any other).
	RuleAsked map[string]string `json:"ruleAsked"`
	// RulesAs names, per tool, the tool whose specifier rules decide its calls.
	RulesAs map[string]string `json:"rulesAs"`
}

// PermissionMode is what one permission mode does with a call the rules do not decide.
type PermissionMode struct {
	// Allow are the rules whose calls run without asking.
	Allow []string `json:"allow"`
	// Refuse are the rules whose calls the mode refuses, with Refused's text.
	Refuse  []string `json:"refuse"`
	Refused string   `json:"refused"`
	// Otherwise is "allow", "ask" or "deny": what the mode does with any other call.
	Otherwise string `json:"otherwise"`
	// Unanswered, when set, is the text of every ask under the mode.
	Unanswered string `json:"unanswered"`
}

// RuleTool is where a permission rule's specifier is read in one tool's input.
type RuleTool struct {
	// Field is the input key the specifier is matched against.
	Field string `json:"field"`
	// Kind is how: "command", "path", "glob", "domain" or "exact".
	Kind string `json:"kind"`
}

// OnFailure is how "onFailure": "block" turns a failed hook into a block.
type OnFailure struct {
	// IgnoredOn are the events at which the option does nothing.
	IgnoredOn []string `json:"ignoredOn"`
	// Failed and TimedOut begin the reason; Because follows them after "; ".
	Failed   string `json:"failed"`
	TimedOut string `json:"timedOut"`
	Because  string `json:"because"`
}

// Instructions is how an engine reads its instruction files and places their text.
type Instructions struct {
	// Files are the files read, in order.
	Files []InstructionFile `json:"files"`
	// Dirs is "workspace" or "parents": where the files of base "dirs" are looked for.
	Dirs string `json:"dirs"`
	// ImportDepth is how many "@path" hops a file may import (0: none).
	ImportDepth int `json:"importDepth"`
	// MaxBytes caps the bytes read of all the files together (0: no cap).
	MaxBytes int `json:"maxBytes"`
	// Entry, Separator and Wrap make the text: each file's entry, joined, wrapped.
	Entry     string `json:"entry"`
	Separator string `json:"separator"`
	Wrap      string `json:"wrap"`
}

// InstructionFile is one instruction file an engine reads.
type InstructionFile struct {
	// Path is the file's path under its base.
	Path string `json:"path"`
	// Base is "home" or "dirs".
	Base string `json:"base"`
	// Kind is the engine's name for the file's scope (User, Project, Local).
	Kind string `json:"kind"`
	// Label is the kind's label in the entry.
	Label string `json:"label"`
}

// Commands is how an engine reads and expands its custom slash commands.
type Commands struct {
	// Dirs are the directories of command files, in lookup order.
	Dirs []CommandDir `json:"dirs"`
	// Separator joins a subdirectory to a command's name.
	Separator string `json:"separator"`
	// Texts are the text blocks an expanded prompt becomes.
	Texts []string `json:"texts"`
	// ArgsLine is {argsLine} when there are arguments; without, it is empty.
	ArgsLine string `json:"argsLine"`
	// AppendArgs is added to a body without placeholders when arguments are given.
	AppendArgs string `json:"appendArgs"`
}

// CommandDir is one directory of command files.
type CommandDir struct {
	// Path is the directory under its base.
	Path string `json:"path"`
	// Base is "home" or "workspace".
	Base string `json:"base"`
	// Source is the command_source reported for a command found here.
	Source string `json:"source"`
	// Trust says the directory is read only when the project's files are trusted.
	Trust bool `json:"trust"`
}

// HandlerType is what a dialect says about one handler type other than "command".
type HandlerType struct {
	// DefaultTimeoutSec is the timeout of a handler of the type that sets none.
	DefaultTimeoutSec int `json:"defaultTimeoutSec"`
	// EventTimeoutSec gives the handlers of the type at the events it names another
	// default timeout.
	EventTimeoutSec map[string]int `json:"eventTimeoutSec"`
	// Refused, when set, says why dsh refuses a handler of the type at load.
	Refused string `json:"refused"`
	// RefusedAt are the events at which a handler of the type is refused, each with why.
	RefusedAt map[string]string `json:"refusedAt"`
	// Placeholders is how an mcp_tool input reads ${path}: "text" or "typed".
	Placeholders string `json:"placeholders"`
	// OnFailure says a handler may set "onFailure": "block".
	OnFailure bool `json:"onFailure"`
	// OnFailureBecause replaces the table's OnFailure.Because for a handler of the type.
	OnFailureBecause string `json:"onFailureBecause"`
	// PlainAnswer replaces a plain answer's text as a context ("{hook}": the hook's name).
	PlainAnswer string `json:"plainAnswer"`
	// SystemPrompt is a prompt handler's system prompt.
	SystemPrompt string `json:"systemPrompt"`
	// AnswerSchema is the JSON Schema of a prompt handler's answer.
	AnswerSchema string `json:"answerSchema"`
	// Conversation, when set, is how a prompt handler judges the conversation.
	Conversation *ConversationPrompt `json:"conversation"`
	// Verifier, when set, is how an agent handler's verifier runs.
	Verifier *AgentVerifier `json:"verifier"`
}

// AgentVerifier is how an agent handler's verifier agent runs (spec #AgentVerifier).
type AgentVerifier struct {
	// Intro opens its system prompt ("{event}": the hook's event), StopIntro at StopEvents.
	Intro      string   `json:"intro"`
	StopEvents []string `json:"stopEvents"`
	StopIntro  string   `json:"stopIntro"`
	// Transcript says where the transcript is ("{path}"), NoTranscript that there is none.
	Transcript   string `json:"transcript"`
	NoTranscript string `json:"noTranscript"`
	// AnswerTool and AnswerDescription name and describe the verdict's tool.
	AnswerTool        string `json:"answerTool"`
	AnswerDescription string `json:"answerDescription"`
	// WithoutTools are the session's tools it is not offered.
	WithoutTools []string `json:"withoutTools"`
	// MaxTurns bounds its model requests.
	MaxTurns int `json:"maxTurns"`
	// Enforce continues a verifier that ended without an answer, EnforceTimes at most.
	Enforce      string `json:"enforce"`
	EnforceTimes int    `json:"enforceTimes"`
	// NotMet is the block reason of ok:false ("{reason}").
	NotMet string `json:"notMet"`
	// AgentID is the verifier's agent id as its calls' hooks see it ("{uuid}": a random
	// UUID; "": none).
	AgentID string `json:"agentId"`
}

// ConversationPrompt is how a prompt handler judges the session's conversation at some
// events.
type ConversationPrompt struct {
	// Events are the events at which it does.
	Events []string `json:"events"`
	// SystemPrompt replaces the handler type's there.
	SystemPrompt string `json:"systemPrompt"`
	// Condition is the user message after the conversation ("{prompt}": the prompt).
	Condition string `json:"condition"`
}

// ToolInput is how an engine writes one of its own tools' input to a hook.
type ToolInput struct {
	// Keys are the input's keys in the engine's order.
	Keys []string `json:"keys"`
	// Defaults are the JSON values filled in for absent keys.
	Defaults map[string]json.RawMessage `json:"defaults"`
}

// BridgeEvent maps one external event onto one extension point.
type BridgeEvent struct {
	// Event is the external event name, e.g. "PreToolUse".
	Event string `json:"-"`
	// Doc is the entry's doc comment.
	Doc string `json:"-"`
	// Pos is where the entry is declared.
	Pos Pos `json:"-"`
	// Point is the canonical extension point.
	Point string `json:"point"`
	// Input and Output are the wire record names of stdin and stdout.
	Input  string `json:"input"`
	Output string `json:"output"`
	// Matcher is the input field a matcher tests; "" means matchers are ignored.
	Matcher string `json:"matcher"`
	// MatcherKind is "regex", "exact" or "" (the dialect's own rule).
	MatcherKind string `json:"matcherKind"`
	// PlainStdoutContext says whether plain stdout on exit 0 is context.
	PlainStdoutContext bool `json:"plainStdoutContext"`
	// BlockInjects says a block here adds to the turn (a suspect capture's is refused).
	BlockInjects bool `json:"blockInjects"`
	// HarmlessContexts says exit-0 contexts here are harmless in a suspect capture.
	HarmlessContexts bool `json:"harmlessContexts"`
	// FallbackReason is the reason of a block that carries none.
	FallbackReason string `json:"fallbackReason"`
	// Scope is the output path of the event name gating the event-specific fields.
	Scope string `json:"scope"`
	// Halt says whether continue:false halts the turn at this event.
	Halt bool `json:"halt"`
	// HaltReason is the halt reason when continue:false comes without a stopReason.
	HaltReason string `json:"haltReason"`
	// Exit2 is the outcome of exit 2 with a non-blank stderr: "deny", "block" or "error".
	Exit2 string `json:"exit2"`
	// Contexts are the output paths of context strings.
	Contexts []string `json:"contexts"`
	// JoinReasons is "all", "first" or "every".
	JoinReasons string `json:"joinReasons"`
	// Rules decide the outcome; the first that holds wins.
	Rules []*BridgeRule `json:"rules"`
	// Notices are recorded, user-facing fields.
	Notices []*BridgeNotice `json:"notices"`
	// Rewrite reads a hook's rewrite of the call's arguments; nil: none.
	Rewrite *BridgeRewrite `json:"rewrite"`
	// Subject is the value the matcher field carries at Point where the point gives none.
	Subject string `json:"subject"`
	// Results is "success", "failure", "ran" (calls that ran) or "" (every result) at
	// tools/post-execute.
	Results string `json:"results"`
	// CommandsOnly says the event fires at its point only for a prompt the table's
	// commands expand.
	CommandsOnly bool `json:"commandsOnly"`
	// Relayed says the event fires at its point (agent/pre-step) for the prompt a
	// turn-stopping block relays into the turn too.
	Relayed bool `json:"relayed"`
	// Tail is where an event at tools/post-execute reads a tail call; nil: nowhere.
	Tail *BridgeTail `json:"tail"`
	// Also are further extension points the event fires at.
	Also []*BridgeAlso `json:"also"`
	// PassOn is what a sequential hook passes on to the next; nil: the rewrite's stdin.
	PassOn *BridgePassOn `json:"passOn"`
}

// BridgePassOn is what a sequential hook passes on to the hooks after it.
type BridgePassOn struct {
	// Output is the output path of what it passes on.
	Output string `json:"output"`
	// Stdin is the top-level stdin field it updates.
	Stdin string `json:"stdin"`
	// Join appends the output to the stdin field after it; "" merges it shallowly.
	Join string `json:"join"`
}

// BridgeAlso is a further extension point an event fires at.
type BridgeAlso struct {
	// Point is the extension point.
	Point string `json:"point"`
	// Status is the agent/status value the event fires at; "" for any.
	Status string `json:"status"`
	// Subject is the value the matcher field carries there.
	Subject string `json:"subject"`
	// Interactive says it fires there only when the host waits for input between turns.
	Interactive bool `json:"interactive"`
	// Before names the event at Point that this one fires before; "": after it.
	Before string `json:"before"`
	// Engine says it is the real engine's departure from the canonical mapping.
	Engine bool `json:"engine"`
}

// BridgeRewrite reads a hook's rewrite of the call's arguments.
type BridgeRewrite struct {
	// Input is the output path of the new arguments.
	Input string `json:"input"`
	// Mode is the output path whose value "merge" makes them a merge patch.
	Mode string `json:"mode"`
	// Requires is the output path that must equal RequiresIs for the rewrite to count.
	Requires string `json:"requires"`
	// RequiresIs is the value Requires must have.
	RequiresIs string `json:"requiresIs"`
	// Stdin is the stdin field a sequential hook's rewrite updates for the next hook.
	Stdin string `json:"stdin"`
	// Note is appended to the tool's result when a rewrite was applied.
	Note string `json:"note"`
	// NonObjectBlocks makes an input that is present but not an object block the call.
	NonObjectBlocks bool `json:"nonObjectBlocks"`
}

// BridgeRule is one row of an event's decision table.
type BridgeRule struct {
	// When is the output path the rule tests.
	When string `json:"when"`
	// Is is the JSON literal the field must equal; "" means set and not empty.
	Is string `json:"-"`
	// Then is the outcome when the rule holds.
	Then string `json:"then"`
	// Reason is the output path of the reason.
	Reason string `json:"reason"`
	// NeedsReason makes a blank reason an outcome "failed".
	NeedsReason bool `json:"needsReason"`
	// Unless is an output path that must be unset for the rule to hold.
	Unless string `json:"unless"`
}

// BridgeNotice is a field recorded as a user-facing notice.
type BridgeNotice struct {
	// When is the output path of the field.
	When string `json:"when"`
	// Text is the notice; "{value}" stands for the field's value.
	Text string `json:"text"`
}

// BridgeTail is where a hook's output asks for a tail call (#TailCall).
type BridgeTail struct {
	// Output is the output path of the request object.
	Output string `json:"output"`
	// Name is the request's field naming the tool.
	Name string `json:"name"`
	// Arguments is the request's field holding the arguments.
	Arguments string `json:"arguments"`
}

// ContextLimit is how a context longer than its handler's additionalContextLimit is
// spilled to a file (#ContextLimit).
type ContextLimit struct {
	// BytesPerToken is the bytes of one token of the engine's estimate.
	BytesPerToken int `json:"bytesPerToken"`
	// Dir is the directory of the files, under the system's temporary directory.
	Dir string `json:"dir"`
	// SessionField is the stdin field holding the session id.
	SessionField string `json:"sessionField"`
	// Text is what the model reads before the footer ({tokens}, {lines}, {kept}).
	Text string `json:"text"`
	// Marker stands for the cut middle ({tokens}).
	Marker string `json:"marker"`
	// Footer follows the text ({path}); its bytes count against the limit.
	Footer string `json:"footer"`
}
