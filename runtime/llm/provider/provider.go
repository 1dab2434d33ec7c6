package provider

import (
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/dshkit/dsh/generated/dsh"
	"github.com/dshkit/dsh/runtime/llm"
)

// Options configure a provider's model: what --model named after the colon, where the
// credentials come from, and how the calls are sent.
type Options struct {
	// Model is the model name (for scripted, the script's path).
	Model string
	// Getenv reads the environment; nil means os.Getenv. The providers read their keys and
	// endpoints through it only (never the process environment behind its back).
	Getenv func(string) string
	// HTTPClient sends the calls; nil means a client of its own with no overall timeout.
	HTTPClient *http.Client
	// Logger receives debug records and warnings; nil discards them.
	Logger *slog.Logger
	// DeveloperContexts places the plugins' contexts on the wire as developer messages,
	// where Codex places its hooks' contexts (the chat wire's nearest: system messages);
	// false keeps them user messages, as dsh's canonical form and Claude Code do. The
	// hook dialect's descriptor says which (bridges/dialect).
	DeveloperContexts bool
	// SystemContextModels are the models (path.Match patterns) for which the anthropic
	// provider sends the plugins' <system-reminder> contexts as "system" messages, as
	// Claude Code does for them (the claude-code dialect's table says which).
	SystemContextModels []string
	// SessionID identifies the session to the provider where its engine does so (the
	// Responses API's prompt_cache_key, as Codex sends it).
	SessionID string
	// Timeout bounds one call, from the request to the end of its stream; zero means
	// [DefaultCallTimeout]. A call past it ends with an error finish of [llm.CodeTimeout].
	Timeout time.Duration
	// Limits cap each response (its body, one event, one tool call's arguments, what dsh
	// holds of it, its blocks); zero fields mean the defaults ([DefaultResponseBytes],
	// [DefaultEventBytes], [DefaultToolArgumentBytes], [DefaultContentBytes],
	// [DefaultBlocks]). A response over a cap fails its call with
	// [llm.CodeResponseTooLarge].
	Limits Limits
}

// DefaultCallTimeout bounds one model call when [Options].Timeout is zero (as Claude
// Code's default API timeout).
const DefaultCallTimeout = 10 * time.Minute

func (o Options) getenv(k string) string {
	if o.Getenv == nil {
		return os.Getenv(k)
	}
	return o.Getenv(k)
}

func (o Options) logger() *slog.Logger {
	if o.Logger == nil {
		return slog.New(slog.DiscardHandler)
	}
	return o.Logger
}

func (o Options) httpClient() *http.Client {
	if o.HTTPClient == nil {
		return &http.Client{}
	}
	return o.HTTPClient
}

// Provider is one way of reaching a model, registered by name: --model NAME:MODEL picks
// it.
type Provider struct {
	// Name is the prefix of --model (before the colon).
	Name string
	// Summary is one line for the help: the API and the variables it reads.
	Summary string
	// Env are the variables the provider reads, in the order the help names them.
	Env []string
	// Check reports what is missing to build the model (a [*MissingEnvError] for a
	// missing key), without building it; nil checks nothing.
	Check func(Options) error
	// New builds the model.
	New func(Options) (llm.Model, error)
	// Keys are the credential variables whose being set picks this provider when --model
	// is not given (DefaultSpec); none: it is never picked so.
	Keys []string
	// ModelEnv names the variable that holds the model to use when the provider is
	// picked so (Claude Code's ANTHROPIC_MODEL); "" or unset: DefaultModel.
	ModelEnv string
	// DefaultModel is the model of the provider when it is picked so.
	DefaultModel string
}

// ErrNoDefaultModel is the error of DefaultSpec when the environment does not pick one
// provider: no provider's key is set, or several are.
var ErrNoDefaultModel = errors.New("no default model")

// DefaultSpec is the --model that the environment picks when none is given: the
// provider whose key (Provider.Keys) is the only one set, with the model of its ModelEnv,
// else its DefaultModel. With none or several set it is an error wrapping
// ErrNoDefaultModel that names the keys.
func (r *Registry) DefaultSpec(o Options) (string, error) {
	var set, keys []string
	var picked Provider
	for _, n := range r.names {
		p := r.byName[n]
		if len(p.Keys) == 0 {
			continue
		}
		keys = append(keys, p.Keys[0])
		for _, k := range p.Keys {
			if o.getenv(k) != "" {
				set = append(set, p.Name+" ("+k+")")
				picked = p
				break
			}
		}
	}
	switch len(set) {
	case 0:
		return "", fmt.Errorf("%w: none of %s is set", ErrNoDefaultModel, strings.Join(keys, ", "))
	case 1:
	default:
		return "", fmt.Errorf("%w: the keys of %s are all set", ErrNoDefaultModel, strings.Join(set, " and "))
	}
	model := picked.DefaultModel
	if picked.ModelEnv != "" && o.getenv(picked.ModelEnv) != "" {
		model = o.getenv(picked.ModelEnv)
	}
	return picked.Name + ":" + model, nil
}

// Errors of [Registry.Open] and [Registry.Check].
var (
	// ErrUnknownProvider is a --model whose provider is not registered.
	ErrUnknownProvider = errors.New("unknown provider")
	// ErrBadModelSpec is a --model that is not PROVIDER:MODEL.
	ErrBadModelSpec = errors.New("want PROVIDER:MODEL")
)

