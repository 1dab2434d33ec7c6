// Command dsh runs and inspects dsh sessions and hooks: the command line of package cli,
// with no plugins compiled in (a custom build adds its own: see cli.WithPlugins).
package main

import "github.com/dshkit/dsh/cli"

func main() { cli.Main() }
