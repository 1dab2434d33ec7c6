package builtin

import (
	"slices"
	"strings"

	"github.com/dshkit/dsh/runtime/tools"
)

// UnknownTool is how an engine refuses a model's call of a tool it does not have (a
// toolset's "unknown"): before any hook runs, with Text as the call's result.
type UnknownTool struct {
	// Text is what the model reads: {tool} is the name the call gave, {suggestion} the
	// Suggest words ("" without them).
	Text string `json:"text"`
	// Suggest, when set, names the offered tools nearest the call's name (Gemini CLI's
	// "Did you mean one of: …").
	Suggest *Suggestion `json:"suggest,omitempty"`
}

// Suggestion words the offered tools nearest an unknown name: the Max tools of the least
// edit (Levenshtein) distance to it, ties in the order the engine offers its tools.
type Suggestion struct {
	// Max is how many tools are named at most.
	Max int `json:"max"`
	// One words a single name, Many several: {names} are the names, each as Name ({name}
	// the tool's name), joined with Separator.
	One       string `json:"one"`
	Many      string `json:"many"`
	Name      string `json:"name"`
	Separator string `json:"separator"`
}

// Words is the text a call of the unknown tool name gets, offered being the names of the
// tools offered, in the engine's order.
func (u *UnknownTool) Words(name string, offered []string) string {
	suggestion := ""
	if s := u.Suggest; s != nil && s.Max > 0 && len(offered) > 0 {
		type near struct {
			name string
			d    int
		}
		all := make([]near, len(offered))
		for i, o := range offered {
			all[i] = near{o, levenshtein(name, o)}
		}
		slices.SortStableFunc(all, func(a, b near) int { return a.d - b.d })
		all = all[:min(s.Max, len(all))]
		names := make([]string, len(all))
		for i, n := range all {
			names[i] = strings.ReplaceAll(s.Name, "{name}", n.name)
		}
		words := s.Many
		if len(names) == 1 {
			words = s.One
		}
		suggestion = strings.ReplaceAll(words, "{names}", strings.Join(names, s.Separator))
	}
	return strings.NewReplacer("{tool}", name, "{suggestion}", suggestion).Replace(u.Text)
}

// levenshtein is the edit distance between a and b, counted in runes (the engines' tool
// names are ASCII, where runes and JavaScript's UTF-16 units agree).
func levenshtein(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	row := make([]int, len(rb)+1)
	for j := range row {
		row[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		prev := row[0]
		row[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur := min(row[j]+1, row[j-1]+1, prev+cost)
			prev, row[j] = row[j], cur
		}
	}
	return row[len(rb)]
}

// UnknownToolText returns, for a style whose toolset says how its engine refuses a call
// of a tool it does not have, the text for tools.WithUnknownTool: the toolset's words,
// the offered tools being those registry shows the agent, in the toolset's order (any
// other, an MCP server's, after them in name order). It returns nil for a style without
// a toolset or without such words.
func UnknownToolText(style Style, registry *tools.Registry) (func(agentID, name string) string, error) {
	all, err := Toolsets()
	if err != nil {
		return nil, err
	}
	i := slices.IndexFunc(all, func(ts Toolset) bool { return ts.Style == style })
	if i < 0 || all[i].Unknown == nil {
		return nil, nil
	}
	ts := all[i]
	rank := map[string]int{}
	for j, r := range ts.Tools {
		rank[r.Name] = j + 1
	}
	return func(agentID, name string) string {
		var offered []string
		for _, d := range registry.Visible(agentID) {
			if d.Loading != tools.LoadPlaceholder {
				offered = append(offered, d.Name)
			}
		}
		// Visible is in name order: a stable sort by rank keeps the others after the
		// toolset's, in name order.
		slices.SortStableFunc(offered, func(a, b string) int {
			ra, rb := rank[a], rank[b]
			if ra == 0 {
				ra = len(ts.Tools) + 1
			}
			if rb == 0 {
				rb = len(ts.Tools) + 1
			}
			return ra - rb
		})
		return ts.Unknown.Words(name, offered)
	}, nil
}
