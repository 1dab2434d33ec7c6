package hookproto

import (
	"fmt"
	"io"
)

// MaxConfigBytes bounds a hook configuration file: LoadFile refuses a larger one.
const MaxConfigBytes = 16 << 20

// ReadAtMost reads r whole when it holds at most max bytes, and fails with an error
// saying so, without reading further, when it holds more.
func ReadAtMost(r io.Reader, max int64) ([]byte, error) {
	data, err := io.ReadAll(io.LimitReader(r, max+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > max {
		return nil, fmt.Errorf("larger than %d bytes", max)
	}
	return data, nil
}
