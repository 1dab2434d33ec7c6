package cli

import (
	"strings"
)

// pluginDirs is a repeatable --plugin-dir flag.
type pluginDirs []string

func (p *pluginDirs) String() string     { return strings.Join(*p, ",") }
func (p *pluginDirs) Set(v string) error { *p = append(*p, v); return nil }
