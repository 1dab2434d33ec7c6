package main

import (
	"strings"
	"testing"
)

// TestVet vets a package whose Linux code is clean for the three platforms: Linux reports
// nothing, Windows its type error, darwin its printf misuse, each with file and line.
func TestVet(t *testing.T) {
	for _, tc := range []struct{ goos, goarch, want string }{
		{"linux", "amd64", ""},
		{"windows", "amd64", "common.go:6:29: cannot use name() (value of type int) as string value"},
		{"darwin", "arm64", "name_darwin.go:5:42: fmt.Sprintf format %d has arg \"darwin\" of wrong type string (printf)"},
	} {
		var out strings.Builder
		n, err := vet(&out, tc.goos, tc.goarch, []string{"./testdata/perOS"})
		if err != nil {
			t.Fatalf("%s/%s: %v", tc.goos, tc.goarch, err)
		}
		if tc.want == "" {
			if n != 0 {
				t.Errorf("%s/%s: %d problems, want none:\n%s", tc.goos, tc.goarch, n, out.String())
			}
			continue
		}
		if n == 0 || !strings.Contains(out.String(), tc.want) || !strings.HasPrefix(out.String(), tc.goos+"/"+tc.goarch+": ") {
			t.Errorf("%s/%s: got %d problems:\n%s\nwant one with %q", tc.goos, tc.goarch, n, out.String(), tc.want)
		}
	}
}
