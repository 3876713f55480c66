package act

import (
	"bytes"
	"encoding/json"
	"reflect"
	"slices"
)

// VolatileKeys are the keys of a domain state file that record when a
// skill ran rather than what it found. A skill is told to refresh
// last_run on every run (docs/skills.md), so a state file that differs
// only in these keys, at any depth, has not changed: counting it as
// output would make every run look productive and blind the futility
// and saturation checks.
var VolatileKeys = []string{
	"last_run", "last_checked", "last_updated",
	"checked_at", "updated_at", "generated_at", "scanned_at",
	"timestamp",
}

// StateChanged reports whether a domain state file's content differs
// between before and after, ignoring VolatileKeys. Empty means the file
// did not exist. A file that appeared has changed when it holds more than
// those keys; one that disappeared has not, since there is nothing new to
// read. A file that is not JSON on either side is compared byte for byte.
func StateChanged(before, after []byte) bool {
	after = bytes.TrimSpace(after)
	if len(after) == 0 {
		return false
	}
	var a any
	if json.Unmarshal(after, &a) != nil {
		return !bytes.Equal(bytes.TrimSpace(before), after)
	}
	a = withoutVolatile(a)
	before = bytes.TrimSpace(before)
	if len(before) == 0 {
		return !isEmpty(a)
	}
	var b any
	if json.Unmarshal(before, &b) != nil {
		return true
	}
	return !reflect.DeepEqual(withoutVolatile(b), a)
}

// isEmpty reports whether a decoded JSON value says nothing: null, or an
// object without members.
func isEmpty(v any) bool {
	if v == nil {
		return true
	}
	m, ok := v.(map[string]any)
	return ok && len(m) == 0
}

// withoutVolatile returns v with every object member named in
// VolatileKeys removed, recursively.
func withoutVolatile(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			if slices.Contains(VolatileKeys, k) {
				continue
			}
			out[k] = withoutVolatile(e)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = withoutVolatile(e)
		}
		return out
	}
	return v
}
