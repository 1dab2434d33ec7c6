// Package breaking compares two versions of a dsh spec tree and reports what the newer one
// breaks for what was built on the older one: session logs and hook JSON that no longer
// decode or decode to something else (WIRE), Go code compiled against the older generated
// surface that no longer compiles (GO), and hook configurations that now do something else
// (HOOK). It is the library of `dshgen breaking`.
//
// The comparison has two parts. CUE subsumption answers, per definition, whether the new
// schema accepts every value the old one accepted (gen/load.Schemas.Accepts); the IR
// comparison sees what subsumption cannot: JSON and Go names, discriminators, defaults,
// list elements, newly required fields, authority kinds, listener signatures and the
// bridge tables. Every finding names a rule of Rules.
package breaking

// Category is the kind of consumer a breaking change hurts.
type Category string

// The categories of rules.
const (
	// Wire: a session log or a hook's JSON written under the old spec no longer decodes,
	// or decodes to something else.
	Wire Category = "WIRE"
	// Go: code compiled against the old generated Go no longer compiles.
	Go Category = "GO"
	// Hook: an existing hook configuration now does something else.
	Hook Category = "HOOK"
)

// Rule is one kind of breaking change.
type Rule struct {
	// ID names the rule in findings, e.g. "WIRE_FIELD_REMOVED".
	ID string `json:"id"`
	// Category is the rule's category.
	Category Category `json:"category"`
	// Doc says, in one line, what the rule detects and why it breaks.
	Doc string `json:"doc"`
}

// The rule IDs.
const (
	WireFieldRemoved         = "WIRE_FIELD_REMOVED"
	WireFieldJSONRenamed     = "WIRE_FIELD_JSON_RENAMED"
	WireFieldMadeRequired    = "WIRE_FIELD_MADE_REQUIRED"
	WireRequiredFieldAdded   = "WIRE_REQUIRED_FIELD_ADDED"
	WireFieldTypeChanged     = "WIRE_FIELD_TYPE_CHANGED"
	WireFieldNullRemoved     = "WIRE_FIELD_NULL_REMOVED"
	WireDefaultChanged       = "WIRE_DEFAULT_CHANGED"
	WireRecordClosed         = "WIRE_RECORD_CLOSED"
	WireExclusiveAdded       = "WIRE_EXCLUSIVE_ADDED"
	WireEnumValueRemoved     = "WIRE_ENUM_VALUE_REMOVED"
	WireVariantRemoved       = "WIRE_VARIANT_REMOVED"
	WireDiscriminatorChanged = "WIRE_DISCRIMINATOR_CHANGED"
	WireSessionEventRemoved  = "WIRE_SESSION_EVENT_REMOVED"
	WireSessionEventData     = "WIRE_SESSION_EVENT_DATA_CHANGED"
	WireSchemaNarrowed       = "WIRE_SCHEMA_NARROWED"
	GoTypeRemoved            = "GO_TYPE_REMOVED"
	GoTypeKindChanged        = "GO_TYPE_KIND_CHANGED"
	GoFieldRemoved           = "GO_FIELD_REMOVED"
	GoFieldTypeChanged       = "GO_FIELD_TYPE_CHANGED"
	GoEnumConstRemoved       = "GO_ENUM_CONST_REMOVED"
	GoVariantRemoved         = "GO_VARIANT_REMOVED"
	GoVariantAdded           = "GO_VARIANT_ADDED"
	GoVariantsReordered      = "GO_VARIANTS_REORDERED"
	GoAccessorsRemoved       = "GO_ACCESSORS_REMOVED"
	GoEventRemoved           = "GO_EVENT_REMOVED"
	GoListenerChanged        = "GO_LISTENER_CHANGED"
	GoAuthorityChanged       = "GO_AUTHORITY_CHANGED"
	GoSessionEventRenamed    = "GO_SESSION_EVENT_RENAMED"
	HookDialectRemoved       = "HOOK_DIALECT_REMOVED"
	HookEventRemoved         = "HOOK_EVENT_REMOVED"
	HookEventPointChanged    = "HOOK_EVENT_POINT_CHANGED"
	HookExitCodeChanged      = "HOOK_EXIT_CODE_CHANGED"
	HookRulesChanged         = "HOOK_RULES_CHANGED"
	HookTimeoutChanged       = "HOOK_TIMEOUT_CHANGED"
	HookMatcherChanged       = "HOOK_MATCHER_CHANGED"
	HookIOChanged            = "HOOK_IO_CHANGED"
	HookHaltChanged          = "HOOK_HALT_CHANGED"
	HookContextsChanged      = "HOOK_CONTEXTS_CHANGED"
	HookReasonsChanged       = "HOOK_REASONS_CHANGED"
	HookRewriteChanged       = "HOOK_REWRITE_CHANGED"
	HookNoticesChanged       = "HOOK_NOTICES_CHANGED"
	HookPointDefaultChanged  = "HOOK_POINT_DEFAULT_CHANGED"
)

