package main

import (
	"context"
	"os"
	"slices"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// envMCP is a stdio MCP server (the scripts' envmcp command) that writes its environment
// to $ENVDUMP, one variable a line, and serves one tool.
func envMCP() {
	env := os.Environ()
	slices.Sort(env)
	if err := os.WriteFile(os.Getenv("ENVDUMP"), []byte(strings.Join(env, "\n")+"\n"), 0o644); err != nil {
		os.Exit(1)
	}
	s := sdk.NewServer(&sdk.Implementation{Name: "envmcp", Version: "1"}, nil)
	sdk.AddTool(s, &sdk.Tool{Name: "ping", Description: "answers pong"},
		func(ctx context.Context, req *sdk.CallToolRequest, in struct{}) (*sdk.CallToolResult, any, error) {
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "pong"}}}, nil, nil
		})
	_ = s.Run(context.Background(), &sdk.StdioTransport{})
	os.Exit(0)
}

func TestFilterEnv(t *testing.T) {
	env := []string{"AWS_SECRET=1", "AWS=2", "GITHUB_TOKEN=3", "TOKEN=4", "PATH=/bin", "X=a=b", "aws_lower=5"}
	got := filterEnv(env, []string{"AWS_*", "*_TOKEN"})
	want := []string{"AWS=2", "TOKEN=4", "PATH=/bin", "X=a=b", "aws_lower=5"}
	if !slices.Equal(got, want) {
		t.Errorf("filterEnv = %q, want %q", got, want)
	}
	var d envDeny
	for _, bad := range []string{"", "A=B", "[x"} {
		if d.Set(bad) == nil {
			t.Errorf("--env-deny %q accepted", bad)
		}
	}
	if d.childEnv() != nil {
		t.Error("no pattern: want nil (each one's default environment)")
	}
}
