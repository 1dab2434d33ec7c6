package dispatch

// Registrars: who registers a listener (a plugin, an agent) and what Close unregisters.

import (
	"log/slog"
	"sync"
)

// Registrar registers listeners for one plugin (or anonymously), either globally or for one
// agent. Every registration returns a func that unregisters it (calling it again does
// nothing); Close unregisters everything the registrar and the registrars derived from it
// registered. A Registrar is safe for concurrent use.
type Registrar struct {
	reg    *Core
	parent *Registrar
	plugin string
	agent  string
	scoped bool

	mu       sync.Mutex
	closed   bool
	regs     map[uint64]func()
	children map[*Registrar]struct{}
}

func newRegistrar(g *Core, parent *Registrar, plugin, agent string, scoped bool) *Registrar {
	return &Registrar{
		reg:      g,
		parent:   parent,
		plugin:   plugin,
		agent:    agent,
		scoped:   scoped,
		regs:     make(map[uint64]func()),
		children: make(map[*Registrar]struct{}),
	}
}

// ForAgent returns a registrar of the same plugin whose listeners only see the events whose
// subject is the agent id (events without a subject path are seen by every listener). It
// is derived from r: r.Close() also unregisters what it registered.
func (r *Registrar) ForAgent(id string) *Registrar {
	return r.derive(r.plugin, id, true)
}

// Close unregisters every listener r and the registrars derived from it registered, and
// closes them all. Registering on a closed registrar does nothing (it is logged) and returns
// a no-op unregister func. Close is idempotent.
func (r *Registrar) Close() {
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		return
	}
	r.closed = true
	regs, children := r.regs, r.children
	r.regs, r.children = nil, nil
	r.mu.Unlock()
	for c := range children {
		c.Close()
	}
	for _, unregister := range regs {
		unregister()
	}
	if p := r.parent; p != nil {
		p.mu.Lock()
		delete(p.children, r)
		p.mu.Unlock()
	}
}

// Plugin returns a registrar for the plugin called name, derived from r (a generated
// Registry calls it on its root). Its listeners are named "<name>#<n>", n counting the
// plugin's registrations from 1 (an empty name is "anonymous").
func (r *Registrar) Plugin(name string) *Registrar {
	return r.derive(name, "", false)
}

func (r *Registrar) derive(plugin, agent string, scoped bool) *Registrar {
	c := newRegistrar(r.reg, r, plugin, agent, scoped)
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		c.closed = true
		return c
	}
	r.children[c] = struct{}{}
	return c
}

// Register adds fn to l on behalf of r.
func Register[F any](r *Registrar, event string, l *List[F], fn F) (unregister func()) {
	if isNil(fn) {
		panic("dsh: nil " + event + " listener")
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		r.reg.logger().Warn("dsh: registration on a closed registrar ignored",
			slog.String("event", event), slog.String("plugin", r.plugin))
		return func() {}
	}
	x := &listener[F]{name: r.reg.nextName(r.plugin), agent: r.agent, scoped: r.scoped, fn: fn}
	l.add(&r.reg.seq, x)
	var once sync.Once
	unregister = func() {
		once.Do(func() {
			l.remove(x)
			r.mu.Lock()
			delete(r.regs, x.id)
			r.mu.Unlock()
		})
	}
	r.regs[x.id] = unregister
	return unregister
}