// Rules lists every rule, by category then ID order of presentation.
var Rules = []Rule{
	{WireFieldRemoved, Wire, "a field of an encoded record was removed: JSON written with it no longer decodes (records are closed)"},
	{WireFieldJSONRenamed, Wire, "a field keeps its Go name but changes its JSON name: the old name no longer decodes"},
	{WireFieldMadeRequired, Wire, "an optional or regular field became required: JSON written without it no longer decodes"},
	{WireRequiredFieldAdded, Wire, "a record gained a required field: JSON written before it no longer decodes"},
	{WireFieldTypeChanged, Wire, "a field's JSON type changed: values written under the old type no longer decode"},
	{WireFieldNullRemoved, Wire, "a field no longer accepts null: JSON holding null there no longer decodes"},
	{WireDefaultChanged, Wire, "the default of a regular field or an enum changed or went away: an absent value now decodes to something else"},
	{WireRecordClosed, Wire, "an open record (tolerating unknown fields) became closed: JSON with extra fields no longer decodes"},
	{WireExclusiveAdded, Wire, "fields that could be set together became mutually exclusive: JSON setting both no longer decodes"},
	{WireEnumValueRemoved, Wire, "an enum value was removed: JSON holding it no longer decodes"},
	{WireVariantRemoved, Wire, "a union variant was removed: JSON of that kind no longer decodes"},
	{WireDiscriminatorChanged, Wire, "a union's discriminator field, or a variant's discriminator value, changed: old JSON decodes to no variant or to another"},
	{WireSessionEventRemoved, Wire, "a session-event type was removed: logs holding it no longer decode or replay"},
	{WireSessionEventData, Wire, "a session-event type carries another data record: logs written with the old record may no longer decode"},
	{WireSchemaNarrowed, Wire, "CUE subsumption: the new definition does not accept every value the old one did (a tightened bound, pattern or disjunction)"},
	{GoTypeRemoved, Go, "a generated type was removed or renamed: code naming it no longer compiles"},
	{GoTypeKindChanged, Go, "a type changed shape (record, enum, union): its Go type is a different kind of type"},
	{GoFieldRemoved, Go, "a Go field of a record was removed or renamed: code reading or setting it no longer compiles"},
	{GoFieldTypeChanged, Go, "a field's Go type changed (including a pointer becoming a value when optional becomes required): code using it no longer compiles"},
	{GoEnumConstRemoved, Go, "an enum value was removed: its generated constant is gone"},
	{GoVariantRemoved, Go, "a union variant was removed: its struct and its Switch callback are gone"},
	{GoVariantAdded, Go, "a union plugins switch over (a payload's, a wrapper result's or a session event's) gained a variant: its Switch function takes one more callback and exhaustive switches miss a case"},
	{GoVariantsReordered, Go, "a union's variants changed order: its Switch function takes one callback per variant in spec order, so a call passing them in the old order no longer compiles"},
	{GoAccessorsRemoved, Go, "a type no longer asks for its generated accessors (@dsh(accessors)): code calling its Get, With or Append methods no longer compiles"},
	{GoEventRemoved, Go, "an extension point was removed: its On<Go> registration and listener type are gone"},
	{GoListenerChanged, Go, "an extension point's listener signature changed (payload, decision or result type, or its Go stem)"},
	{GoAuthorityChanged, Go, "an extension point's authority kind changed: its listeners have another shape (next, decision, result)"},
	{GoSessionEventRenamed, Go, "a session event's Go stem changed: its <Go>Type constant is gone"},
	{HookDialectRemoved, Hook, "a hook dialect was removed: every configured hook of that dialect stops running"},
	{HookEventRemoved, Hook, "an external hook event is no longer mapped: hooks configured for it stop running"},
	{HookEventPointChanged, Hook, "an external hook event maps onto another extension point: its hooks run at another moment"},
	{HookExitCodeChanged, Hook, "what a hook's exit code 2 means changed (its outcome, blank stderr, or whether JSON still counts)"},
	{HookRulesChanged, Hook, "an event's output rules changed (a field or value maps to another outcome, a rule was removed, added before others or reordered)"},
	{HookTimeoutChanged, Hook, "a dialect's default hook timeout changed: hooks without a timeout are cut at another time"},
	{HookMatcherChanged, Hook, "the input field an event's matchers test changed: configured matchers select other calls"},
	{HookIOChanged, Hook, "how a hook's stdin is written or its stdout read changed (wire package, input or output record, JSON detection, invalid JSON)"},
	{HookHaltChanged, Hook, "what continue:false does at an event changed (halt or not, halt reason)"},
	{HookContextsChanged, Hook, "which output becomes model context changed (context paths, plain stdout as context)"},
	{HookReasonsChanged, Hook, "how block reasons are chosen changed (fallback reason, join mode, event scope)"},
	{HookRewriteChanged, Hook, "how a hook's rewrite of a call's arguments is read changed"},
	{HookNoticesChanged, Hook, "which output fields become user-facing notices changed"},
	{HookPointDefaultChanged, Hook, "what an extension point resolves to when no listener decides changed: a hook (or plugin) that abstains now lets something else happen"},
}

// RuleByID returns the rule with the given ID.
func RuleByID(id string) (Rule, bool) {
	for _, r := range Rules {
		if r.ID == id {
			return r, true
		}
	}
	return Rule{}, false
}
