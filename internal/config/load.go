package config

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strconv"
	"strings"
)

// Error is a configuration problem that names the file, the JSON path of the
// offending value (a JSON Pointer such as /safety/confidence_threshold, or
// empty when the whole file is at fault) and the reason.
type Error struct {
	File   string
	Path   string
	Reason string
	// NotFound is set when the file does not exist at all.
	NotFound bool
	// Issues lists every problem when schema validation found several.
	Issues []Issue
}

// Issue is one schema violation.
type Issue struct {
	Path   string `json:"path"`
	Reason string `json:"reason"`
}

func (e *Error) Error() string {
	if len(e.Issues) > 1 {
		var b bytes.Buffer
		fmt.Fprintf(&b, "%s: %d problems:", e.File, len(e.Issues))
		for _, is := range e.Issues {
			fmt.Fprintf(&b, "\n  %s: %s", displayPath(is.Path), is.Reason)
		}
		return b.String()
	}
	if e.Path == "" {
		return fmt.Sprintf("%s: %s", e.File, e.Reason)
	}
	return fmt.Sprintf("%s: %s: %s", e.File, displayPath(e.Path), e.Reason)
}

func displayPath(p string) string {
	if p == "" {
		return "(root)"
	}
	return p
}

// IsConfigError reports whether err is (or wraps) a configuration error.
func IsConfigError(err error) bool {
	var ce *Error
	return errors.As(err, &ce)
}

// Load reads, validates and defaults the config at path.
func Load(path string) (*Config, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, &Error{File: path, Reason: "config.json not found (run `ooda init` to create it)", NotFound: true}
		}
		return nil, &Error{File: path, Reason: err.Error()}
	}
	return Parse(path, raw)
}

// Parse validates and defaults raw config bytes; file names the source in errors.
func Parse(file string, raw []byte) (*Config, error) {
	if err := syntaxCheck(file, raw); err != nil {
		return nil, err
	}
	if err := ValidateSchema(file, raw); err != nil {
		return nil, err
	}
	c := Default()
	if err := json.Unmarshal(integralNumbers(raw), c); err != nil {
		var de *domainError
		if errors.As(err, &de) && !isTypeError(err) {
			return nil, &Error{File: file, Path: "/domains/" + escapePointer(de.name), Reason: de.err.Error()}
		}
		return nil, typeError(file, err)
	}
	c.applyDomainDefaults()
	if err := c.check(file); err != nil {
		return nil, err
	}
	return c, nil
}

// syntaxCheck reports a JSON syntax error with its line and column.
func syntaxCheck(file string, raw []byte) error {
	var v any
	dec := json.NewDecoder(bytes.NewReader(raw))
	if err := dec.Decode(&v); err != nil {
		var se *json.SyntaxError
		if errors.As(err, &se) {
			line, col := lineCol(raw, se.Offset)
			return &Error{File: file, Reason: fmt.Sprintf("parse error at line %d, column %d: %v", line, col, err)}
		}
		if errors.Is(err, io.ErrUnexpectedEOF) {
			line, col := lineCol(raw, int64(len(raw))+1)
			return &Error{File: file, Reason: fmt.Sprintf("parse error at line %d, column %d: unexpected end of file (truncated JSON?)", line, col)}
		}
		return &Error{File: file, Reason: "parse error: " + err.Error()}
	}
	if _, ok := v.(map[string]any); !ok {
		return &Error{File: file, Reason: "the top level must be a JSON object"}
	}
	if dec.More() {
		return &Error{File: file, Reason: "parse error: trailing data after the top-level object"}
	}
	return nil
}

func lineCol(b []byte, off int64) (int, int) {
	line, col := 1, 1
	for i := int64(0); i < off-1 && i < int64(len(b)); i++ {
		if b[i] == '\n' {
			line++
			col = 1
		} else {
			col++
		}
	}
	return line, col
}

func typeError(file string, err error) error {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		path := "/" + jsonPointerFromField(te.Field)
		var de *domainError
		if errors.As(err, &de) {
			path = "/domains/" + escapePointer(de.name) + path
		}
		return &Error{File: file, Path: path, Reason: fmt.Sprintf("expected %s, got JSON %s", te.Type, te.Value)}
	}
	return &Error{File: file, Reason: err.Error()}
}

func jsonPointerFromField(f string) string {
	return string(bytes.ReplaceAll([]byte(f), []byte("."), []byte("/")))
}

// check enforces the rules a JSON Schema cannot express.
func (c *Config) check(file string) error {
	if c.ProgressiveComplex.CurrentLevel < 0 || c.ProgressiveComplex.CurrentLevel > 3 {
		return &Error{File: file, Path: "/progressive_complexity/current_level", Reason: "must be 0, 1, 2 or 3"}
	}
	for _, d := range c.Domains {
		if d.Name == "" {
			return &Error{File: file, Path: "/domains", Reason: "a domain name must not be empty"}
		}
	}
	if c.SeasonModes.Enabled {
		name, _, _ := c.SeasonModes.Active()
		if _, ok := c.SeasonModes.Modes[name]; !ok {
			return &Error{File: file, Path: "/season_modes/current_mode", Reason: fmt.Sprintf("mode %q is not defined in season_modes.modes", name)}
		}
	}
	for _, name := range c.SkillNames() {
		s := c.Skills[name]
		if s.Builtin == "" && len(s.Command) == 0 {
			return &Error{File: file, Path: "/skills/" + escapePointer(name), Reason: "needs either \"builtin\" or \"command\""}
		}
		if _, err := s.TimeoutDuration(); err != nil {
			return &Error{File: file, Path: "/skills/" + escapePointer(name) + "/timeout", Reason: "not a Go duration: " + err.Error()}
		}
	}
	return nil
}

func escapePointer(s string) string {
	s = string(bytes.ReplaceAll([]byte(s), []byte("~"), []byte("~0")))
	return string(bytes.ReplaceAll([]byte(s), []byte("/"), []byte("~1")))
}

// domainError names the domain whose entry failed to decode, so the JSON
// path of the error can be complete.
type domainError struct {
	name string
	err  error
}

func (e *domainError) Error() string { return "domains." + e.name + ": " + e.err.Error() }
func (e *domainError) Unwrap() error { return e.err }

// integralNumbers rewrites whole-number floats such as 2.0 or 1e2 as
// integers, token by token so that key order is kept: JSON Schema counts
// 2.0 as an integer, and a config the schema accepts must also decode.
func integralNumbers(raw []byte) []byte {
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

func isTypeError(err error) bool {
	var te *json.UnmarshalTypeError
	return errors.As(err, &te)
}
