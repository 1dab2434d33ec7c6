// Package respcache is an example native plugin over both model-call points: a response
// cache. At agent/request it answers a request it has seen before with the cached
// response, so the provider is not called (the answer is logged as the assistant message,
// with a source naming the plugin); at agent/response it stores the provider's text-only
// responses under the digest of the request that produced them.
package respcache

import (
	"context"
	"crypto/sha256"
	"slices"
	"sync"

	"github.com/dshkit/dsh/generated/dsh"
)

//go:generate go tool dshscaffold -type Plugin -events agent/request,agent/response -out plugin_gen.go

// Plugin is an in-memory response cache keyed by the request (config, messages, tools).
// Its zero value is ready to use; it is safe for concurrent use.
type Plugin struct {
	mu      sync.Mutex
	entries map[[32]byte]entry
	pending map[pendingKey][32]byte // the key of each request sent to the provider
	hits    int
}

type entry struct {
	content []dsh.ContentBlock
	usage   *dsh.Usage
}

type pendingKey struct {
	agent      string
	turn, step int
}

// OnRequest answers from the cache on a hit, and otherwise remembers the request's key for
// its response.
func (p *Plugin) OnRequest(ctx context.Context, pl *dsh.RequestPayload) (dsh.RequestDecision, error) {
	data, err := pl.Request.MarshalJSON()
	if err != nil {
		return nil, err
	}
	key := sha256.Sum256(data)
	p.mu.Lock()
	defer p.mu.Unlock()
	if e, ok := p.entries[key]; ok {
		p.hits++
		return dsh.RequestAnswer{Content: slices.Clone(e.content), Usage: e.usage}, nil
	}
	if p.pending == nil {
		p.pending = map[pendingKey][32]byte{}
	}
	p.pending[pendingKey{pl.AgentID, pl.Turn, pl.Step}] = key
	return dsh.RequestPass{}, nil
}

// OnResponse stores a provider's complete text-only response (a response with tool calls is
// not cached: replaying it would run the tools again).
func (p *Plugin) OnResponse(ctx context.Context, pl *dsh.ResponsePayload) (dsh.ResponseDecision, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	pk := pendingKey{pl.AgentID, pl.Turn, pl.Step}
	key, ok := p.pending[pk]
	delete(p.pending, pk)
	if !ok || pl.Source != nil || pl.Response.Finish != dsh.FinishReasonStop {
		return dsh.ResponseAccept{}, nil
	}
	for _, b := range pl.Response.Content {
		if _, call := b.(dsh.ToolCallBlock); call {
			return dsh.ResponseAccept{}, nil
		}
	}
	if p.entries == nil {
		p.entries = map[[32]byte]entry{}
	}
	p.entries[key] = entry{content: slices.Clone(pl.Response.Content), usage: pl.Response.Usage}
	return dsh.ResponseAccept{}, nil
}

// Hits returns how many requests the cache answered.
func (p *Plugin) Hits() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.hits
}
