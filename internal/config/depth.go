package config

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
)

// MaxDepth bounds how deeply objects and arrays may nest in config.json
// (the top-level object is level 1). The deepest key ooda reads sits about
// eight levels down; the bound is far above that, and low enough that
// every pass over the document (the schema validator, the number and
// duplicate-key checks, the decoder) stays linear in the file's size. A
// 20 KB file of ten thousand nested brackets used to take seconds and a
// gigabyte of memory to reject.
const MaxDepth = 64

// depthShownTokens is how many leading tokens of the pointer a depth error
// keeps: enough to find the place in the file, short enough to read.
const depthShownTokens = 4

// depthShownChars bounds the length of that pointer.
const depthShownChars = 100

// depthCheck reports, as an *Error naming file, the first place where raw
// nests objects and arrays deeper than MaxDepth. It runs before anything
// else parses raw: a byte scan that allocates nothing finds whether the
// limit is exceeded, and only then is the prefix tokenized to name the
// JSON Pointer. Text that is not JSON is left to the syntax check, unless
// it exceeds the limit before its first syntax error.
func depthCheck(file string, raw []byte) *Error {
	off := deepOffset(raw)
	if off < 0 {
		return nil
	}
	tokens, ok := pathAt(raw[:off+1])
	if !ok {
		return nil
	}
	// The path is a real pointer, to an ancestor of the place: the first
	// few tokens, as long as they are short (a key can be any length).
	shown, n := 0, 0
	for ; shown < len(tokens) && shown < depthShownTokens; shown++ {
		if n += 1 + len(escapePointer(tokens[shown])); n > depthShownChars {
			break
		}
	}
	return &Error{File: file, Path: pointer(tokens[:shown]), Reason: depthReason(tokens, shown)}
}

// depthReason explains the refusal, naming the pointer where level
// MaxDepth+1 opens. That pointer has MaxDepth tokens, so its middle is cut
// and each token shortened: a hostile key must not flood the message.
func depthReason(tokens []string, shown int) string {
	const head, tail = 3, 2
	var parts []string
	add := func(ts []string) {
		for _, t := range ts {
			parts = append(parts, escapePointer(shorten(t)))
		}
	}
	if len(tokens) <= head+tail+1 {
		add(tokens)
	} else {
		add(tokens[:head])
		parts = append(parts, fmt.Sprintf("…(%d more)…", len(tokens)-head-tail))
		add(tokens[len(tokens)-tail:])
	}
	return fmt.Sprintf("objects and arrays nest deeper than the limit of %d levels: level %d opens at /%s, %d levels below this value",
		MaxDepth, MaxDepth+1, strings.Join(parts, "/"), len(tokens)-shown)
}

// deepOffset returns the offset of the first '{' or '[' that opens level
// MaxDepth+1, or -1. It only tracks strings (where brackets are text) and
// brackets, so on valid JSON it is exact; on invalid JSON pathAt decides.
// Every process runs it over the whole file, so the other bytes are
// passed over by a table (valueEnd's) and strings are skipped in place.
func deepOffset(raw []byte) int {
	depth := 0
	for i := 0; i < len(raw); i++ {
		c := raw[i]
		if !nesting[c] {
			continue
		}
		switch c {
		case '"':
			for i++; i < len(raw) && raw[i] != '"'; i++ {
				if raw[i] == '\\' {
					i++
				}
			}
		case '{', '[':
			if depth++; depth > MaxDepth {
				return i
			}
		default: // '}', ']'
			depth--
		}
	}
	return -1
}

// pathAt tokenizes prefix, which ends with the bracket that opens level
// MaxDepth+1, and returns the JSON Pointer tokens of that bracket's value.
// It reports false if prefix is not the start of valid JSON: then the
// syntax error comes first and is the one to report.
func pathAt(prefix []byte) ([]string, bool) {
	type frame struct {
		obj     bool
		wantKey bool
		key     string
		idx     int
	}
	var stack []frame
	dec := json.NewDecoder(bytes.NewReader(prefix))
	dec.UseNumber()
	// valueStarts moves the enclosing array on to its next element.
	valueStarts := func() {
		if n := len(stack); n > 0 && !stack[n-1].obj {
			stack[n-1].idx++
		}
	}
	// valueEnds makes the enclosing object expect its next key.
	valueEnds := func() {
		if n := len(stack); n > 0 && stack[n-1].obj {
			stack[n-1].wantKey = true
		}
	}
	for {
		t, err := dec.Token()
		if err != nil {
			return nil, false
		}
		if d, ok := t.(json.Delim); ok {
			switch d {
			case '{', '[':
				valueStarts()
				if len(stack) == MaxDepth {
					tokens := make([]string, len(stack))
					for i, f := range stack {
						if f.obj {
							tokens[i] = f.key
						} else {
							tokens[i] = strconv.Itoa(f.idx)
						}
					}
					return tokens, true
				}
				stack = append(stack, frame{obj: d == '{', wantKey: true, idx: -1})
			case '}', ']':
				stack = stack[:len(stack)-1]
				valueEnds()
			}
			continue
		}
		if n := len(stack); n > 0 && stack[n-1].obj && stack[n-1].wantKey {
			stack[n-1].key, _ = t.(string)
			stack[n-1].wantKey = false
			continue
		}
		valueStarts()
		valueEnds()
	}
}
