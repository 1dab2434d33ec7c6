package session

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/dshkit/dsh/generated/dsh"
)

// ErrIncompatibleVersion is wrapped by Open's error for a log written under a spec of
// another major version than dsh.SpecVersion.
var ErrIncompatibleVersion = errors.New("session: log of an incompatible spec version")

// unversioned is the version of a log whose session/created records none: it was
// written before the spec declared versions, under the surface of 1.0.0.
const unversioned = "1.0.0"

// readsMajors are, per major version of the spec, the earlier majors whose logs a build
// of it reads: a major bump whose breaking changes are all hook behaviour (HOOK findings
// of dshgen breaking) leaves the session log's wire as it was, and spec/CHANGELOG.md says
// so in its entry. 2.0.0 changed what two hook output fields do, and 3.0.0 two hook
// notices, not the log.
var readsMajors = map[int][]int{2: {1}, 3: {2, 1}}

// checkVersion checks the first event of a log: a session/created written under a spec
// of another major version than this build's (dsh.SpecVersion) is refused, in one line
// naming both, unless readsMajors says this major reads that one's logs. Minor versions
// of the same major are compatible both ways: a newer one only adds (optional fields,
// session-event types), which readers tolerate. A first event of another type is not
// this function's concern.
func checkVersion(first Event) error {
	if first.Type != dsh.SessionCreatedType {
		return nil
	}
	var d struct {
		SpecVersion string `json:"specVersion"`
	}
	if err := json.Unmarshal(first.Data, &d); err != nil {
		return fmt.Errorf("%w: session/created: %w", ErrCorrupt, err)
	}
	v := d.SpecVersion
	if v == "" {
		v = unversioned
	}
	if m, cur := major(v), major(dsh.SpecVersion); m < 0 || (m != cur && !slices.Contains(readsMajors[cur], m)) {
		return fmt.Errorf("%w: the log was written under spec %s, this dsh reads spec %s", ErrIncompatibleVersion, v, dsh.SpecVersion)
	}
	return nil
}

// major is the major number of a MAJOR.MINOR.PATCH version, or -1.
func major(v string) int {
	m, _, _ := strings.Cut(v, ".")
	n, err := strconv.Atoi(m)
	if err != nil || n < 0 || strings.Count(v, ".") != 2 {
		return -1
	}
	return n
}
