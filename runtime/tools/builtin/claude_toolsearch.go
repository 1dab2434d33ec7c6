package builtin

import (
	"context"
	"encoding/json"
	"path"
	"regexp"
	"slices"
	"sort"
	"strings"
	"unicode"

	"github.com/dshkit/dsh/generated/dsh"
	"github.com/dshkit/dsh/runtime/tools"
)

// ToolSearch is how an engine offers some of its tools behind its tool search (Claude
// Code's ToolSearch), the "search" block of a [Toolset]: the rows marked deferred (for
// the session's model: ModelTools.Deferred) are declared only once a search loaded them,
// the row with defer_loading is the placeholder the requests declare meanwhile, and the
// row whose impl is claude.tool_search is the search.
type ToolSearch struct {
	// Models are the models (path.Match patterns) the engine defers tools for: those that
	// take tool_reference blocks. Another model gets every tool in full and no search.
	Models []string `json:"models"`
	// MCP says the engine offers MCP servers' tools behind the search too.
	MCP bool `json:"mcp,omitempty"`
	// Reminder is the text that tells the model the deferred tools' names, "{names}"
	// being them one a line, in name order (a <system-reminder> of the first request).
	Reminder string `json:"reminder"`
	// Loaded is the text that follows a result that loaded tools.
	Loaded string `json:"loaded"`
	// NoMatch is the result of a search that found nothing.
	NoMatch string `json:"no_match"`
	// Withdraw is how the engine withdraws the search after a failed request (nil: it
	// does not; see [SearchRetry]).
	Withdraw *Withdrawal `json:"withdraw,omitempty"`
}

// searchFor is the toolset's tool search for o's model, or nil when the toolset has none
// or does not defer tools for the model.
func searchFor(ts Toolset, model string) *ToolSearch {
	if ts.Search == nil || !slices.ContainsFunc(ts.Search.Models, func(p string) bool { ok, _ := path.Match(p, model); return ok }) {
		return nil
	}
	return ts.Search
}

// DeferredReminder is the text that names the deferred tools to the model, as the
// style's toolset words it (its search's Reminder), or "" when o's model gets no tool
// search or names is empty.
func DeferredReminder(o Options, names []string) string {
	s := toolSearch(o)
	if s == nil || len(names) == 0 {
		return ""
	}
	sorted := slices.Sorted(slices.Values(names))
	return strings.ReplaceAll(s.Reminder, "{names}", strings.Join(sorted, "\n"))
}

// DefersMCP says whether o's toolset offers MCP servers' tools behind its tool search for
// o's model: they are registered with tools.LoadDeferred then.
func DefersMCP(o Options) bool {
	s := toolSearch(o)
	return s != nil && s.MCP
}

// toolSearch is the tool search of o's style's toolset for o's model, if any.
func toolSearch(o Options) *ToolSearch {
	all, err := Toolsets()
	if err != nil {
		return nil
	}
	for _, ts := range all {
		if ts.Style == o.Style && o.Style != StyleDSH {
			return searchFor(ts, o.Model)
		}
	}
	return nil
}

// searchResult is ToolSearch's value, Claude Code's (its PostToolUse hooks read it as
// tool_response): the names found, the query, and how many deferred tools there are.
type searchResult struct {
	Matches            []string `json:"matches"`
	Query              string   `json:"query"`
	TotalDeferredTools int      `json:"total_deferred_tools"`
}

// claudeToolSearch is Claude Code's ToolSearch: "select:A,B" finds those tools by name
// (any tool of the registry, deferred or not), other words rank the deferred tools by
// how their names and descriptions hold the words (a "+word" must be in the name), the
// best max_results. The model reads a tool reference for each tool found (a text
// block with toolReference: the Messages API's tool_reference block, which the next
// requests then declare), and the search's Loaded text after the result; or
// NoMatch.
func claudeToolSearch(o Options) tools.Definition {
	s := o.search
	if s == nil {
		s = &ToolSearch{}
	}
	return tools.Definition{
		Name: "ToolSearch",
		Run: func(ctx context.Context, rc *tools.RunContext) (any, error) {
			var in struct {
				Query      string   `json:"query"`
				MaxResults *float64 `json:"max_results"`
			}
			if err := rc.BindArguments(&in); err != nil {
				return nil, tools.NewError(CodeBadInput, err.Error())
			}
			limit := 5
			if in.MaxResults != nil {
				limit = int(*in.MaxResults)
			}
			var visible []tools.Definition
			if o.registry != nil {
				agent := ""
				if a := rc.Exec().AgentID; a != nil {
					agent = *a
				}
				visible = o.registry.Visible(agent)
			}
			var deferred []tools.Definition
			for _, d := range visible {
				if d.Loading == tools.LoadDeferred {
					deferred = append(deferred, d)
				}
			}
			out := searchResult{Matches: []string{}, Query: in.Query, TotalDeferredTools: len(deferred)}
			if names, ok := strings.CutPrefix(strings.TrimSpace(in.Query), "select:"); ok {
				for _, n := range strings.Split(names, ",") {
					if d, ok := findTool(visible, strings.TrimSpace(n)); ok && !slices.Contains(out.Matches, d) {
						out.Matches = append(out.Matches, d)
					}
				}
			} else {
				out.Matches = append(out.Matches, rankTools(deferred, in.Query, limit)...)
			}
			if len(out.Matches) > 0 && s.Loaded != "" {
				if err := rc.DeferContext(dsh.UserMessage{Content: []dsh.ContentBlock{dsh.TextBlock{Text: s.Loaded}}, Source: dsh.SourceTool{CallID: rc.Exec().CallID}}); err != nil {
					return nil, err
				}
			}
			return out, nil
		},
		Output: &tools.Output{Render: func(_, value json.RawMessage) ([]dsh.ContentBlock, error) {
			var r searchResult
			if err := json.Unmarshal(value, &r); err != nil {
				return nil, err
			}
			if len(r.Matches) == 0 {
				return []dsh.ContentBlock{dsh.TextBlock{Text: s.NoMatch}}, nil
			}
			out := make([]dsh.ContentBlock, len(r.Matches))
			for i, m := range r.Matches {
				out[i] = dsh.TextBlock{Text: "Tool " + m + " loaded.", ToolReference: &m}
			}
			return out, nil
		}},
		IsConcurrencySafe: func(json.RawMessage) bool { return true },
	}
}

