package cli

import (
	"strings"

	"github.com/dshkit/dsh/bridges/dialect"
	"github.com/dshkit/dsh/bridges/dialects"
)

// dialectNamed returns the registered dialect named name (bridges/dialects). The
// --dialect flags accept registered names only; any other name gets the default dialect.
func dialectNamed(name string) *dialect.Descriptor {
	reg := dialects.All()
	if d, ok := reg.Lookup(name); ok {
		return d
	}
	d, _ := reg.Lookup(dialects.Default())
	return d
}

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
