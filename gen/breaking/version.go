package breaking

import (
	"bufio"
	"bytes"
	"fmt"
	"strconv"
	"strings"
)

// Unversioned is the version of a spec that declares none: the spec before versions were
// declared, which is the surface of 1.0.0.
const Unversioned = "1.0.0"

// Major returns the major number of a MAJOR.MINOR.PATCH version ("" counts as
// Unversioned), or -1 when v is not one.
func Major(v string) int {
	if v == "" {
		v = Unversioned
	}
	m, _, ok := strings.Cut(v, ".")
	n, err := strconv.Atoi(m)
	if !ok || err != nil || n < 0 {
		return -1
	}
	return n
}

// ChangelogHas reports whether changelog (Markdown) has a heading for version v: a line
// "## v", "## [v]" or "## v ..." (a date or title may follow).
func ChangelogHas(changelog []byte, v string) bool {
	sc := bufio.NewScanner(bytes.NewReader(changelog))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		rest, ok := strings.CutPrefix(line, "## ")
		if !ok {
			continue
		}
		word, _, _ := strings.Cut(strings.TrimSpace(rest), " ")
		word = strings.TrimPrefix(strings.Trim(word, "[]"), "v")
		if word == v {
			return true
		}
	}
	return false
}

// Announced reports whether the breaking changes of r are allowed: the new spec's major
// version is above the old one's and changelog has an entry for the new version. why
// says, in one line, what is missing or what announced them.
// ref names the old spec in the message (e.g. "HEAD", "testdata/released-spec").
func Announced(r Report, ref string, changelog []byte, changelogName string) (ok bool, why string) {
	ov, nv := orUnversioned(r.OldVersion), orUnversioned(r.NewVersion)
	switch {
	case Major(nv) <= Major(ov):
		return false, fmt.Sprintf("a breaking change needs a major version bump (the spec is %s, %s's is %s) and an entry in %s", nv, ref, ov, changelogName)
	case !ChangelogHas(changelog, nv):
		return false, fmt.Sprintf("the major version bump to %s needs an entry \"## %s\" in %s", nv, nv, changelogName)
	}
	return true, fmt.Sprintf("announced: version %s (from %s) with an entry in %s", nv, ov, changelogName)
}

func orUnversioned(v string) string {
	if v == "" {
		return Unversioned
	}
	return v
}
