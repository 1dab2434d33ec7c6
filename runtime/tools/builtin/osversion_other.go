//go:build !unix

package builtin

import "runtime"

// osVersion is the system's name (its release is not read off unix).
func osVersion() string { return runtime.GOOS }
