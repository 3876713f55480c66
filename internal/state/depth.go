package state

import (
	"errors"
	"fmt"
	"io/fs"
)

// MaxJSONDepth is the deepest nesting of objects and arrays accepted in
// any JSON file ooda reads under agent/state/ (evolve files, domain state
// files, lenses, lens changelogs, rotation cursors, external signals, the
// active context, reports). No file ooda writes comes near it; a deeper
// file is hostile or broken, and decoding and re-encoding it would cost
// memory and output in proportion to its depth squared.
const MaxJSONDepth = 64

// DepthError is a JSON file nested deeper than MaxJSONDepth. It is refused
// like a file that is too large: it is not decoded.
type DepthError struct {
	Path  string
	Depth int
	Limit int
}

func (e *DepthError) Error() string {
	return fmt.Sprintf("%s: JSON nested %d levels deep, deeper than the limit of %d; not decoded", e.Path, e.Depth, e.Limit)
}

// jsonDepth returns the deepest nesting of objects and arrays in b, by one
// pass over the bytes that skips strings: no allocation, whatever b holds.
func jsonDepth(b []byte) int {
	depth, high := 0, 0
	for i := 0; i < len(b); i++ {
		switch b[i] {
		case '"':
			i = skipString(b, i) - 1
		case '{', '[':
			depth++
			high = max(high, depth)
		case '}', ']':
			if depth > 0 {
				depth--
			}
		}
	}
	return high
}

// checkDepth refuses b when it nests deeper than MaxJSONDepth.
func checkDepth(display string, b []byte) error {
	if d := jsonDepth(b); d > MaxJSONDepth {
		return &DepthError{Path: display, Depth: d, Limit: MaxJSONDepth}
	}
	return nil
}

// readJSONFile is readFile for a file that holds JSON: a file nested
// deeper than MaxJSONDepth is refused with a *DepthError before anything
// decodes it.
func (s *Store) readJSONFile(p string) ([]byte, fs.FileInfo, error) {
	b, fi, err := s.readFile(p)
	if err != nil {
		return b, fi, err
	}
	if err := checkDepth(p, b); err != nil {
		return nil, fi, err
	}
	return b, fi, nil
}

// isDepth reports whether err is a *DepthError.
func isDepth(err error) bool {
	var de *DepthError
	return errors.As(err, &de)
}

// maxIndentDepth is the deepest level whose contents encodeJSON puts on
// lines of their own; anything nested deeper (only ever a preserved
// unknown value) is written compact.
const maxIndentDepth = 8

// indentBounded indents the compact JSON src like json.Indent with two
// spaces, with two bounds that keep the output in proportion to the input
// whatever it holds: containers nested deeper than maxIndentDepth are
// written compact, and once the indentation added exceeds the input's own
// size plus 64 KiB the rest is written compact, so the output is never
// more than twice the input plus 64 KiB and a few bytes. Indentation costs a line and its
// leading spaces per value, so a deeply nested or very long preserved
// value would otherwise grow without bound (depth² for nested arrays).
func indentBounded(src []byte) []byte {
	out, _ := indentCounting(src)
	return out
}

// indentCounting is indentBounded, also saying how many blanks between
// tokens it found in src (and left out): none when src was compact.
func indentCounting(src []byte) (out []byte, blanks int) {
	budget := len(src) + 64<<10
	out = make([]byte, 0, len(src)+len(src)/2+64)
	depth := 0
	flat := false
	needIndent := false
	i := 0
	// pretty says whether whitespace goes in at depth d: not once the
	// indentation added passes the budget (from then on, none does).
	pretty := func(d int) bool {
		if !flat && len(out)-i > budget {
			flat = true
		}
		return !flat && d <= maxIndentDepth
	}
	newline := func(d int) {
		out = append(out, '\n')
		d = max(d, 0)
		for ; d > len(indentSpaces)/2; d -= len(indentSpaces) / 2 {
			out = append(out, indentSpaces...)
		}
		out = append(out, indentSpaces[:2*d]...)
	}
	for ; i < len(src); i++ {
		c := src[i]
		switch c {
		case ' ', '\t', '\n', '\r':
			blanks++
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
			// The string as it is, to its closing quote (the first one
			// not escaped), or to the end of src when it has none.
			start := i
			if end := stringEnd(src, i); end >= 0 {
				i = end - 1
			} else {
				i = len(src)
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
				// An empty container stays "[]" or "{}".
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
	return out, blanks
}

// indentSpaces is the indentation of a few levels, appended in one go.
const indentSpaces = "                                "
