package cli

import (
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
)

// printVersion prints "dsh VERSION (REVISION) GOVERSION": the module version the binary
// was built from ((devel) for a checkout), the VCS revision when the build recorded it,
// and the Go toolchain.
func printVersion(w io.Writer) {
	version, revision := "(devel)", ""
	if info, ok := debug.ReadBuildInfo(); ok {
		if v := info.Main.Version; v != "" {
			version = v
		}
		dirty := false
		for _, s := range info.Settings {
			switch s.Key {
			case "vcs.revision":
				revision = s.Value
			case "vcs.modified":
				dirty = s.Value == "true"
			}
		}
		if len(revision) > 12 {
			revision = revision[:12]
		}
		if revision != "" && dirty {
			revision += "+dirty"
		}
	}
	if revision != "" {
		fmt.Fprintf(w, "dsh %s (%s) %s\n", version, revision, runtime.Version())
		return
	}
	fmt.Fprintf(w, "dsh %s %s\n", version, runtime.Version())
}
