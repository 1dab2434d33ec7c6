// Package ssemeter measures server-sent events as their bytes go by, so that a reader can bound
// one event of a stream without parsing it: an event is its lines up to the blank line
// that ends it ("\n" or "\r\n" alone).
package ssemeter

// Meter follows a stream byte by byte and knows the size of the event being read. The zero
// value is at the start of a stream.
type Meter struct {
	event int64 // bytes of the event's lines before the current one
	line  int64 // bytes of the current line so far
	last  byte  // the byte before the current one, to tell "\r\n" from "\n"
}

// Add takes the stream's next byte and returns the size of the event it belongs to so
// far, line ends included; a blank line ends the event, and the next one starts at 0.
func (m *Meter) Add(c byte) int64 {
	if c == '\n' {
		if m.line == 0 || (m.line == 1 && m.last == '\r') {
			m.event = 0
		} else {
			m.event += m.line + 1
		}
		m.line = 0
	} else {
		m.line++
	}
	m.last = c
	return m.event + m.line
}
