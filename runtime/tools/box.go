package tools

import (
	"unsafe"

	"github.com/dshkit/dsh/generated/dsh"
)

// Converting a dsh.ToolSuccess or a dsh.TextBlock to an interface copies it into a new
// allocation, and a call hands out several results (to the wrappers, post-execute, the
// finalizer, the observers, the caller) and builds a text block for the default rendering.
// The call keeps those values in its own memory instead and makes the interface values
// point at them: exactly what the conversion makes, minus the allocation. An interface
// value of a non-pointer dynamic type is a type word and a pointer to an immutable value of
// that type; the call never writes a slot again once an interface points at it.

// iface is the layout of a non-empty interface value.
type iface struct {
	tab  unsafe.Pointer
	data unsafe.Pointer
}

var (
	// successTab and textTab are the type words of a dsh.ToolSuccess in a
	// dsh.ToolExecutionResult and of a dsh.TextBlock in a dsh.ContentBlock.
	successTab = typeWord(dsh.ToolExecutionResult(dsh.ToolSuccess{}))
	textTab    = typeWord(dsh.ContentBlock(dsh.TextBlock{}))
	// boxesInPlace is whether interface values are laid out as assumed: when they are not,
	// values are converted the ordinary way.
	boxesInPlace bool
)

func init() { boxesInPlace = checkBoxes() }

func typeWord[I any](v I) unsafe.Pointer {
	return (*iface)(unsafe.Pointer(&v)).tab
}

// successAt returns the dsh.ToolExecutionResult holding *s, which must never change again.
func successAt(s *dsh.ToolSuccess) dsh.ToolExecutionResult {
	if !boxesInPlace {
		return *s
	}
	var r dsh.ToolExecutionResult
	*(*iface)(unsafe.Pointer(&r)) = iface{tab: successTab, data: unsafe.Pointer(s)}
	return r
}

// textAt returns the dsh.ContentBlock holding *t, which must never change again.
func textAt(t *dsh.TextBlock) dsh.ContentBlock {
	if !boxesInPlace {
		return *t
	}
	var b dsh.ContentBlock
	*(*iface)(unsafe.Pointer(&b)) = iface{tab: textTab, data: unsafe.Pointer(t)}
	return b
}

// checkBoxes reports whether values boxed in place read back as themselves.
func checkBoxes() bool {
	if unsafe.Sizeof(dsh.ToolExecutionResult(nil)) != unsafe.Sizeof(iface{}) {
		return false
	}
	boxesInPlace = true
	s := &dsh.ToolSuccess{Value: []byte(`"v"`)}
	got, ok := successAt(s).(dsh.ToolSuccess)
	t := &dsh.TextBlock{Text: "t"}
	text, tok := textAt(t).(dsh.TextBlock)
	return ok && unsafe.SliceData(got.Value) == unsafe.SliceData(s.Value) && tok && text.Text == "t"
}

// boxes are the slots of the results a call hands out, in its own memory.
type boxes struct {
	successes [nBoxes]dsh.ToolSuccess
	text      dsh.TextBlock
	// blocks hold a one-block content and the room for its copies.
	blocks     [1 + nCopies]dsh.ContentBlock
	concludes  [nBoxes]bool
	used       uint8
	textUsed   bool
	blocksUsed bool
}

// nBoxes is the number of result slots of a call: enough for the wrappers, post-execute,
// the observers and the caller (a call with a finalizer boxes its last result the
// ordinary way).
const nBoxes = 4

// result returns o as a result value, sharing o's memory, like o.result(), boxed in one
// of the call's slots while there is one.
func (b *boxes) result(o *outcome) dsh.ToolExecutionResult {
	if o.failed || int(b.used) == nBoxes || !boxesInPlace {
		return o.result()
	}
	i := b.used
	b.used++
	content := o.content
	if content == nil {
		content = []dsh.ContentBlock{}
	}
	s := &b.successes[i]
	*s = dsh.ToolSuccess{Value: o.value, Content: content, Meta: o.meta, AdditionalContexts: o.contexts}
	if o.concludes {
		b.concludes[i] = true
		s.ConcludesTurn = &b.concludes[i]
	}
	return successAt(s)
}

// textContent returns the content of one text block with text, with room for copies
// copies of it, in the call's memory the first time.
func (b *boxes) textContent(text string, copies int) []dsh.ContentBlock {
	var content []dsh.ContentBlock
	if b.blocksUsed || copies > nCopies {
		content = make([]dsh.ContentBlock, 1, 1+copies)
	} else {
		b.blocksUsed = true
		content = b.blocks[: 1 : 1+copies]
	}
	if b.textUsed || !boxesInPlace {
		content[0] = dsh.TextBlock{Text: text}
	} else {
		b.textUsed = true
		b.text.Text = text
		content[0] = textAt(&b.text)
	}
	return content
}