// findTool is the name of the tool of defs called name, else of the one whose name is
// name but for case.
func findTool(defs []tools.Definition, name string) (string, bool) {
	if name == "" {
		return "", false
	}
	if i := slices.IndexFunc(defs, func(d tools.Definition) bool { return d.Name == name }); i >= 0 {
		return defs[i].Name, true
	}
	if i := slices.IndexFunc(defs, func(d tools.Definition) bool { return strings.EqualFold(d.Name, name) }); i >= 0 {
		return defs[i].Name, true
	}
	return "", false
}

// rankTools ranks the deferred tools by the words of query as Claude Code 2.1.328 does:
// for each word, 10 when it is a part of the tool's name (12 for an MCP tool), 5 (6) when
// a part holds it, 10 (12) when it is a coarse part (an MCP name's server or tool), 3 (4)
// when one holds it, 3 when the whole name holds it and nothing else scored, and 2 when the
// description has it as a word. A "+word" must be in the name (or description) for the
// tool to count. The tools that score, best first (ties in name order), at most limit.
func rankTools(deferred []tools.Definition, query string, limit int) []string {
	words := strings.Fields(strings.ToLower(strings.TrimSpace(query)))
	var required, terms []string
	for _, w := range words {
		if r, ok := strings.CutPrefix(w, "+"); ok && r != "" {
			required = append(required, r)
		} else {
			terms = append(terms, w)
		}
	}
	if len(required) > 0 {
		terms = append(slices.Clone(required), terms...)
	}
	type scored struct {
		name  string
		score int
	}
	var out []scored
	for _, d := range deferred {
		n := nameParts(d.Name)
		desc := strings.ToLower(d.Description)
		if !slices.ContainsFunc(required, func(w string) bool { return n.holds(w) || wordIn(w, desc) }) && len(required) > 0 {
			continue
		}
		score := 0
		for _, w := range terms {
			switch {
			case slices.Contains(n.parts, w):
				score += n.weight(10, 12)
			case slices.ContainsFunc(n.parts, func(p string) bool { return strings.Contains(p, w) }):
				score += n.weight(5, 6)
			}
			switch {
			case slices.Contains(n.coarse, w):
				score += n.weight(10, 12)
			case slices.ContainsFunc(n.coarse, func(p string) bool { return strings.Contains(p, w) }):
				score += n.weight(3, 4)
			}
			if score == 0 && strings.Contains(n.full, w) {
				score += 3
			}
			if wordIn(w, desc) {
				score += 2
			}
		}
		if score > 0 {
			out = append(out, scored{d.Name, score})
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].score > out[j].score })
	names := make([]string, 0, min(limit, len(out)))
	for i := 0; i < len(out) && i < limit; i++ {
		names = append(names, out[i].name)
	}
	return names
}

// toolName is a tool's name cut for the search: its words (at case changes, "_" and
// "-"), its coarse parts (an MCP tool's server and tool, else the name), and the name,
// all lower case.
type toolName struct {
	parts, coarse []string
	full          string
	mcp           bool
}

func (n toolName) weight(builtin, mcp int) int {
	if n.mcp {
		return mcp
	}
	return builtin
}

// holds says whether w is, or is in, a part of the name.
func (n toolName) holds(w string) bool {
	return slices.ContainsFunc(append(slices.Clone(n.parts), n.coarse...), func(p string) bool { return strings.Contains(p, w) })
}

func nameParts(name string) toolName {
	n := toolName{full: strings.ToLower(name)}
	rest, isMCP := strings.CutPrefix(name, "mcp__")
	n.mcp = isMCP
	if isMCP {
		for _, c := range strings.Split(rest, "__") {
			n.coarse = append(n.coarse, strings.ToLower(c))
		}
	} else {
		n.coarse = []string{n.full}
	}
	var word []rune
	flush := func() {
		if len(word) > 0 {
			n.parts = append(n.parts, strings.ToLower(string(word)))
			word = word[:0]
		}
	}
	runes := []rune(rest)
	for i, r := range runes {
		switch {
		case r == '_' || r == '-':
			flush()
			continue
		case unicode.IsUpper(r) && i > 0 && (unicode.IsLower(runes[i-1]) || i+1 < len(runes) && unicode.IsLower(runes[i+1])):
			flush()
		}
		word = append(word, r)
	}
	flush()
	return n
}

// wordIn says whether text (lower case) has w as a word.
func wordIn(w, text string) bool {
	re, err := regexp.Compile(`(^|[^a-z0-9_])` + regexp.QuoteMeta(w) + `($|[^a-z0-9_])`)
	return err == nil && re.MatchString(text)
}
