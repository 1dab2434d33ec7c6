package llm_test

import (
	"os/exec"
	"strings"
	"testing"
)

// TestNoProviderSDKs: the model seam and the loop stay free of the providers' SDKs (and
// the gRPC they bring), so a plugin module that imports the runtime does not pull them
// into its go.mod; the providers live in runtime/llm/provider.
func TestNoProviderSDKs(t *testing.T) {
	for _, pkg := range []string{"github.com/dshkit/dsh/runtime/llm", "github.com/dshkit/dsh/runtime/loop"} {
		out, err := exec.Command("go", "list", "-deps", pkg).CombinedOutput()
		if err != nil {
			t.Fatalf("go list -deps %s: %v\n%s", pkg, err, out)
		}
		for _, dep := range strings.Fields(string(out)) {
			for _, bad := range []string{"anthropic", "openai", "genai", "grpc"} {
				if strings.Contains(dep, bad) {
					t.Errorf("%s depends on %s", pkg, dep)
				}
			}
		}
	}
}
