package tools

import (
	"encoding/json"
	"unsafe"

	"github.com/dshkit/dsh/generated/dsh"
)

// nCopies is the number of copies of a result the phases after core dispatch may hand out:
// to the wrappers, to post-execute, to the finalizer and to the observers.
const nCopies = 4

// room is memory reserved, when the call builds a success, next to its value, meta and
// content: the copies the phases hand out are carved from it, in one allocation each, for
// as long as the candidate still has that value, meta and content. Every copy is a
// separate, capacity-limited part of it, so that a party changing (or appending to) its
// copy reaches no other copy.
type room struct {
	bytes   bytesRoom
	content blocksRoom
}

// bytesRoom is room for copies of a value and its meta (raw JSON).
type bytesRoom struct {
	value, meta   *byte // the memory the copies are copies of
	nValue, nMeta uint32
	buf           []byte
}

// reserve returns value and meta, possibly moved, with room for copies copies of each:
// the spare capacity of value when there is no meta and it is large enough, else a new
// allocation. Raw JSON larger than maxArena gets no room (a kept copy must not retain
// the others).
func (r *bytesRoom) reserve(value, meta json.RawMessage, copies int) (json.RawMessage, json.RawMessage) {
	*r = bytesRoom{}
	nv, nm := len(value), len(meta)
	if n := nv + nm; n == 0 || n > maxArena {
		return value, meta
	}
	switch {
	case nm == 0 && cap(value)-nv >= nv*copies:
		r.buf = value[nv:cap(value)]
	case nm == 0:
		buf := make([]byte, nv*(copies+1))
		copy(buf, value)
		value, r.buf = buf[:nv], buf[nv:]
	default:
		r.buf = make([]byte, (nv+nm)*copies)
	}
	value, meta = value[:nv:nv], meta[:nm:nm]
	if nv > 0 {
		r.value, r.nValue = unsafe.SliceData(value), uint32(nv)
	}
	if nm > 0 {
		r.meta, r.nMeta = unsafe.SliceData(meta), uint32(nm)
	}
	return value, meta
}

// copyOf returns a private copy of raw (nil stays nil).
func (r *bytesRoom) copyOf(raw json.RawMessage) json.RawMessage {
	n := len(raw)
	if n == 0 || n > len(r.buf) {
		return cloneRaw(raw)
	}
	if p := unsafe.SliceData(raw); !(p == r.value && n == int(r.nValue)) && !(p == r.meta && n == int(r.nMeta)) {
		return cloneRaw(raw)
	}
	out := r.buf[:n:n]
	r.buf = r.buf[n:]
	copy(out, raw)
	return out
}

// blocksRoom is room for copies of one content list.
type blocksRoom struct {
	of  *dsh.ContentBlock
	n   int
	buf []dsh.ContentBlock
}

// reserve returns content, possibly moved, with room for copies copies of it, like
// bytesRoom.reserve. Content with a tool-result block, whose copy is deep, gets no room.
func (r *blocksRoom) reserve(content []dsh.ContentBlock, copies int) []dsh.ContentBlock {
	*r = blocksRoom{}
	n := len(content)
	if n == 0 || n > maxArena/16 {
		return content
	}
	for _, b := range content {
		if _, ok := b.(dsh.ToolResultBlock); ok {
			return content
		}
	}
	if cap(content)-n < n*copies {
		buf := make([]dsh.ContentBlock, n*(copies+1))
		copy(buf, content)
		content = buf[:n]
	}
	r.of, r.n, r.buf = unsafe.SliceData(content), n, content[n:cap(content)]
	return content[:n:n]
}

// copyOf returns a private copy of snapshotted content (nil stays nil).
func (r *blocksRoom) copyOf(content []dsh.ContentBlock) []dsh.ContentBlock {
	n := len(content)
	if n == 0 || n != r.n || unsafe.SliceData(content) != r.of || len(r.buf) < n {
		return cloneContent(content)
	}
	out := r.buf[:n:n]
	r.buf = r.buf[n:]
	copy(out, content)
	return out
}

// reserve makes room for the copies of o, a success the call built, and returns o, whose
// value, meta and content may have moved.
func (rm *room) reserve(o outcome, copies int) outcome {
	o.value, o.meta = rm.bytes.reserve(o.value, o.meta, copies)
	o.content = rm.content.reserve(o.content, copies)
	return o
}

// copyOf returns a copy of o that shares no mutable memory with it or with another copy,
// carved from the room while o has the memory the room was reserved for.
func (rm *room) copyOf(o *outcome) outcome {
	c := *o
	c.value = rm.bytes.copyOf(o.value)
	c.meta = rm.bytes.copyOf(o.meta)
	c.content = rm.content.copyOf(o.content)
	c.contexts = cloneMessages(o.contexts)
	if o.err.Info != nil {
		info := *o.err.Info
		c.err.Info = &info
	}
	return c
}
