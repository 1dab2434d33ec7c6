package sandbox

import (
	"strings"
	"testing"
)

// TestSeatbeltProfile: the macOS profile denies by default, lets the writable roots be
// written but not their read-only subpaths, opens the network only when asked, and takes
// every path as a parameter, so that no directory name changes the profile.
func TestSeatbeltProfile(t *testing.T) {
	evil := `/Users/me/proj") (allow file-write* (subpath "/`
	s := &Sandbox{policy: Policy{Mode: WorkspaceWrite}, writable: []string{evil, "/private/tmp/t"}}
	profile, params := seatbeltProfile(s.writable, []string{evil + "/.git", "/elsewhere/.git"}, false)
	for _, want := range []string{
		"(deny default)",
		`(allow file-write* (require-all (subpath (param "WRITABLE_ROOT_0")) (require-not (subpath (param "WRITABLE_ROOT_0_RO_0")))))`,
		`(allow file-write* (subpath (param "WRITABLE_ROOT_1")))`,
	} {
		if !strings.Contains(profile, want) {
			t.Errorf("the profile lacks %q:\n%s", want, profile)
		}
	}
	if strings.Contains(profile, "network-outbound") || strings.Contains(profile, "/Users/me") || strings.Contains(profile, "elsewhere") {
		t.Errorf("network on, or a path in the profile's text:\n%s", profile)
	}
	wantParams := []string{"-D", "WRITABLE_ROOT_0=" + evil, "-D", "WRITABLE_ROOT_0_RO_0=" + evil + "/.git", "-D", "WRITABLE_ROOT_1=/private/tmp/t"}
	if strings.Join(params, "\x00") != strings.Join(wantParams, "\x00") {
		t.Errorf("params %q, want %q", params, wantParams)
	}
	if p, _ := seatbeltProfile(nil, nil, true); !strings.Contains(p, "(allow network-outbound)") || strings.Contains(p, "file-write* (subpath") {
		t.Errorf("read-only with the network on:\n%s", p)
	}
	args := s.seatbeltArgs("/bin/bash", []string{"bash", "-c", "echo hi"})
	if args[0] != seatbeltExec || args[1] != "-p" || strings.Join(args[len(args)-4:], " ") != "-- /bin/bash -c echo hi" {
		t.Errorf("sandbox-exec arguments %q", args)
	}
}
