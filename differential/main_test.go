package differential

import (
	"context"
	"os"
	"testing"
)

// TestMain makes the test binary the runs' MCP hook server when MCPServerEnv is set.
func TestMain(m *testing.M) {
	if dir := os.Getenv(MCPServerEnv); dir != "" {
		_ = ServeMCPHooks(context.Background(), dir, os.Getenv(MCPResourcesEnv) == "1")
		return
	}
	os.Exit(m.Run())
}
