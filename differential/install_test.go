package differential

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestInstallEngines installs the pinned engines into the cache, if they are not there
// yet, and checks that each reports its pinned version. CI runs it alone in the
// background while it compiles (.ci/run), so that the differential suite finds them
// installed; outside CI a failure to install skips.
func TestInstallEngines(t *testing.T) {
	if testing.Short() {
		t.Skip("installs the real engines; not in -short mode")
	}
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	e, err := Install(ctx, CacheDir(root))
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("cannot install the pinned engines: %v", err)
		}
		t.Skipf("cannot install the pinned engines (CI would fail): %v", err)
	}
	for bin, version := range map[string]string{e.Claude: ClaudeCodeVersion, e.Codex: CodexVersion, e.Gemini: GeminiVersion} {
		cmd := exec.CommandContext(ctx, bin, "--version")
		// No engine may reach the network: its proxy variables lead to a closed port.
		cmd.Env = append(baseEnv(t.TempDir()), trapProxy("http://127.0.0.1:9")...)
		out, err := cmd.CombinedOutput()
		if err != nil || !strings.Contains(string(out), version) {
			t.Errorf("%s --version: %v, %q; want %s", bin, err, out, version)
		}
	}
}
