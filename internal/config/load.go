package config

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
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
	// Warnings are the problems found alongside that do not stop a
	// configuration from loading (unknown keys), so that a report of the
	// errors can show them too.
	Warnings []Warning
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

// NewError wraps issues (at least one) found in file in an *Error, sorted
// by path and without duplicates; its Path and Reason are the first issue's.
func NewError(file string, issues []Issue) *Error { return issuesError(file, issues) }

// IsConfigError reports whether err is (or wraps) a configuration error.
func IsConfigError(err error) bool {
	var ce *Error
	return errors.As(err, &ce)
}

// Load reads, validates and defaults the config at path, for the project
// whose root is the config file's directory. Use LoadProject when the
// project root is known and may differ (--config with --project).
func Load(path string) (*Config, error) {
	return LoadProject(path, configDir(path))
}

// MaxConfigBytes caps config.json itself. A real configuration is a few
// tens of KiB; validation is linear but not cheap (a 16 MiB document of
// nested objects took seconds and gigabytes), so the cap is far below
// safety.max_read_mib.
const MaxConfigBytes = 1 << 20

// LoadProject reads, validates and defaults the config at path for the
// project at root: every path the config names (state files, the HALT
// file, the active context, contract outputs) must resolve inside root.
// config.json itself may live anywhere, but it must be a regular file of
// at most MaxConfigBytes: a named pipe or /dev/zero must not hang
// ooda or exhaust its memory before the configuration is even known.
func LoadProject(path, root string) (*Config, error) { return loadProject(path, root, true) }

// LoadProjectFresh is LoadProject validating against the schema whatever
// verdict is remembered (see verdict.go): `ooda config validate` checks
// the configuration itself, not a memory of it.
func LoadProjectFresh(path, root string) (*Config, error) { return loadProject(path, root, false) }

func loadProject(path, root string, remembered bool) (*Config, error) {
	raw, err := readRegular(path, 0, MaxConfigBytes)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, &Error{File: path, Reason: "config.json not found (run `ooda init` to create it)", NotFound: true}
		}
		return nil, &Error{File: path, Reason: err.Error()}
	}
	return parseProject(path, raw, root, remembered)
}

// Parse validates and defaults raw config bytes; file names the source in
// errors, and its directory is taken as the project root.
func Parse(file string, raw []byte) (*Config, error) {
	return ParseProject(file, raw, configDir(file))
}

// ParseProject validates and defaults raw config bytes for the project at
// root; file names the source in errors. Bytes this binary found valid
// before skip the schema (see verdict.go); everything else is checked.
func ParseProject(file string, raw []byte, root string) (*Config, error) {
	return parseProject(file, raw, root, true)
}

// parseProject is ParseProject; remembered says whether a remembered
// verdict may stand in for the schema validation.
func parseProject(file string, raw []byte, root string, remembered bool) (*Config, error) {
	// Before anything else parses raw: every later pass walks the nesting.
	if err := depthCheck(file, raw); err != nil {
		return nil, err
	}
	known := remembered && knownValid(raw)
	if known && len(raw) >= concurrentLoadBytes {
		if c, ok, err := parseKnownConcurrently(file, raw, root); ok {
			return c, err
		}
	}
	var warnings []Warning
	walked := false
	if known {
		// Found valid by this binary before (verdict.go): its syntax and
		// its keys were checked then, so it is not decoded again only to
		// find its unknown keys.
		if issues, ok := unknownKeyIssuesRaw(raw); ok {
			warnings, walked = issueWarnings(file, issues), true
		}
	}
	if !walked {
		parsed, err := syntaxCheck(file, raw)
		if err != nil {
			return nil, err
		}
		inst, err := validateRemembered(file, raw, known, parsed)
		warnings = keyWarnings(file, inst)
		if err != nil {
			return nil, withWarnings(err, warnings)
		}
	}
	c, err := decodeConfig(integralNumbers(raw))
	if err != nil {
		return nil, withWarnings(decodeError(file, err), warnings)
	}
	c.applyDomainDefaults()
	if err := c.check(file, root); err != nil {
		return nil, withWarnings(err, warnings)
	}
	c.Warnings = warnings
	return c, nil
}

// decodeError is the configuration error for decodeConfig's err.
func decodeError(file string, err error) error {
	var de *domainError
	if errors.As(err, &de) && !isTypeError(err) {
		return &Error{File: file, Path: "/domains/" + escapePointer(de.name), Reason: de.err.Error()}
	}
	return typeError(file, err)
}

