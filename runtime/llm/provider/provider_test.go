package provider

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/dshkit/dsh/generated/dsh"
	"github.com/dshkit/dsh/runtime/llm"
)

func envOf(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

// TestRegistryCheck: a missing key is an error naming the variable, before anything is
// built; a bad spec or an unknown provider says what is wanted.
func TestRegistryCheck(t *testing.T) {
	r := Builtin()
	if got := strings.Join(r.Names(), ","); got != "anthropic,openai,openai-chat,gemini,scripted" {
		t.Errorf("names %s", got)
	}
	for _, tt := range []struct {
		spec string
		env  map[string]string
		want string // "" for no error
	}{
		{"anthropic:claude-sonnet-4-5", nil, "anthropic: ANTHROPIC_API_KEY is not set (nor ANTHROPIC_AUTH_TOKEN)"},
		{"anthropic:claude-sonnet-4-5", map[string]string{EnvAnthropicAuthToken: "t"}, ""},
		{"openai:gpt-5", nil, "openai: OPENAI_API_KEY is not set"},
		{"openai:gpt-5", map[string]string{EnvOpenAIAPIKey: "k"}, ""},
		{"openai-chat:llama3", nil, "openai-chat: OPENAI_API_KEY is not set"},
		{"openai-chat:llama3", map[string]string{EnvOpenAIBaseURL: "http://127.0.0.1:11434/v1"}, ""},
		{"gemini:gemini-2.5-pro", nil, "gemini: GEMINI_API_KEY is not set"},
		{"openai", nil, "openai: OPENAI_MODEL is not set"},
		{"openai", map[string]string{EnvOpenAIModel: "m", EnvOpenAIBaseURL: "http://127.0.0.1:1/v1"}, ""},
		{"gpt-5", nil, `--model "gpt-5": want PROVIDER:MODEL`},
		{"anthropic:", nil, `--model "anthropic:": want PROVIDER:MODEL`},
		{"mistral:large", nil, `--model "mistral:large": unknown provider "mistral"`},
	} {
		err := r.Check(tt.spec, Options{Getenv: envOf(tt.env)})
		switch {
		case tt.want == "" && err != nil:
			t.Errorf("%s: %v", tt.spec, err)
		case tt.want != "" && (err == nil || !strings.HasPrefix(err.Error(), tt.want)):
			t.Errorf("%s: err %v, want %q", tt.spec, err, tt.want)
		}
	}
	var missing *MissingEnvError
	if err := r.Check("gemini:x", Options{Getenv: envOf(nil)}); !errors.As(err, &missing) || missing.Vars[0] != EnvGeminiAPIKey {
		t.Errorf("err %v", err)
	}
	if err := r.Check("gpt", Options{}); !errors.Is(err, ErrBadModelSpec) {
		t.Errorf("err %v", err)
	}
}

// TestRegistryOpen: each provider builds its model with the call config naming it, and
// the openai alias is chat completions with OPENAI_MODEL.
func TestRegistryOpen(t *testing.T) {
	env := envOf(map[string]string{EnvAnthropicAPIKey: "a", EnvOpenAIAPIKey: "o", EnvGeminiAPIKey: "g", EnvOpenAIModel: "m-7",
		EnvAnthropicBaseURL: "http://127.0.0.1:1", EnvOpenAIBaseURL: "http://127.0.0.1:1/v1", EnvGeminiBaseURL: "http://127.0.0.1:1"})
	for spec, want := range map[string]struct {
		cfg   dsh.LLMCallConfig
		model any
	}{
		"anthropic:claude-x": {dsh.LLMCallConfig{Provider: "anthropic", Model: "claude-x"}, &Anthropic{}},
		"openai:gpt-5":       {dsh.LLMCallConfig{Provider: "openai", Model: "gpt-5"}, &OpenAIResponses{}},
		"openai-chat:llama3": {dsh.LLMCallConfig{Provider: "openai-chat", Model: "llama3"}, &OpenAIChat{}},
		"openai":             {dsh.LLMCallConfig{Provider: "openai-chat", Model: "m-7"}, &OpenAIChat{}},
		"gemini:gemini-2.5":  {dsh.LLMCallConfig{Provider: "gemini", Model: "gemini-2.5"}, &Gemini{}},
	} {
		m, cfg, err := Builtin().Open(spec, Options{Getenv: env})
		if err != nil {
			t.Errorf("%s: %v", spec, err)
			continue
		}
		if !cmp.Equal(cfg, want.cfg) {
			t.Errorf("%s: config %+v, want %+v", spec, cfg, want.cfg)
		}
		if gotT, wantT := fmt.Sprintf("%T", m), fmt.Sprintf("%T", want.model); gotT != wantT {
			t.Errorf("%s: model %s, want %s", spec, gotT, wantT)
		}
	}
	if _, err := NewRegistry(Provider{Name: "a", New: func(Options) (llm.Model, error) { return nil, nil }}, Provider{Name: "a", New: func(Options) (llm.Model, error) { return nil, nil }}); err == nil {
		t.Error("a name registered twice is accepted")
	}
}

// drain collects every chunk and the final error of a stream.
func drain(seq func(func(dsh.AssistantChunk, error) bool)) ([]dsh.AssistantChunk, error) {
	var out []dsh.AssistantChunk
	var last error
	for c, err := range seq {
		if err != nil {
			last = err
			continue
		}
		out = append(out, c)
	}
	return out, last
}

func ptr[T any](v T) *T { return &v }

func userText(s string) llm.Message {
	return llm.Message{Role: llm.RoleUser, Content: []dsh.ContentBlock{dsh.TextBlock{Text: s}}}
}

// TestDefaultSpec: with no --model, the one provider whose key is set is picked, with its
// model variable's model or its default; none or several keys set is ErrNoDefaultModel,
// naming them.
func TestDefaultSpec(t *testing.T) {
	for name, c := range map[string]struct {
		env  map[string]string
		want string
		err  string
	}{
		"anthropic":         {map[string]string{"ANTHROPIC_API_KEY": "k"}, "anthropic:claude-sonnet-4-5", ""},
		"anthropic token":   {map[string]string{"ANTHROPIC_AUTH_TOKEN": "k"}, "anthropic:claude-sonnet-4-5", ""},
		"anthropic model":   {map[string]string{"ANTHROPIC_API_KEY": "k", "ANTHROPIC_MODEL": "claude-opus-4-1"}, "anthropic:claude-opus-4-1", ""},
		"openai":            {map[string]string{"OPENAI_API_KEY": "k"}, "openai:gpt-5", ""},
		"gemini":            {map[string]string{"GEMINI_API_KEY": "k"}, "gemini:gemini-2.5-pro", ""},
		"none":              {map[string]string{"OPENAI_BASE_URL": "http://x"}, "", "no default model: none of ANTHROPIC_API_KEY, OPENAI_API_KEY, GEMINI_API_KEY is set"},
		"several":           {map[string]string{"ANTHROPIC_API_KEY": "k", "GEMINI_API_KEY": "k"}, "", "no default model: the keys of anthropic (ANTHROPIC_API_KEY) and gemini (GEMINI_API_KEY) are all set"},
		"a model var alone": {map[string]string{"ANTHROPIC_MODEL": "m"}, "", "none of"},
	} {
		got, err := Builtin().DefaultSpec(Options{Getenv: func(k string) string { return c.env[k] }})
		switch {
		case c.err == "" && (err != nil || got != c.want):
			t.Errorf("%s: %q, %v; want %q", name, got, err, c.want)
		case c.err != "" && (err == nil || !errors.Is(err, ErrNoDefaultModel) || !strings.Contains(err.Error(), c.err)):
			t.Errorf("%s: %q, %v; want an error %q", name, got, err, c.err)
		}
	}
}
