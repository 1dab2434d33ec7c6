// Behavioural tests of the wrapper runner, run against the listener surface of
// surface_test.go (the shape dshgen generates), under -race in CI.

package dispatch_test

import (
	"context"
	"fmt"
	"reflect"
	"strings"
	"testing"
)

func TestWrapperContext(t *testing.T) {
	type key struct{}
	reg := NewRegistry()
	var log []string
	reg.WrapRun(func(ctx context.Context, p *DemoPayload, next RunNext) Decision {
		log = append(log, "outer")
		d := next.Call(context.WithValue(ctx, key{}, "outer"))
		if d.Kind() == "deny" {
			return DemoReplace{}
		}
		return d
	})
	reg.WrapRun(func(ctx context.Context, p *DemoPayload, next RunNext) Decision {
		log = append(log, fmt.Sprint("inner sees ", ctx.Value(key{})))
		ctx, cancel := context.WithCancel(ctx)
		defer cancel()
		return next.Call(ctx)
	})
	d, err := reg.RunRun(context.Background(), payload("x"), func(ctx context.Context) Decision {
		log = append(log, fmt.Sprint("terminal sees ", ctx.Value(key{}), " ", ctx.Err()))
		return DemoDeny{Reason: "core"}
	})
	if err != nil || !reflect.DeepEqual(d, DemoReplace{}) {
		t.Errorf("%#v, %v", d, err)
	}
	if got := strings.Join(log, "; "); got != "outer; inner sees outer; terminal sees outer <nil>" {
		t.Errorf("log %q", got)
	}
}