// decodeConfig is json.Unmarshal(b, Default()) for a document b known to
// be valid JSON (syntaxCheck or a remembered verdict said so). The common
// shape is decoded by hand (decodeConfigFast). Otherwise the domains
// object, most of a large configuration, is decoded by the one-pass
// decoder alone (unmarshalDomainsFast) and the rest by encoding/json
// with an empty object in its place, which spares encoding/json's two
// scans of the domains; whenever the one pass cannot take the domains,
// or the document has a key encoding/json could also match to them,
// encoding/json decodes all of it.
func decodeConfig(b []byte) (*Config, error) {
	if c, ok := decodeConfigFast(b); ok {
		return c, nil
	}
	return decodeConfigSplit(b)
}

// decodeConfigSplit is decodeConfig without the hand-written decoder of
// the whole document: the domains decoded apart when they can be.
func decodeConfigSplit(b []byte) (*Config, error) {
	c := Default()
	if start, end, ok := domainsSpan(b); ok {
		if ds, ok := unmarshalDomainsFast(b[start:end]); ok {
			rest := make([]byte, 0, len(b)-(end-start)+2)
			rest = append(append(append(rest, b[:start]...), "{}"...), b[end:]...)
			if err := json.Unmarshal(rest, c); err != nil {
				return nil, err
			}
			c.Domains = ds
			return c, nil
		}
	}
	if err := json.Unmarshal(b, c); err != nil {
		return nil, err
	}
	return c, nil
}

// domainsSpan returns where the value of the top-level "domains" key of
// the valid document b starts and ends; false when b is not an object,
// has no such key or has it twice, or has a key that is not plain ASCII
// or that encoding/json would match to the same field ("Domains").
func domainsSpan(b []byte) (start, end int, ok bool) {
	i := skipWS(b, 0)
	if i >= len(b) || b[i] != '{' {
		return 0, 0, false
	}
	found := 0
	plain := eachMemberAt(b, i, func(key string, at, past int) bool {
		if equalFoldASCII("domains", key) {
			if key != "domains" || found > 0 {
				return false
			}
			start, end, found = at, past, 1
		}
		return true
	})
	return start, end, plain && found == 1
}

// validateRemembered is validateSchema, spared when known says raw is
// remembered valid (knownValid) and a remembered verdict may stand in
// (the decoded document is still returned, for the warnings); a
// configuration it finds valid is remembered. parsed, when not nil, is
// raw as decodeInstance decodes it (syntaxCheck's decoding).
func validateRemembered(file string, raw []byte, known bool, parsed any) (any, error) {
	if known {
		if parsed != nil {
			return parsed, nil
		}
		if inst, err := decodeInstance(raw); err == nil {
			return inst, nil
		}
	}
	inst, err := validateSchema(file, raw)
	if err == nil {
		rememberValid(raw)
	}
	return inst, err
}

// keyWarnings turns the unknown keys of the decoded document inst into
// warnings about file, sorted by path.
func keyWarnings(file string, inst any) []Warning {
	if inst == nil {
		return nil
	}
	return issueWarnings(file, unknownKeyIssues(inst))
}

// issueWarnings turns unknown-key issues into warnings about file,
// sorted by path.
func issueWarnings(file string, issues []Issue) []Warning {
	slices.SortFunc(issues, func(a, b Issue) int { return comparePointers(a.Path, b.Path) })
	var ws []Warning
	for _, is := range issues {
		ws = append(ws, Warning{File: file, Path: is.Path, Reason: is.Reason})
	}
	return ws
}

// withWarnings attaches warnings to err when it is an *Error.
func withWarnings(err error, warnings []Warning) error {
	var ce *Error
	if len(warnings) > 0 && errors.As(err, &ce) {
		ce.Warnings = warnings
	}
	return err
}

// configDir is the directory of the config file, absolute when it can be.
func configDir(path string) string {
	if abs, err := filepath.Abs(path); err == nil {
		return filepath.Dir(abs)
	}
	return filepath.Dir(path)
}

