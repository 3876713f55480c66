package config

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
)

// RiceExtensions is scoring.rice_extensions: an action extension label to
// the weight of its score in RICE (5-C2). The file may give each weight as
// a number, {"timing": 0.3}, or in the original project's documented
// object form, {"timing": {"weight": 0.3}}, whose other keys (a
// description, say) are tolerated and ignored. Either way the loaded map
// holds the number, so scoring never needs to know which form was written.
type RiceExtensions map[string]float64

// UnmarshalJSON reads both forms. Anything else — a string, an array, an
// object without a numeric "weight" — is an error naming the label, so the
// loader reports it at /scoring/rice_extensions/<label> (the schema
// normally catches it first, with the same path).
func (r *RiceExtensions) UnmarshalJSON(b []byte) error {
	if bytes.Equal(bytes.TrimSpace(b), []byte("null")) {
		// As for any other map: null leaves the default in place.
		return nil
	}
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(b, &raw); err != nil {
		return &json.UnmarshalTypeError{Value: jsonKind(b), Type: reflect.TypeFor[RiceExtensions]()}
	}
	out := make(RiceExtensions, len(raw))
	for label, v := range raw {
		w, err := riceWeight(v)
		if err != nil {
			// Field is appended to the decoder's own field stack
			// (scoring.rice_extensions), giving the full path.
			return &json.UnmarshalTypeError{Value: err.Error(), Type: reflect.TypeFor[float64](), Field: label}
		}
		out[label] = w
	}
	*r = out
	return nil
}

// errNoWeight is the shape error of an object without a numeric weight.
var errNoWeight = errors.New(`object without a numeric "weight"`)

// riceWeight reads one weight: a number, or an object whose "weight" key
// is a number.
func riceWeight(v json.RawMessage) (float64, error) {
	var w float64
	if err := json.Unmarshal(v, &w); err == nil && !bytes.Equal(bytes.TrimSpace(v), []byte("null")) {
		return w, nil
	}
	var obj struct {
		Weight *float64 `json:"weight"`
	}
	trimmed := bytes.TrimSpace(v)
	if len(trimmed) == 0 || trimmed[0] != '{' {
		return 0, errors.New(jsonKind(v))
	}
	// A weight of the wrong type fails here; a missing one leaves nil.
	if err := json.Unmarshal(v, &obj); err != nil || obj.Weight == nil {
		return 0, errNoWeight
	}
	return *obj.Weight, nil
}

// JSONKind names the kind of a JSON value by its first byte — object,
// array, string, boolean, null or number — for a message that says what
// a value is instead of what was expected; empty input is "null".
func JSONKind(b []byte) string {
	t := bytes.TrimSpace(b)
	if len(t) == 0 {
		return "null"
	}
	switch t[0] {
	case '{':
		return "object"
	case '[':
		return "array"
	case '"':
		return "string"
	case 't', 'f':
		return "boolean"
	case 'n':
		return "null"
	}
	return "number"
}

// jsonKind is JSONKind with a number's digits, for the errors that
// quote the value.
func jsonKind(b []byte) string {
	t := bytes.TrimSpace(b)
	if len(t) == 0 {
		return "nothing"
	}
	if k := JSONKind(t); k != "number" {
		return k
	}
	return fmt.Sprintf("number %s", t)
}
