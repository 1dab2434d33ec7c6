package hookmap

import (
	"fmt"
	"sort"
	"strings"

	"github.com/dshkit/dsh/gen/emit"
	"github.com/dshkit/dsh/gen/ir"
)

// Coverage renders the Markdown page that lists, for each dialect's table, every hook
// event of its engine and whether dsh fires it: at which extension point (the events),
// not yet and where it would (pending), or never and why (unfired).
func Coverage(bridges []*ir.Bridge, file string) emit.File {
	var b strings.Builder
	fmt.Fprintf(&b, "<!-- %s -->\n\n", emit.Header("bridges/*.cue"))
	b.WriteString("# Hook events of each engine\n\n")
	b.WriteString("Every hook event of each engine that dsh speaks, from its table in `spec/bridges`, and\n")
	b.WriteString("whether dsh fires it: **fires** at the extension point named (see the [event catalog](catalog.md));\n")
	b.WriteString("**not yet**: dsh has the capability and does not fire the event yet, so a hooks file\n")
	b.WriteString("naming it fails to load rather than skip a hook that could stop something; **never**: dsh\n")
	b.WriteString("lacks the capability, so the event's hooks load and never run, and `dsh run` says so once.\n")
	for _, br := range bridges {
		type row struct{ event, status, where string }
		var rows []row
		for _, ev := range br.Events {
			rows = append(rows, row{ev.Event, "fires", "`" + ev.Point + "`"})
		}
		for ev, where := range br.Pending {
			rows = append(rows, row{ev, "not yet", "would fire " + where})
		}
		for ev, why := range br.Unfired {
			rows = append(rows, row{ev, "never", why})
		}
		sort.Slice(rows, func(i, j int) bool { return rows[i].event < rows[j].event })
		fired := len(br.Events)
		fmt.Fprintf(&b, "\n## %s\n\n%d events: %d fire, %d not yet, %d never.\n\n", br.Dialect, len(rows), fired, len(br.Pending), len(br.Unfired))
		b.WriteString("| event | in dsh | where, or why not |\n| --- | --- | --- |\n")
		for _, r := range rows {
			fmt.Fprintf(&b, "| `%s` | %s | %s |\n", r.event, r.status, strings.ReplaceAll(r.where, "|", `\|`))
		}
	}
	return emit.File{Path: file, Data: []byte(b.String())}
}
