// Package jsonmerge applies JSON merge patches (RFC 7396) to decoded JSON values, for the
// rewrite phase's Merge decisions (runtime/tools) and the hook bridges' merge mode.
package jsonmerge

// Apply returns target patched with patch, both decoded JSON values (maps, slices,
// strings, numbers, bools, nil): a patch that is not an object replaces the target; an
// object's members are merged recursively into the target's (an object, else none), a
// null member removing the key. Neither argument is modified.
func Apply(target, patch any) any {
	pm, ok := patch.(map[string]any)
	if !ok {
		return patch
	}
	tm, _ := target.(map[string]any)
	out := make(map[string]any, len(tm)+len(pm))
	for k, v := range tm {
		out[k] = v
	}
	for k, v := range pm {
		if v == nil {
			delete(out, k)
		} else {
			out[k] = Apply(out[k], v)
		}
	}
	return out
}
