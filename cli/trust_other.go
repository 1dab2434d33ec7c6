//go:build !unix

package cli

import (
	"fmt"
	"io/fs"
)

// checkOwned refuses a trust file that is not a regular file (where there are no Unix
// owners and modes to check).
func checkOwned(path string, st fs.FileInfo) error {
	if !st.Mode().IsRegular() {
		return fmt.Errorf("%s: not a regular file; refusing to trust anything from it", path)
	}
	return nil
}