// syntaxCheck reports a JSON syntax error with its line and column. It
// returns the decoded document when it is exactly what decodeInstance
// would return — nothing but whitespace follows it — and nil otherwise
// (decodeInstance then decides).
func syntaxCheck(file string, raw []byte) (any, error) {
	var v any
	dec := json.NewDecoder(bytes.NewReader(raw))
	// Numbers are checked, with their JSON path, by ValidateSchema.
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil {
		var se *json.SyntaxError
		if errors.As(err, &se) {
			line, col := lineCol(raw, se.Offset)
			return nil, &Error{File: file, Reason: fmt.Sprintf("parse error at line %d, column %d: %v", line, col, err)}
		}
		if errors.Is(err, io.ErrUnexpectedEOF) {
			line, col := lineCol(raw, int64(len(raw))+1)
			return nil, &Error{File: file, Reason: fmt.Sprintf("parse error at line %d, column %d: unexpected end of file (truncated JSON?)", line, col)}
		}
		return nil, &Error{File: file, Reason: "parse error: " + err.Error()}
	}
	if _, ok := v.(map[string]any); !ok {
		return nil, &Error{File: file, Reason: "the top level must be a JSON object"}
	}
	if dec.More() {
		return nil, &Error{File: file, Reason: "parse error: trailing data after the top-level object"}
	}
	if off := dec.InputOffset(); off < 0 || off > int64(len(raw)) || skipWS(raw, int(off)) != len(raw) {
		return nil, nil
	}
	return v, nil
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

// check enforces the rules a JSON Schema cannot express, reporting every
// problem it finds; root is the project root the configured paths must stay in.
func (c *Config) check(file, root string) error { return c.checkWith(file, root, nil) }

// checkWith is check, the path checks using pre, when not nil, as the
// listing of the directory it is the listing of (see listing.of).
func (c *Config) checkWith(file, root string, pre *listing) error {
	var issues []Issue
	add := func(reason string, tokens ...string) {
		issues = append(issues, Issue{Path: pointer(tokens), Reason: reason})
	}
	if c.ProgressiveComplex.CurrentLevel < 0 || c.ProgressiveComplex.CurrentLevel > 3 {
		add("must be 0, 1, 2 or 3", "progressive_complexity", "current_level")
	}
	for _, d := range c.Domains {
		if d.Name == "" {
			add("a domain name must not be empty", "domains")
			continue
		}
		if err := ValidDomainName(d.Name); err != nil {
			add(err.Error(), "domains", d.Name)
		}
	}
	if c.SeasonModes.Enabled {
		name, _, _ := c.SeasonModes.Active()
		if _, ok := c.SeasonModes.Modes[name]; !ok {
			add(fmt.Sprintf("mode %q is not defined in season_modes.modes", name), "season_modes", "current_mode")
		}
	}
	// The schema's pattern admits durations that overflow time.Duration,
	// and ones that round down to zero ("0.1ns"), which every consumer
	// reads as "no limit of its own": a limit that is written must be one.
	checkDuration := func(value string, tokens ...string) {
		if value == "" {
			return
		}
		d, err := time.ParseDuration(value)
		switch {
		case err != nil:
			add("not a Go duration: "+err.Error(), tokens...)
		case d == 0 && strings.ContainsAny(value, "123456789"):
			add(fmt.Sprintf("%q is less than one nanosecond and would mean no limit of its own; write \"0\" for the default", value), tokens...)
		}
	}
	for _, name := range c.SkillNames() {
		s := c.Skills[name]
		if s.Builtin == "" && len(s.Command) == 0 {
			add(`needs either "builtin" or "command"`, "skills", name)
		}
		checkDuration(s.Timeout, "skills", name, "timeout")
		if s.Timeout == "" && underflows(s.TimeoutMinutes, time.Minute) {
			add(fmt.Sprintf("%g minutes is less than one nanosecond and would mean no limit of its own; write 0 or leave it out for the default", s.TimeoutMinutes), "skills", name, "timeout_minutes")
		}
	}
	checkDuration(c.Agent.Timeout, "agent", "timeout")
	checkDuration(c.Judge.Timeout, "judge", "timeout")
	checkDuration(c.Forge.Timeout, "forge", "timeout")
	if underflows(c.Safety.MinCycleIntervalMin, time.Minute) {
		add(fmt.Sprintf("%g minutes is less than one nanosecond; write 0 for no minimum interval", c.Safety.MinCycleIntervalMin), "safety", "min_cycle_interval_minutes")
	}
	issues = append(issues, c.pathIssuesWith(file, root, pre)...)
	if len(issues) > 0 {
		return issuesError(file, issues)
	}
	return nil
}

// underflows reports whether v units is positive but less than one
// nanosecond, the resolution of time.Duration: converted, it would be 0.
func underflows(v float64, unit time.Duration) bool {
	return v > 0 && v*float64(unit) < 1
}

// pathIssues checks every path the config names that ooda reads, writes or
// hands to a skill: each must resolve inside root, symlinks followed, and
// stay clear of what is not the skill's or the HALT file's to have (.git,
// agent/state/evolve/, the config file itself; reserved.go). file is the
// config file.
func (c *Config) pathIssues(file, root string) []Issue { return c.pathIssuesWith(file, root, nil) }

// pathIssuesWith is pathIssues with pre, when not nil, a listing taken
// ahead of the checks (lookups.pre).
func (c *Config) pathIssuesWith(file, root string, pre *listing) []Issue {
	var issues []Issue
	fsys := newLookupsFor(len(c.Domains))
	fsys.pre = pre
	configReal := fsys.realPath(file)
	// The resolved state files (by domain) and active context, so that a
	// HALT file which is also another configured file is caught: `ooda
	// resume` would delete that file, and while it exists every cycle
	// halts. A slice, not a map: a thousand domains are looked up once.
	stateReals := make([]string, len(c.Domains))
	contextReal := ""
	check := func(p string, u pathUse, tokens ...string) string {
		r, err := fsys.resolveIn(root, p)
		if err == nil {
			if reason := r.reservedReason(p, u, configReal); reason != "" {
				err = errors.New(reason)
			}
		}
		if err != nil {
			issues = append(issues, Issue{Path: pointer(tokens), Reason: err.Error()})
			return ""
		}
		return r.real
	}
	for i, d := range c.Domains {
		if ValidDomainName(d.Name) != nil {
			continue // reported by name; its default state file means nothing
		}
		stateReals[i] = check(d.StateFile, useState, "domains", d.Name, "state_file")
	}
	if p := c.ActiveContext.Path; p != nil && *p != "" {
		contextReal = check(*p, useContext, "active_context", "path")
	}
	for _, name := range c.SkillNames() {
		for i, f := range contractOutputs(c.Skills[name].Contract) {
			check(f, useOutput, "skills", name, "contract", "output", "files", strconv.Itoa(i))
		}
	}
	if real := check(c.Safety.HaltFile, useHalt, "safety", "halt_file"); real != "" {
		// The field named is the last one resolving there: the active
		// context, else the last such domain.
		var other []string
		if contextReal == real {
			other = []string{"active_context", "path"}
		} else {
			for i := len(stateReals) - 1; i >= 0; i-- {
				if stateReals[i] == real {
					other = []string{"domains", c.Domains[i].Name, "state_file"}
					break
				}
			}
		}
		if other != nil {
			issues = append(issues, Issue{Path: pointer([]string{"safety", "halt_file"}),
				Reason: fmt.Sprintf("%q is also %s: the HALT file must be a file of its own (`ooda resume` deletes it, and while it exists no cycle runs)", c.Safety.HaltFile, pointer(other))})
		}
	}
	return issues
}

// contractOutputs returns the output.files of an inline skill contract.
// A contract of the wrong shape yields nothing here: the contract loader
// reports it.
func contractOutputs(raw json.RawMessage) []string {
	var ct struct {
		Output struct {
			Files []string `json:"files"`
		} `json:"output"`
	}
	if len(raw) == 0 || json.Unmarshal(raw, &ct) != nil {
		return nil
	}
	return ct.Output.Files
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
// integers, in place so that everything else keeps its bytes: JSON Schema
// counts 2.0 as an integer, and a config the schema accepts must also
// decode. raw is valid JSON (ParseProject checked it); raw itself is
// returned when no number changes.
func integralNumbers(raw []byte) []byte {
	var out []byte
	last := 0
	for i := 0; i < len(raw); {
		switch c := raw[i]; {
		case c == '"':
			for i++; i < len(raw) && raw[i] != '"'; i++ {
				if raw[i] == '\\' {
					i++
				}
			}
			i++
		case c == '-' || ('0' <= c && c <= '9'):
			j := i
			for j < len(raw) && strings.IndexByte("0123456789+-.eE", raw[j]) >= 0 {
				j++
			}
			if num := raw[i:j]; bytes.ContainsAny(num, ".eE") {
				if f, err := strconv.ParseFloat(string(num), 64); err == nil && f == float64(int64(f)) && f < 1e15 && f > -1e15 {
					out = append(out, raw[last:i]...)
					out = strconv.AppendInt(out, int64(f), 10)
					last = j
				}
			}
			i = j
		default:
			i++
		}
	}
	if out == nil {
		return raw
	}
	return append(out, raw[last:]...)
}

func isTypeError(err error) bool {
	var te *json.UnmarshalTypeError
	return errors.As(err, &te)
}
