package state

import (
	"bytes"
	"strings"
	"testing"
	"unicode"
)

// indentBoundedByBytes is the indentBounded that copied strings and
// indentation a byte at a time, kept as the oracle of the one that
// copies them in runs.
func indentBoundedByBytes(src []byte) []byte {
	budget := len(src) + 64<<10
	out := make([]byte, 0, len(src)+len(src)/2+64)
	depth := 0
	flat := false
	needIndent := false
	i := 0
	pretty := func(d int) bool {
		if !flat && len(out)-i > budget {
			flat = true
		}
		return !flat && d <= maxIndentDepth
	}
	newline := func(d int) {
		out = append(out, '\n')
		for j := 0; j < d; j++ {
			out = append(out, ' ', ' ')
		}
	}
	for ; i < len(src); i++ {
		c := src[i]
		switch c {
		case ' ', '\t', '\n', '\r':
			continue
		}
		if needIndent && c != ']' && c != '}' {
			needIndent = false
			if pretty(depth) {
				newline(depth)
			}
		}
		switch c {
		case '"':
			start := i
			for i++; i < len(src) && src[i] != '"'; i++ {
				if src[i] == '\\' {
					i++
				}
			}
			out = append(out, src[start:min(i+1, len(src))]...)
		case '{', '[':
			out = append(out, c)
			depth++
			needIndent = true
		case ',':
			out = append(out, c)
			if pretty(depth) {
				newline(depth)
			}
		case ':':
			out = append(out, c)
			if pretty(depth) {
				out = append(out, ' ')
			}
		case '}', ']':
			if needIndent {
				needIndent = false
			} else if pretty(depth) {
				newline(depth - 1)
			}
			depth--
			out = append(out, c)
		default:
			out = append(out, c)
		}
	}
	return out
}

// scanStringByBytes is scanString stepping one byte at a time, its oracle.
func scanStringByBytes(b []byte, i int) (end int, plain, ok bool) {
	plain = true
	for i++; i < len(b); i++ {
		switch c := b[i]; {
		case c == '"':
			return i + 1, plain, true
		case c < 0x20:
			return 0, false, false
		case c >= 0x80:
			plain = false
		case c == '\\':
			plain = false
			i++
			if i >= len(b) {
				return 0, false, false
			}
			switch b[i] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			case 'u':
				if len(b)-i <= 4 {
					return 0, false, false
				}
				for _, h := range b[i+1 : i+5] {
					if !('0' <= h && h <= '9' || 'a' <= h && h <= 'f' || 'A' <= h && h <= 'F') {
						return 0, false, false
					}
				}
				i += 4
			default:
				return 0, false, false
			}
		}
	}
	return 0, false, false
}

// indentSeeds are documents deep enough to pass maxIndentDepth, long
// enough to pass the budget, and strings with escapes at every place.
func indentSeeds() []string {
	deep := strings.Repeat(`{"a":[`, 40) + `"x\"y"` + strings.Repeat(`]}`, 40)
	long := `[` + strings.Repeat(`[[[[[[[[[[1]]]]]]]]]],`, 3000) + `0]`
	return []string{deep, long, `{"a":"b\\","c":"\\\"","d":"\u00e9\n"}`, `"unterminated\`, `"x\\`, `}}]]`, `{,}`, `[1, 2 ,3]`, "{\n \"k\" : [ ] }",
		`"0123456789abcdef\"0123456789abcdef\\"`, "\"ctl\x01 in string\"", "\"high \xff\xfe bytes 0123456789\""}
}

// Whatever the bytes, the indentation and the string scanner answer as
// their byte-at-a-time oracles.
func FuzzIndentAndScanStringMatchOracles(f *testing.F) {
	for _, s := range indentSeeds() {
		f.Add([]byte(s))
	}
	for _, s := range decodeOnceEdgeDocs {
		f.Add([]byte(s))
	}
	for _, b := range decodeOnceCorpus(f) {
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if got, want := indentBounded(b), indentBoundedByBytes(b); !bytes.Equal(got, want) {
			t.Fatalf("indentBounded(%q) =\n%q\nthe oracle\n%q", b, got, want)
		}
		for i := range b {
			if b[i] != '"' {
				continue
			}
			ge, gp, gok := scanString(b, i)
			we, wp, wok := scanStringByBytes(b, i)
			if ge != we || gp != wp || gok != wok {
				t.Fatalf("scanString(%q, %d) = %d %v %v, the oracle %d %v %v", b, i, ge, gp, gok, we, wp, wok)
			}
		}
	})
}

// foldKeyByRunes is foldKey rune by rune for every key, its oracle.
func foldKeyByRunes(s string) string {
	var b strings.Builder
	for _, r := range s {
		if r < 0x80 {
			if 'a' <= r && r <= 'z' {
				r -= 'a' - 'A'
			}
			b.WriteRune(r)
			continue
		}
		for {
			r2 := unicode.SimpleFold(r)
			if r2 <= r {
				r = r2
				break
			}
			r = r2
		}
		b.WriteRune(r)
	}
	return b.String()
}

// Whatever the key, it folds as rune by rune.
func FuzzFoldKey(f *testing.F) {
	for _, s := range []string{"", "cycle_id", "CYCLE_ID", "Kelvin \u212a", "ſ", "\xff", "a\x00b", "é", "ÀÉ"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := foldKey(s), foldKeyByRunes(s); got != want {
			t.Fatalf("foldKey(%q) = %q, want %q", s, got, want)
		}
	})
}