// MissingEnvError is a provider whose credential variable is not set. Its message names
// the variable (and its alternatives).
type MissingEnvError struct {
	// Provider is the provider's name.
	Provider string
	// Vars are the variables any one of which would do, the preferred first.
	Vars []string
}

// Error names the provider and the variables.
func (e *MissingEnvError) Error() string {
	msg := fmt.Sprintf("%s: %s is not set", e.Provider, e.Vars[0])
	if len(e.Vars) > 1 {
		msg += " (nor " + strings.Join(e.Vars[1:], ", ") + ")"
	}
	return msg
}

// Registry maps provider names to providers. Build one with [NewRegistry] or take the
// built-in set from [Builtin].
type Registry struct {
	byName map[string]Provider
	names  []string
}

// NewRegistry returns a registry of ps; a repeated or empty name, or a provider without
// New, is an error.
func NewRegistry(ps ...Provider) (*Registry, error) {
	r := &Registry{byName: map[string]Provider{}}
	for _, p := range ps {
		switch {
		case p.Name == "" || strings.Contains(p.Name, ":"):
			return nil, fmt.Errorf("llm: provider name %q: want a non-empty name without a colon", p.Name)
		case p.New == nil:
			return nil, fmt.Errorf("llm: provider %q: no New", p.Name)
		case r.byName[p.Name].New != nil:
			return nil, fmt.Errorf("llm: provider %q registered twice", p.Name)
		}
		r.byName[p.Name] = p
		r.names = append(r.names, p.Name)
	}
	return r, nil
}

// Builtin is the registry of dsh's providers, the one place a provider is added:
// anthropic (Messages API), openai (Responses API), openai-chat (chat completions),
// gemini (Gemini API) and scripted (a script file, see [llm.LoadScript]).
func Builtin() *Registry {
	r, err := NewRegistry(anthropicProvider(), openAIResponsesProvider(), openAIChatProvider(), geminiProvider(), scriptedProvider())
	if err != nil {
		panic(err) // the built-in set is fixed: a failure is a programming error
	}
	return r
}

// Providers returns the registered providers in registration order.
func (r *Registry) Providers() []Provider {
	out := make([]Provider, len(r.names))
	for i, n := range r.names {
		out[i] = r.byName[n]
	}
	return out
}

// aliasOpenAI is the bare --model openai: chat completions with the model of
// OPENAI_MODEL (kept from before the providers had names).
const aliasOpenAI = "openai"

// resolve splits spec into its provider and model, expanding the openai alias.
func (r *Registry) resolve(spec string, o Options) (Provider, Options, error) {
	if spec == aliasOpenAI {
		m := o.getenv(EnvOpenAIModel)
		if m == "" {
			return Provider{}, o, &MissingEnvError{Provider: aliasOpenAI, Vars: []string{EnvOpenAIModel}}
		}
		spec = "openai-chat:" + m
	}
	name, model, ok := strings.Cut(spec, ":")
	if !ok || model == "" {
		return Provider{}, o, fmt.Errorf("--model %q: %w (providers: %s)", spec, ErrBadModelSpec, strings.Join(r.names, ", "))
	}
	p, ok := r.byName[name]
	if !ok {
		return Provider{}, o, fmt.Errorf("--model %q: %w %q (providers: %s)", spec, ErrUnknownProvider, name, strings.Join(r.names, ", "))
	}
	o.Model = model
	return p, o, nil
}

// Check reports whether spec (PROVIDER:MODEL, or the alias openai) names a registered
// provider whose credentials are set, without building anything: a [*MissingEnvError]
// names the variable to set.
func (r *Registry) Check(spec string, o Options) error {
	p, o, err := r.resolve(spec, o)
	if err != nil {
		return err
	}
	if p.Check != nil {
		return p.Check(o)
	}
	return nil
}

// Open builds the model spec names and the call configuration the loop seeds its
// requests with (provider and model).
func (r *Registry) Open(spec string, o Options) (llm.Model, dsh.LLMCallConfig, error) {
	p, o, err := r.resolve(spec, o)
	if err != nil {
		return nil, dsh.LLMCallConfig{}, err
	}
	if p.Check != nil {
		if err := p.Check(o); err != nil {
			return nil, dsh.LLMCallConfig{}, err
		}
	}
	m, err := p.New(o)
	if err != nil {
		return nil, dsh.LLMCallConfig{}, err
	}
	model := o.Model
	if p.Name == "scripted" {
		model = filepath.Base(model)
	}
	return m, dsh.LLMCallConfig{Provider: p.Name, Model: model}, nil
}

// Names returns the registered provider names in registration order.
func (r *Registry) Names() []string { return slices.Clone(r.names) }

// requireEnv returns a [*MissingEnvError] unless one of vars is set.
func requireEnv(provider string, o Options, vars ...string) error {
	for _, v := range vars {
		if o.getenv(v) != "" {
			return nil
		}
	}
	return &MissingEnvError{Provider: provider, Vars: vars}
}

func scriptedProvider() Provider {
	return Provider{
		Name:    "scripted",
		Summary: `replay a script file ({"responses":[...]}); MODEL is its path`,
		New: func(o Options) (llm.Model, error) {
			return llm.LoadScript(o.Model)
		},
	}
}
