package codec

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// spot is a record decoding strictly through an ObjectDecoder, as generated records do.
type spot struct {
	X     int
	Extra json.RawMessage
}

func (p *spot) UnmarshalJSON(data []byte) error {
	d, err := NewObjectDecoder("Spot", data)
	if err != nil {
		return err
	}
	var v spot
	Required(d, "x", &v.X, Value[int])
	Optional(d, "extra", &v.Extra, Raw)
	if err := d.Finish(); err != nil {
		return err
	}
	*p = v
	return nil
}

// TestCheckedMatchesValue pins that Checked, for members and list elements an
// ObjectDecoder or ListOf hands over, decodes and fails exactly as Value does.
func TestCheckedMatchesValue(t *testing.T) {
	deep := strings.Repeat(`[`, maxScanDepth+2) + strings.Repeat(`]`, maxScanDepth+2)
	members := []string{
		`{"x":1}`, ` { "x" : 2 , "extra" : {"a":[1,2]} } `, `{"x":"1"}`, `{"x":1,"y":2}`, `{}`,
		`null`, `1`, `"s"`, `[]`, `{"x":1,"x":2}`, `{"x":1,"extra":` + deep + `}`,
		`{"x":1,"extra":"\u00e9\n"}`, `{"\u0078":3}`, `{"x":1e2}`, `{"x":01}`, `{"x":1,}`, `{"x"}`,
	}
	outer := func(dec func([]byte, *spot) error, data string) (string, error) {
		var p spot
		var ps []spot
		d, err := NewObjectDecoder("Outer", []byte(data))
		if err != nil {
			return "", err
		}
		Required(d, "p", &p, dec)
		Optional(d, "ps", &ps, ListOf(dec))
		if err := d.Finish(); err != nil {
			return "", err
		}
		return fmt.Sprintf("%+v %+v", p, ps), nil
	}
	for _, m := range members {
		for _, data := range []string{
			`{"p":` + m + `}`,
			`{"p":{"x":0},"ps":[` + m + `,` + m + `]}`,
			`{"p":` + m + `,"q":` + deep + `}`, // the outer scan falls back to encoding/json
		} {
			got, gotErr := outer(Checked[spot], data)
			want, wantErr := outer(Value[spot], data)
			if got != want || fmt.Sprint(gotErr) != fmt.Sprint(wantErr) {
				t.Errorf("%s:\nChecked: %q, %v\nValue:   %q, %v", data, got, gotErr, want, wantErr)
			}
		}
	}
}
