package ssemeter

import "testing"

// TestMeter: the size of the event so far after each byte; a blank line, with "\n" or
// "\r\n", starts the next event at 0.
func TestMeter(t *testing.T) {
	for _, c := range []struct {
		in   string
		want []int64
	}{
		{"ab\ncd\n\nx", []int64{1, 2, 3, 4, 5, 6, 0, 1}},
		{"a\r\n\r\nb", []int64{1, 2, 3, 4, 0, 1}},
		{"\n\nab", []int64{0, 0, 1, 2}},
	} {
		var m Meter
		for i := 0; i < len(c.in); i++ {
			if got := m.Add(c.in[i]); got != c.want[i] {
				t.Errorf("%q: after byte %d, event size %d, want %d", c.in, i, got, c.want[i])
			}
		}
	}
}
