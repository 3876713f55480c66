package artifact

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// pathError is a problem with one value of a JSON document, named by its
// JSON path (quality_rubric.dimensions[2].targets[0].op).
type pathError struct {
	Path   string
	Reason string
}

func (e *pathError) Error() string { return e.Path + ": " + e.Reason }

func errAt(path, format string, a ...any) error {
	return &pathError{Path: path, Reason: fmt.Sprintf(format, a...)}
}

// decodeValue decodes one JSON value keeping numbers as written, so that
// an out-of-range number is reported instead of silently becoming ±Inf.
func decodeValue(raw json.RawMessage) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if dec.More() {
		return nil, fmt.Errorf("more than one JSON value")
	}
	return v, nil
}

// kind names a decoded JSON value's type for an error message.
func kind(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "a boolean"
	case json.Number:
		return "a number"
	case string:
		return "a string"
	case []any:
		return "a list"
	case map[string]any:
		return "an object"
	}
	return fmt.Sprintf("%T", v)
}

// finite parses a JSON number into a finite float64.
func finite(v any) (float64, bool) {
	n, ok := v.(json.Number)
	if !ok {
		return 0, false
	}
	f, err := strconv.ParseFloat(string(n), 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
		return 0, false
	}
	return f, true
}

// numberIn reads a finite number within [lo, hi].
func numberIn(v any, path string, lo, hi float64) (float64, error) {
	if _, isNum := v.(json.Number); !isNum {
		return 0, errAt(path, "must be a number, not %s", kind(v))
	}
	f, ok := finite(v)
	if !ok {
		return 0, errAt(path, "number %s is out of range", v)
	}
	if f < lo || f > hi {
		return 0, errAt(path, "must be between %g and %g, not %g", lo, hi, f)
	}
	return f, nil
}

// intIn reads a whole number within [lo, hi].
func intIn(v any, path string, lo, hi int) (int, error) {
	f, err := numberIn(v, path, float64(lo), float64(hi))
	if err != nil {
		return 0, err
	}
	if f != math.Trunc(f) {
		return 0, errAt(path, "must be a whole number, not %g", f)
	}
	return int(f), nil
}

// stringMax reads a string of at most max bytes.
func stringMax(v any, path string, max int) (string, error) {
	s, ok := v.(string)
	if !ok {
		return "", errAt(path, "must be a string, not %s", kind(v))
	}
	if len(s) > max {
		return "", errAt(path, "is %d bytes long, more than %d", len(s), max)
	}
	return s, nil
}

// stringList reads a list of at most maxItems strings.
func stringList(v any, path string, maxItems, maxLen int) ([]string, error) {
	if v == nil {
		return nil, nil
	}
	l, ok := v.([]any)
	if !ok {
		return nil, errAt(path, "must be a list of strings, not %s", kind(v))
	}
	if len(l) > maxItems {
		return nil, errAt(path, "has %d entries, more than %d", len(l), maxItems)
	}
	out := make([]string, 0, len(l))
	for i, e := range l {
		s, err := stringMax(e, fmt.Sprintf("%s[%d]", path, i), maxLen)
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, nil
}

// Command is a capture or harness command as the rubric gives it: a string
// for the shell, or a list of words run without one.
type Command struct {
	// Shell is the command line for "sh -c" (the rubric gave a string).
	Shell string `json:"shell,omitempty"`
	// Argv is the program and its arguments (the rubric gave a list).
	Argv []string `json:"argv,omitempty"`
}

// Empty reports whether no command was given.
func (c Command) Empty() bool { return strings.TrimSpace(c.Shell) == "" && len(c.Argv) == 0 }

// Words is the command split into words: Argv as is, or Shell split the way
// a shell splits plain words and quotes (no expansion).
func (c Command) Words() []string {
	if len(c.Argv) > 0 {
		return c.Argv
	}
	return shellWords(c.Shell)
}

// String is the command for a message.
func (c Command) String() string {
	if len(c.Argv) > 0 {
		return strings.Join(c.Argv, " ")
	}
	return c.Shell
}

func command(v any, path string) (Command, error) {
	switch x := v.(type) {
	case nil:
		return Command{}, nil
	case string:
		if len(x) > maxCommandLen {
			return Command{}, errAt(path, "is %d bytes long, more than %d", len(x), maxCommandLen)
		}
		return Command{Shell: x}, nil
	case []any:
		argv, err := stringList(x, path, maxCommandWords, maxCommandLen)
		if err != nil {
			return Command{}, err
		}
		if len(argv) > 0 && argv[0] == "" {
			return Command{}, errAt(path+"[0]", "the program name is empty")
		}
		return Command{Argv: argv}, nil
	}
	return Command{}, errAt(path, "must be a string or a list of strings, not %s", kind(v))
}

// shellWords splits s into words at unquoted blanks, honouring single
// quotes, double quotes and backslashes; nothing is expanded.
func shellWords(s string) []string {
	var words []string
	var cur strings.Builder
	inWord := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '\'':
			inWord = true
			j := strings.IndexByte(s[i+1:], '\'')
			if j < 0 {
				cur.WriteString(s[i+1:])
				i = len(s)
				continue
			}
			cur.WriteString(s[i+1 : i+1+j])
			i += j + 1
		case c == '"':
			inWord = true
			for i++; i < len(s) && s[i] != '"'; i++ {
				if s[i] == '\\' && i+1 < len(s) && strings.IndexByte("\"\\$`", s[i+1]) >= 0 {
					i++
				}
				cur.WriteByte(s[i])
			}
		case c == '\\' && i+1 < len(s):
			inWord = true
			i++
			cur.WriteByte(s[i])
		case c == ' ' || c == '\t' || c == '\n':
			if inWord {
				words = append(words, cur.String())
				cur.Reset()
				inWord = false
			}
		default:
			inWord = true
			cur.WriteByte(c)
		}
	}
	if inWord {
		words = append(words, cur.String())
	}
	return words
}
