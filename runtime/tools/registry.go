package tools

import (
	"errors"
	"fmt"
	"maps"
	"net/url"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
)

// Registration errors (docs/design/SEMANTICS.md#410-classification-and-registry-rules), wrapped by Register and RegisterForAgent.
var (
	// ErrMissingName: the definition has no name.
	ErrMissingName = errors.New("tools: tool definition has no name")
	// ErrMissingRun: the definition has no Run body.
	ErrMissingRun = errors.New("tools: tool definition has no Run")
	// ErrDuplicate: a tool of that name is already registered in the same layer.
	ErrDuplicate = errors.New("tools: duplicate tool name")
	// ErrInvalidSchema: the input or output schema does not compile.
	ErrInvalidSchema = errors.New("tools: invalid schema")
)

// Registry holds tool definitions in layers: one global layer and one layer per agent. The
// definition visible to a call of an agent is the agent's own if it registered one of
// that name (a scoped registration shadows a global one), else the global one. A Registry
// is safe for concurrent use; lookups do not lock.
type Registry struct {
	mu     sync.Mutex // serializes writers
	layers atomic.Pointer[layers]
}

// layers is an immutable snapshot of the registry.
type layers struct {
	global map[string]*tool
	agents map[string]map[string]*tool
}

// tool is one registration: a private copy of the definition and its compiled schemas.
type tool struct {
	def    Definition
	input  *schema
	output *schema
}

// NewRegistry returns an empty registry.
func NewRegistry() *Registry {
	r := &Registry{}
	r.layers.Store(&layers{global: map[string]*tool{}, agents: map[string]map[string]*tool{}})
	return r
}

// Register adds def to the global layer and returns a func that removes exactly this
// registration (calling it again, or after another registration replaced it, does
// nothing).
func (r *Registry) Register(def Definition) (unregister func(), err error) {
	return r.register("", def)
}

// RegisterForAgent adds def to agentID's layer, where it shadows a global tool of the same
// name for that agent's calls.
func (r *Registry) RegisterForAgent(agentID string, def Definition) (unregister func(), err error) {
	if agentID == "" {
		return nil, fmt.Errorf("tools: register %q: empty agent id", def.Name)
	}
	return r.register(agentID, def)
}

func (r *Registry) register(agentID string, def Definition) (func(), error) {
	t, err := newTool(def)
	if err != nil {
		return nil, err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	cur := r.layers.Load()
	if _, dup := cur.layer(agentID)[def.Name]; dup {
		return nil, fmt.Errorf("tools: register %q: %w", def.Name, ErrDuplicate)
	}
	r.layers.Store(cur.with(agentID, def.Name, t))
	var once sync.Once
	return func() {
		once.Do(func() {
			r.mu.Lock()
			defer r.mu.Unlock()
			cur := r.layers.Load()
			if cur.layer(agentID)[def.Name] == t {
				r.layers.Store(cur.with(agentID, def.Name, nil))
			}
		})
	}, nil
}

// newTool validates def and compiles its schemas.
func newTool(def Definition) (*tool, error) {
	if strings.TrimSpace(def.Name) == "" {
		return nil, ErrMissingName
	}
	if def.Run == nil {
		return nil, fmt.Errorf("tools: register %q: %w", def.Name, ErrMissingRun)
	}
	def.InputSchema = cloneRaw(def.InputSchema)
	t := &tool{def: def}
	var err error
	if t.input, err = compileSchema(def.InputSchema, "mem://tools/"+url.PathEscape(def.Name)+"/input.json"); err != nil {
		return nil, fmt.Errorf("tools: register %q: input schema: %w: %v", def.Name, ErrInvalidSchema, err)
	}
	if def.Output != nil {
		out := *def.Output
		out.Schema = cloneRaw(out.Schema)
		t.def.Output = &out
		if t.output, err = compileSchema(out.Schema, "mem://tools/"+url.PathEscape(def.Name)+"/output.json"); err != nil {
			return nil, fmt.Errorf("tools: register %q: output schema: %w: %v", def.Name, ErrInvalidSchema, err)
		}
	}
	return t, nil
}

// layer returns the layer of agentID ("" is the global layer).
func (l *layers) layer(agentID string) map[string]*tool {
	if agentID == "" {
		return l.global
	}
	return l.agents[agentID]
}

// with returns a copy of l in which agentID's layer maps name to t (nil removes it).
func (l *layers) with(agentID, name string, t *tool) *layers {
	out := &layers{global: l.global, agents: l.agents}
	layer := maps.Clone(l.layer(agentID))
	if layer == nil {
		layer = map[string]*tool{}
	}
	if t == nil {
		delete(layer, name)
	} else {
		layer[name] = t
	}
	if agentID == "" {
		out.global = layer
		return out
	}
	out.agents = maps.Clone(l.agents)
	if len(layer) == 0 {
		delete(out.agents, agentID)
	} else {
		out.agents[agentID] = layer
	}
	return out
}

// lookup returns the registration visible to agentID's calls (agentID "" sees only the
// global layer), or nil.
func (r *Registry) lookup(agentID, name string) *tool {
	l := r.layers.Load()
	if agentID != "" {
		if t := l.agents[agentID][name]; t != nil {
			return t
		}
	}
	return l.global[name]
}

// Lookup returns the definition visible to agentID's calls under name ("" for an
// agent-less call).
func (r *Registry) Lookup(agentID, name string) (Definition, bool) {
	if t := r.lookup(agentID, name); t != nil {
		return t.def, true
	}
	return Definition{}, false
}

// Visible returns the definitions visible to agentID's calls, sorted by name: the tools
// the model can be offered.
func (r *Registry) Visible(agentID string) []Definition {
	l := r.layers.Load()
	names := map[string]*tool{}
	maps.Copy(names, l.global)
	if agentID != "" {
		maps.Copy(names, l.agents[agentID])
	}
	keys := slices.Sorted(maps.Keys(names))
	out := make([]Definition, len(keys))
	for i, k := range keys {
		out[i] = names[k].def
	}
	return out
}
