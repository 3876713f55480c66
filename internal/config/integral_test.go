package config

import (
	"bytes"
	"encoding/json"
	"io"
	"reflect"
	"strconv"
	"strings"
	"testing"
)

// integralNumbersByTokens is the token-by-token rewrite integralNumbers
// replaced, kept as the oracle: both must decode alike.
func integralNumbersByTokens(raw []byte) []byte {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var out bytes.Buffer
	type frame struct {
		obj   bool
		n     int
		isKey bool
	}
	var stack []frame
	sep := func() {
		if len(stack) == 0 {
			return
		}
		f := &stack[len(stack)-1]
		if f.obj {
			if f.isKey {
				if f.n > 0 {
					out.WriteByte(',')
				}
			} else {
				out.WriteByte(':')
			}
		} else if f.n > 0 {
			out.WriteByte(',')
		}
	}
	after := func() {
		if len(stack) == 0 {
			return
		}
		f := &stack[len(stack)-1]
		if f.obj {
			if !f.isKey {
				f.n++
			}
			f.isKey = !f.isKey
		} else {
			f.n++
		}
	}
	for {
		t, err := dec.Token()
		if err != nil {
			if err == io.EOF {
				return out.Bytes()
			}
			return raw
		}
		switch v := t.(type) {
		case json.Delim:
			switch v {
			case '{', '[':
				sep()
				out.WriteByte(byte(v))
				stack = append(stack, frame{obj: v == '{', isKey: true})
			case '}', ']':
				stack = stack[:len(stack)-1]
				out.WriteByte(byte(v))
				after()
			}
			continue
		case json.Number:
			sep()
			s := v.String()
			if strings.ContainsAny(s, ".eE") {
				if f, err := v.Float64(); err == nil && f == float64(int64(f)) && f < 1e15 && f > -1e15 {
					s = strconv.FormatInt(int64(f), 10)
				}
			}
			out.WriteString(s)
		default:
			sep()
			b, _ := json.Marshal(v)
			out.Write(b)
		}
		after()
	}
}

func TestIntegralNumbersRewritesOnlyWholeNumbers(t *testing.T) {
	in := `{"a": 2.0, "b": "1.0 \" 3.0", "c": [1e2, -0.0, 2.5, 1e20, -3E+1, 0], "d\"1.0": 3.00, "e": true}`
	want := `{"a": 2, "b": "1.0 \" 3.0", "c": [100, 0, 2.5, 1e20, -30, 0], "d\"1.0": 3, "e": true}`
	if got := string(integralNumbers([]byte(in))); got != want {
		t.Fatalf("integralNumbers:\n got %s\nwant %s", got, want)
	}
	same := []byte(`{"a": 1, "b": "2.0"}`)
	if got := integralNumbers(same); &got[0] != &same[0] {
		t.Error("a document with nothing to rewrite was copied")
	}
}

func FuzzIntegralNumbersMatchesTokens(f *testing.F) {
	f.Add([]byte(`{"a": 2.0, "b": "1.0", "c": [1e2, -0.0, 2.5, 1e20], "d": {"e": 1E1}}`))
	f.Add([]byte(`{"s": "\u0031.0 <&>", "n": -1.5e-3, "x": 999999999999999.0, "y": 1e15}`))
	f.Add([]byte(`[0.0, 10.000, "\\\"", {"1.0": 2.0}]`))
	f.Fuzz(func(t *testing.T, raw []byte) {
		if !json.Valid(raw) {
			return
		}
		decode := func(b []byte) (any, error) {
			dec := json.NewDecoder(bytes.NewReader(b))
			dec.UseNumber()
			var v any
			return v, dec.Decode(&v)
		}
		got, err := decode(integralNumbers(raw))
		if err != nil {
			t.Fatalf("rewrite of %s is not JSON: %v", raw, err)
		}
		want, err := decode(integralNumbersByTokens(raw))
		if err != nil {
			return
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("%s: decodes as %v, the token rewrite as %v", raw, got, want)
		}
	})
}
