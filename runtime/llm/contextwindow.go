package llm

import "strings"

// contextWindows are the context windows of known model families, in tokens, longest
// prefix first within a family: the model name a provider takes starts with the prefix.
var contextWindows = []struct {
	prefix string
	tokens int
}{
	// Anthropic (the standard window; the 1M-token beta needs its header).
	{"claude-", 200_000},
	// OpenAI.
	{"gpt-5", 400_000},
	{"gpt-4.1", 1_047_576},
	{"gpt-4o", 128_000},
	{"gpt-4-turbo", 128_000},
	{"o1", 200_000},
	{"o3", 200_000},
	{"o4-mini", 200_000},
	{"codex-", 400_000},
	// Gemini.
	{"gemini-1.5-pro", 2_097_152},
	{"gemini-1.5-flash", 1_048_576},
	{"gemini-2", 1_048_576},
	{"gemini-3", 1_048_576},
}

// ContextWindow returns the context window of model in tokens from dsh's table of known
// models (matched by prefix, the longest first), or 0 when the model is not in it. dsh run
// and dsh acp use it unless --context-window says otherwise.
func ContextWindow(model string) int {
	best, n := 0, -1
	for _, w := range contextWindows {
		if strings.HasPrefix(model, w.prefix) && len(w.prefix) > n {
			best, n = w.tokens, len(w.prefix)
		}
	}
	return best
}
