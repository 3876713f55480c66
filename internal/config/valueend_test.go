package config

import (
	"strings"
	"testing"
)

// valueEndOracle is valueEnd as it was before the table and the strings
// skipped in place: the oracle the faster one is compared with.
func valueEndOracle(b []byte, i int) (int, bool) {
	if i >= len(b) {
		return 0, false
	}
	switch b[i] {
	case '"':
		for j := i + 1; j < len(b); j++ {
			switch b[j] {
			case '\\':
				j++
			case '"':
				return j + 1, true
			}
		}
		return 0, false
	case '{', '[':
		depth := 0
		for j := i; j < len(b); j++ {
			switch b[j] {
			case '"':
				end, ok := valueEndOracle(b, j)
				if !ok {
					return 0, false
				}
				j = end - 1
			case '{', '[':
				depth++
			case '}', ']':
				if depth--; depth == 0 {
					return j + 1, true
				}
			}
		}
		return 0, false
	}
	j := i
	for j < len(b) {
		switch b[j] {
		case ',', '}', ']', ' ', '\t', '\n', '\r':
			return j, j > i
		}
		j++
	}
	return j, j > i
}

// valueEndsAgree fails unless valueEnd and its oracle give the same
// answer at every position of b, valid JSON or not.
func valueEndsAgree(t *testing.T, b []byte) {
	t.Helper()
	for i := 0; i <= len(b); i++ {
		ge, gok := valueEnd(b, i)
		we, wok := valueEndOracle(b, i)
		if ge != we || gok != wok {
			t.Fatalf("%q at %d: valueEnd %d %v, the oracle %d %v", b, i, ge, gok, we, wok)
		}
	}
}

// valueEndCases are documents cut short, strings ending in escapes, and
// brackets inside strings.
var valueEndCases = []string{`{"a": "x\"}", "b": [1, {"c": "]"}]}`, `["\\", "\\\"", "\\\\"]`, `{"a": "\`, `{"a": "\\`, `[[[`, `]]`,
	`"abc`, `"ab\"c"`, `{"a":{"b":{}}}x`, `  `, `true,`, `-1.5e3}`, `{"é": "ü{"}`}

// TestValueEndIsTheOracle compares valueEnd with the oracle at every
// position of every configuration at hand, of its mutations and of
// malformed documents.
func TestValueEndIsTheOracle(t *testing.T) {
	for _, raw := range configCorpus(t) {
		valueEndsAgree(t, raw)
		for _, m := range keyMutations(raw)[:10] {
			valueEndsAgree(t, m)
		}
	}
	for _, c := range valueEndCases {
		valueEndsAgree(t, []byte(c))
	}
}

// FuzzValueEnd compares valueEnd with the oracle on any bytes.
func FuzzValueEnd(f *testing.F) {
	for _, c := range valueEndCases {
		f.Add([]byte(c))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if len(b) > 4096 {
			return
		}
		valueEndsAgree(t, b)
	})
}

// BenchmarkValueEnd delimits the fixtures' configuration of 1,000
// domains: valueEnd and the oracle, the way it was.
func BenchmarkValueEnd(b *testing.B) {
	raw := benchConfigJSON(1000)
	for _, way := range []struct {
		name string
		end  func([]byte, int) (int, bool)
	}{{"table", valueEnd}, {"oracle", valueEndOracle}} {
		b.Run(way.name, func(b *testing.B) {
			for b.Loop() {
				if end, ok := way.end(raw, 0); !ok || end != len(raw)-1 {
					b.Fatal(end, ok)
				}
			}
		})
	}
}

// deepOffsetOracle is deepOffset as it was before the table: the oracle
// the faster one is compared with.
func deepOffsetOracle(raw []byte) int {
	depth := 0
	inString, escaped := false, false
	for i, c := range raw {
		if inString {
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			}
			continue
		}
		switch c {
		case '"':
			inString = true
		case '{', '[':
			if depth++; depth > MaxDepth {
				return i
			}
		case '}', ']':
			depth--
		}
	}
	return -1
}

// deepDocs are documents nesting past MaxDepth, inside strings or not,
// and cut short in a string or an escape.
func deepDocs() [][]byte {
	deep := strings.Repeat(`{"a": [`, MaxDepth/2) + `{"b": "x"}` + strings.Repeat(`]}`, MaxDepth/2)
	return [][]byte{[]byte(deep), []byte(`{"s": "` + strings.Repeat("[", 100) + `"}`), []byte(`{"s": "\"` + strings.Repeat("[", 100)),
		[]byte(`{"s": "\\` + `", "t": ` + strings.Repeat("[", 100)), []byte(`"\`), []byte(strings.Repeat("]", 80) + strings.Repeat("[", 80))}
}

// TestDeepOffsetIsTheOracle compares deepOffset with the oracle on every
// configuration at hand, each cut at every length, and on deep ones.
func TestDeepOffsetIsTheOracle(t *testing.T) {
	docs := append(configCorpus(t), deepDocs()...)
	deeper := 0
	for _, raw := range docs {
		for n := 0; n <= len(raw); n++ {
			if got, want := deepOffset(raw[:n]), deepOffsetOracle(raw[:n]); got != want {
				t.Fatalf("%q: deepOffset %d, the oracle %d", raw[:n], got, want)
			} else if want >= 0 {
				deeper++
			}
		}
	}
	if deeper == 0 {
		t.Fatal("no document nests past the limit")
	}
}

// FuzzDeepOffset compares deepOffset with the oracle on any bytes.
func FuzzDeepOffset(f *testing.F) {
	for _, d := range deepDocs() {
		f.Add(d)
	}
	for _, c := range valueEndCases {
		f.Add([]byte(c))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if got, want := deepOffset(b), deepOffsetOracle(b); got != want {
			t.Fatalf("%q: deepOffset %d, the oracle %d", b, got, want)
		}
	})
}
