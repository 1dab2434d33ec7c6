package dispatch

// Listener lists (copy-on-write, in registration order) and the scope a listener sees.

import (
	"sort"
	"sync"
	"sync/atomic"
)

// listener is one registration.
type listener[F any] struct {
	id     uint64 // registration sequence number, increasing in registration order
	name   string
	agent  string
	scoped bool
	fn     F
}

// List is the listener list of one event, in registration order. Writers copy it under
// mu; readers load the current snapshot without locking.
type List[F any] struct {
	mu  sync.Mutex
	all atomic.Pointer[[]*listener[F]]
	// answers holds idle answer channels of a bounded fold (foldCall), emptied.
	answers sync.Pool
}

// Len returns the number of listeners registered now.
func (l *List[F]) Len() int { return len(l.load()) }

func (l *List[F]) load() []*listener[F] {
	if p := l.all.Load(); p != nil {
		return *p
	}
	return nil
}

func (l *List[F]) add(seq *atomic.Uint64, x *listener[F]) {
	l.mu.Lock()
	defer l.mu.Unlock()
	x.id = seq.Add(1)
	old := l.load()
	all := make([]*listener[F], len(old), len(old)+1)
	copy(all, old)
	all = append(all, x)
	l.all.Store(&all)
}

func (l *List[F]) remove(x *listener[F]) {
	l.mu.Lock()
	defer l.mu.Unlock()
	old := l.load()
	for i, y := range old {
		if y == x {
			all := make([]*listener[F], 0, len(old)-1)
			all = append(all, old[:i]...)
			all = append(all, old[i+1:]...)
			l.all.Store(&all)
			return
		}
	}
}

// seenBy returns the listeners that see an event of scope s, in registration order.
func (l *List[F]) seenBy(s Scope) []*listener[F] {
	all := l.load()
	every := true
	for _, x := range all {
		if !s.sees(x.scoped, x.agent) {
			every = false
			break
		}
	}
	if every {
		return all // the snapshot is never modified: a registration replaces it
	}
	out := make([]*listener[F], 0, len(all))
	for _, x := range all {
		if s.sees(x.scoped, x.agent) {
			out = append(out, x)
		}
	}
	return out
}

// after returns the first listener registered after the one numbered id that is global
// (scoped false) or scoped to an agent of s (scoped true), reading the list as it is now.
func (l *List[F]) after(id uint64, scoped bool, s Scope) *listener[F] {
	all := l.load()
	for i := sort.Search(len(all), func(i int) bool { return all[i].id > id }); i < len(all); i++ {
		if x := all[i]; x.scoped == scoped && (!scoped || s.sees(true, x.agent)) {
			return x
		}
	}
	return nil
}

// Scope is the subject of one event occurrence, as the scope function of an event makes
// it of a payload: Unscoped for an event without a subject path, NoSubject or Subject for
// one with a subject path.
type Scope struct {
	scoped bool   // the event has a subject path
	has    bool   // the payload names a subject agent
	agent  string // the subject agent id
}

// sees reports whether a listener (scoped to agent, or global) sees the event.
func (s Scope) sees(scoped bool, agent string) bool {
	if !scoped || !s.scoped {
		return true
	}
	return s.has && agent == s.agent
}

// NoSubject is the scope of a payload of an event with a subject path that names no
// subject agent: only global listeners see it.
func NoSubject() Scope { return Scope{scoped: true} }

// Subject is the scope of a payload of an event with a subject path whose subject is the
// agent id: global listeners and those registered for id see it.
func Subject(id string) Scope { return Scope{scoped: true, has: true, agent: id} }

// Unscoped is the scope function of events without a subject.
func Unscoped[P any](*P) Scope { return Scope{} }
