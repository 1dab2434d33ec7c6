//go:build !unix

package cli

import "errors"

// mkfifo reports that the platform has no FIFOs.
func mkfifo(string) error { return errors.ErrUnsupported }
