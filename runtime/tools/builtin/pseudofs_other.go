//go:build !linux

package builtin

import "os"

// pseudoFS reports false where there is no procfs to tell apart; the regular-file check
// and the byte cap still hold.
func pseudoFS(*os.File) bool { return false }
