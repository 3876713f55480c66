package artifact

import (
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"slices"
)

// maxEntryAttempts bounds the leap_attempts read from one outcome entry.
const maxEntryAttempts = 64

// EntryFromJSON reads the fields plateau detection needs from one
// outcomes.json entry (path names it in warnings, e.g. "outcomes.json
// entries[12]"). The state file is not trusted: a field of the wrong type
// or out of range is left out, as if absent, with a warning naming its
// path; a score outside [0, 1] is not a score. Only an entry that is not
// a JSON object is an error.
func EntryFromJSON(raw json.RawMessage, path string) (Entry, []string, error) {
	var e Entry
	v, err := decodeValue(raw)
	if err != nil {
		return e, nil, fmt.Errorf("%s: not valid JSON: %v", path, err)
	}
	obj, ok := v.(map[string]any)
	if !ok {
		return e, nil, fmt.Errorf("%s: must be an object, not %s", path, kind(v))
	}
	var warns []string
	warn := func(field, format string, a ...any) {
		warns = append(warns, fmt.Sprintf("%s.%s: %s", path, field, fmt.Sprintf(format, a...)))
	}
	str := func(key string) string {
		x, ok := obj[key]
		if !ok || x == nil {
			return ""
		}
		s, isStr := x.(string)
		if !isStr || len(s) > maxMetricLen {
			warn(key, "ignored: not a short string")
			return ""
		}
		return s
	}
	scoreAt := func(x any, field string) *float64 {
		if x == nil {
			return nil
		}
		f, ok := finite(x)
		if !ok || f < 0 || f > 1 {
			warn(field, "ignored: not a score from 0 to 1")
			return nil
		}
		return &f
	}
	if x, ok := obj["cycle_id"]; ok {
		if f, isNum := finite(x); isNum && f == math.Trunc(f) && math.Abs(f) < 1<<53 {
			e.CycleID = int(f)
		} else {
			warn("cycle_id", "ignored: not a whole number")
		}
	}
	e.Domain = str("domain")
	e.ResultType = str("result_type")
	e.CycleMode = str("cycle_mode")
	e.WeakestDimension = str("weakest_dimension")
	e.LeapTarget = str("leap_target")
	e.ArtifactScore = scoreAt(obj["artifact_score"], "artifact_score")
	switch ds := obj["dimension_scores"].(type) {
	case nil:
	case map[string]any:
		if len(ds) > maxDimensions {
			warn("dimension_scores", "ignored: more than %d dimensions", maxDimensions)
			break
		}
		e.DimensionScores = map[string]*float64{}
		// Sorted, so that the warnings come in the same order every time.
		for _, k := range slices.Sorted(maps.Keys(ds)) {
			x := ds[k]
			if !validName(k) {
				warn("dimension_scores", "ignored a key that is not a dimension name")
				continue
			}
			e.DimensionScores[k] = scoreAt(x, "dimension_scores."+k)
		}
	default:
		warn("dimension_scores", "ignored: %s, not an object", kind(ds))
	}
	switch la := obj["leap_attempts"].(type) {
	case nil:
	case []any:
		if len(la) > maxEntryAttempts {
			warn("leap_attempts", "only the last %d of %d read", maxEntryAttempts, len(la))
			la = la[len(la)-maxEntryAttempts:]
		}
		for i, x := range la {
			ap := fmt.Sprintf("leap_attempts[%d]", i)
			a, ok := x.(map[string]any)
			if !ok {
				warn(ap, "ignored: %s, not an object", kind(x))
				continue
			}
			dim, _ := a["dimension"].(string)
			if !validName(dim) {
				warn(ap+".dimension", "ignored: not a dimension name")
				continue
			}
			at := LeapAttempt{Dimension: dim}
			if f, ok := finite(a["attempt_number"]); ok && f == math.Trunc(f) && math.Abs(f) < 1<<31 {
				at.AttemptNumber = int(f)
			}
			switch d := a["delta_score"].(type) {
			case nil:
			case json.Number:
				if f, ok := finite(d); ok {
					at.DeltaScore = &f
				} else {
					warn(ap+".delta_score", "out of range, read as missing")
				}
			default:
				warn(ap+".delta_score", "%s, read as missing", kind(d))
			}
			e.LeapAttempts = append(e.LeapAttempts, at)
		}
	default:
		warn("leap_attempts", "ignored: %s, not a list", kind(la))
	}
	return e, warns, nil
}
