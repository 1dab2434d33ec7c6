package cli

import (
	"strings"

	"github.com/dshkit/dsh/bridges/dialect"
	"github.com/dshkit/dsh/bridges/dialects"
)

// dialectNames are the registered dialects' names, for --dialect.
func dialectNames() []string { return dialects.All().Names() }

// dialectsWith names the dialects for which has holds, joined with " or ".
func dialectsWith(has func(*dialect.Descriptor) bool) string {
	var out []string
	for _, d := range dialects.All() {
		if has(d) {
			out = append(out, d.Name)
		}
	}
	return strings.Join(out, " or ")
}
