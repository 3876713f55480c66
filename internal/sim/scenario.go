package sim

import (
	"bytes"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path"
	"slices"
	"sort"
	"strings"
	"syscall"

	"github.com/ooda-loop/ooda/internal/config"
)

// Bounds on what a scenario file may ask for: a scenario is input like
// any other file ooda reads, and each simulated cycle is a real cycle
// with real files, so none of it may be unbounded.
const (
	// MaxScenarioBytes bounds a scenario file.
	MaxScenarioBytes = 1 << 20
	// MaxDomains bounds a scenario's domains.
	MaxDomains = 200
	// MaxCycles bounds the cycles one run may simulate.
	MaxCycles = 10000
)

// Kinds are the OODA phases a scenario domain may have.
var Kinds = []string{"observe", "detect", "strategize", "execute"}

// Scenario is a scripted project (docs/sim.md).
type Scenario struct {
	Name    string
	Mission string
	// Domains are in the file's order, which is config.domains' order in
	// the simulated project (the last tie-break of Decide).
	Domains       []Domain
	Goal          *Goal
	HoursPerCycle float64
	InitialHours  float64
	Work          map[string]Work
	Alerts        map[string][]Alert
}

// Domain is one scenario domain.
type Domain struct {
	Name             string
	Weight           float64
	MissionAlignment float64
	Kind             string
}

// OnMission reports the simulated human's view of the domain: it merges
// the domain's pull requests, and its output counts as a mission hit.
func (d Domain) OnMission() bool { return d.MissionAlignment >= 0.5 }

// Goal is the scenario's goal: it advances one step per useful cycle of
// its domain.
type Goal struct {
	ID           string `json:"id"`
	Domain       string `json:"domain"`
	TargetCycles int    `json:"target_cycles"`
}

// Alert is an alert present in a domain's state file during one cycle.
type Alert struct {
	Cycle    int    `json:"cycle"`
	Severity string `json:"severity"`
}

// Work says in which cycles a domain has real work. The zero value is
// "never".
type Work struct {
	always bool
	cycles []int
	from   int
	until  int
	every  int
	kind   string // "", "always", "cycles", "from", "until", "every"
}

// At reports whether the domain has work in cycle c (numbered from 1).
func (w Work) At(c int) bool {
	switch w.kind {
	case "always":
		return w.always
	case "cycles":
		return slices.Contains(w.cycles, c)
	case "from":
		return c >= w.from
	case "until":
		return c < w.until
	case "every":
		return c%w.every == 0
	}
	return false
}

// String is the work rule as the scenario format writes it.
func (w Work) String() string {
	switch w.kind {
	case "always":
		return fmt.Sprint(w.always)
	case "cycles":
		b, _ := json.Marshal(map[string][]int{"cycles": w.cycles})
		return string(b)
	case "from":
		return fmt.Sprintf(`{"from": %d}`, w.from)
	case "until":
		return fmt.Sprintf(`{"until": %d}`, w.until)
	case "every":
		return fmt.Sprintf(`{"every": %d}`, w.every)
	}
	return "false"
}

// ParseError is a scenario that cannot be used: the file and the field
// (a JSON pointer) are named.
type ParseError struct {
	File    string
	Pointer string
	Msg     string
}

func (e *ParseError) Error() string {
	if e.Pointer == "" {
		return e.File + ": " + e.Msg
	}
	return e.File + ": " + e.Pointer + ": " + e.Msg
}

//go:embed scenarios/*.json
var builtin embed.FS

// Builtins lists the built-in scenarios by name, sorted.
func Builtins() []string {
	ents, _ := builtin.ReadDir("scenarios")
	var out []string
	for _, e := range ents {
		out = append(out, strings.TrimSuffix(e.Name(), ".json"))
	}
	sort.Strings(out)
	return out
}

// Builtin returns the built-in scenario name.
func Builtin(name string) (*Scenario, error) {
	if !slices.Contains(Builtins(), name) {
		return nil, fmt.Errorf("no built-in scenario %q (built-in: %s)", name, strings.Join(Builtins(), ", "))
	}
	b, err := builtin.ReadFile(path.Join("scenarios", name+".json"))
	if err != nil {
		return nil, err
	}
	return Parse(b, "built-in scenario "+name)
}

// Load returns a built-in scenario by name, or reads a scenario file: an
// argument naming a built-in wins over a file of that name in the working
// directory only when no such file exists.
func Load(nameOrFile string) (*Scenario, error) {
	if slices.Contains(Builtins(), nameOrFile) {
		if _, err := os.Stat(nameOrFile); err != nil {
			return Builtin(nameOrFile)
		}
	}
	st, err := os.Stat(nameOrFile)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) && !strings.ContainsAny(nameOrFile, "/.") {
			return nil, fmt.Errorf("scenario %q: neither a built-in scenario (%s) nor a file", nameOrFile, strings.Join(Builtins(), ", "))
		}
		return nil, fmt.Errorf("scenario: %w", err)
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("scenario %s: not a regular file", nameOrFile)
	}
	// Opened without blocking: a named pipe swapped in after the check
	// above is refused below instead of waited on.
	f, err := os.OpenFile(nameOrFile, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, fmt.Errorf("scenario: %w", err)
	}
	defer f.Close()
	if st, err := f.Stat(); err != nil || !st.Mode().IsRegular() {
		return nil, fmt.Errorf("scenario %s: not a regular file", nameOrFile)
	}
	b, err := io.ReadAll(io.LimitReader(f, MaxScenarioBytes+1))
	if err != nil {
		return nil, fmt.Errorf("scenario: %w", err)
	}
	if len(b) > MaxScenarioBytes {
		return nil, &ParseError{File: nameOrFile, Msg: fmt.Sprintf("larger than %d bytes", MaxScenarioBytes)}
	}
	return Parse(b, nameOrFile)
}

// Keys each object of a scenario may have.
var (
	scenarioKeys = []string{"name", "mission", "domains", "goal", "hours_per_cycle", "initial_hours", "work", "alerts"}
	domainKeys   = []string{"weight", "mission_alignment", "kind"}
	goalKeys     = []string{"id", "domain", "target_cycles"}
	alertKeys    = []string{"cycle", "severity"}
)

// Parse reads and validates a scenario; file names it in errors.
func Parse(b []byte, file string) (*Scenario, error) {
	sc, err := parseScenario(b)
	if err != nil {
		err.File = file
		return nil, err
	}
	return sc, nil
}

// at is a ParseError at ptr, its file still unknown.
func at(ptr, format string, a ...any) *ParseError {
	return &ParseError{Pointer: ptr, Msg: fmt.Sprintf(format, a...)}
}

// object reads raw, the value at ptr, as an object whose keys are among
// keys: an unknown key is reported at its own pointer, in sorted order.
func object(raw json.RawMessage, ptr string, keys []string) (map[string]json.RawMessage, *ParseError) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil || m == nil {
		return nil, at(ptr, "must be an object")
	}
	for _, k := range slices.Sorted(maps.Keys(m)) {
		if !slices.Contains(keys, k) {
			return nil, at(ptr+"/"+config.Pointer(k)[1:], "unknown key %q: one of %s", k, strings.Join(keys, ", "))
		}
	}
	return m, nil
}

// scalar decodes raw, the value at ptr, into v; null leaves v as it is.
func scalar(raw json.RawMessage, ptr string, v any, want string) *ParseError {
	if raw == nil {
		return nil
	}
	if err := json.Unmarshal(raw, v); err != nil {
		return at(ptr, "%s: must be %s", brief(raw), want)
	}
	return nil
}

// brief is a value as an error message shows it.
func brief(raw json.RawMessage) string {
	s := string(bytes.TrimSpace(raw))
	if len(s) > 40 {
		s = s[:40] + "…"
	}
	return strings.ToValidUTF8(s, "�")
}

func parseScenario(b []byte) (*Scenario, *ParseError) {
	dec := json.NewDecoder(bytes.NewReader(b))
	var doc json.RawMessage
	if err := dec.Decode(&doc); err != nil {
		return nil, at("", "not a scenario: %v", err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, at("", "more than one JSON value")
	}
	top, perr := object(doc, "", scenarioKeys)
	if perr != nil {
		if perr.Pointer == "" {
			perr.Msg = "not a scenario: must be a JSON object"
		}
		return nil, perr
	}
	sc := &Scenario{HoursPerCycle: 4, InitialHours: 24, Work: map[string]Work{}, Alerts: map[string][]Alert{}}
	if perr := scalar(top["name"], "/name", &sc.Name, "a string"); perr != nil {
		return nil, perr
	}
	if sc.Name == "" {
		return nil, at("/name", "missing: every scenario has a name")
	}
	if len(sc.Name) > 64 || strings.ContainsFunc(sc.Name, func(r rune) bool { return r < 0x20 || r == 0x7f }) {
		return nil, at("/name", "must be at most 64 characters, without control characters")
	}
	if perr := scalar(top["mission"], "/mission", &sc.Mission, "a string"); perr != nil {
		return nil, perr
	}
	if perr := scalar(top["hours_per_cycle"], "/hours_per_cycle", &sc.HoursPerCycle, "a number"); perr != nil {
		return nil, perr
	}
	if h := sc.HoursPerCycle; !(h > 0 && h <= 24*365) {
		return nil, at("/hours_per_cycle", "%g: must be above 0 and at most a year of hours", h)
	}
	if perr := scalar(top["initial_hours"], "/initial_hours", &sc.InitialHours, "a number"); perr != nil {
		return nil, perr
	}
	if h := sc.InitialHours; !(h >= 0 && h <= 24*365*10) {
		return nil, at("/initial_hours", "%g: must be between 0 and ten years of hours", h)
	}
	names, err := orderedKeys(top["domains"])
	if err != nil {
		return nil, at("/domains", "%v", err)
	}
	if len(names) == 0 {
		return nil, at("/domains", "missing or empty: a scenario needs at least one domain")
	}
	if len(names) > MaxDomains {
		return nil, at("/domains", "%d domains: at most %d", len(names), MaxDomains)
	}
	var doms map[string]json.RawMessage
	if err := json.Unmarshal(top["domains"], &doms); err != nil {
		return nil, at("/domains", "%v", err)
	}
	seen := map[string]bool{}
	for _, n := range names {
		ptr := config.Pointer("domains", n)
		if seen[n] {
			return nil, at(ptr, "named twice")
		}
		seen[n] = true
		if err := config.ValidDomainName(n); err != nil {
			return nil, at(ptr, "%v", err)
		}
		d, perr := object(doms[n], ptr, domainKeys)
		if perr != nil {
			return nil, perr
		}
		out := Domain{Name: n, Weight: 1, MissionAlignment: 0.5}
		if perr := scalar(d["weight"], ptr+"/weight", &out.Weight, "a number"); perr != nil {
			return nil, perr
		}
		if w := out.Weight; !(w >= 0 && w <= 1000) {
			return nil, at(ptr+"/weight", "%g: must be between 0 and 1000", w)
		}
		if perr := scalar(d["mission_alignment"], ptr+"/mission_alignment", &out.MissionAlignment, "a number"); perr != nil {
			return nil, perr
		}
		if a := out.MissionAlignment; !(a >= 0 && a <= 1) {
			return nil, at(ptr+"/mission_alignment", "%g: must be between 0 and 1", a)
		}
		if perr := scalar(d["kind"], ptr+"/kind", &out.Kind, "a string"); perr != nil {
			return nil, perr
		}
		if out.Kind == "" {
			out.Kind = "observe"
		}
		if !slices.Contains(Kinds, out.Kind) {
			return nil, at(ptr+"/kind", "%q: must be one of %s", out.Kind, strings.Join(Kinds, ", "))
		}
		sc.Domains = append(sc.Domains, out)
	}
	if raw := top["goal"]; raw != nil && string(bytes.TrimSpace(raw)) != "null" {
		gm, perr := object(raw, "/goal", goalKeys)
		if perr != nil {
			return nil, perr
		}
		g := &Goal{}
		if perr := scalar(gm["id"], "/goal/id", &g.ID, "a string"); perr != nil {
			return nil, perr
		}
		if perr := scalar(gm["domain"], "/goal/domain", &g.Domain, "a string"); perr != nil {
			return nil, perr
		}
		if perr := scalar(gm["target_cycles"], "/goal/target_cycles", &g.TargetCycles, "a whole number"); perr != nil {
			return nil, perr
		}
		if g.ID == "" || len(g.ID) > 64 || strings.ContainsFunc(g.ID, func(r rune) bool { return r <= 0x20 || r == 0x7f || r == '"' || r == '\'' || r == '\\' }) {
			return nil, at("/goal/id", "%q: must be 1 to 64 characters without spaces, quotes or control characters", g.ID)
		}
		if !seen[g.Domain] {
			return nil, at("/goal/domain", "%q is not one of the scenario's domains", g.Domain)
		}
		if g.TargetCycles < 1 || g.TargetCycles > MaxCycles {
			return nil, at("/goal/target_cycles", "%d: must be between 1 and %d", g.TargetCycles, MaxCycles)
		}
		sc.Goal = g
	}
	var work, alerts map[string]json.RawMessage
	if perr := scalar(top["work"], "/work", &work, "an object of domain name to work rule"); perr != nil {
		return nil, perr
	}
	for _, n := range slices.Sorted(maps.Keys(work)) {
		ptr := config.Pointer("work", n)
		if !seen[n] {
			return nil, at(ptr, "%q is not one of the scenario's domains", n)
		}
		w, err := parseWork(work[n])
		if err != nil {
			return nil, at(ptr, "%v", err)
		}
		sc.Work[n] = w
	}
	if perr := scalar(top["alerts"], "/alerts", &alerts, "an object of domain name to a list of alerts"); perr != nil {
		return nil, perr
	}
	for _, n := range slices.Sorted(maps.Keys(alerts)) {
		ptr := config.Pointer("alerts", n)
		if !seen[n] {
			return nil, at(ptr, "%q is not one of the scenario's domains", n)
		}
		var list []json.RawMessage
		if perr := scalar(alerts[n], ptr, &list, "a list of {cycle, severity}"); perr != nil {
			return nil, perr
		}
		as := []Alert{}
		for i, raw := range list {
			ap := fmt.Sprintf("%s/%d", ptr, i)
			am, perr := object(raw, ap, alertKeys)
			if perr != nil {
				return nil, perr
			}
			var a Alert
			if perr := scalar(am["cycle"], ap+"/cycle", &a.Cycle, "a whole number"); perr != nil {
				return nil, perr
			}
			if perr := scalar(am["severity"], ap+"/severity", &a.Severity, "a string"); perr != nil {
				return nil, perr
			}
			if a.Cycle < 1 || a.Cycle > MaxCycles {
				return nil, at(ap+"/cycle", "%d: cycles are numbered from 1 to %d", a.Cycle, MaxCycles)
			}
			switch a.Severity {
			case "info", "warning", "critical":
			default:
				return nil, at(ap+"/severity", "%q: must be info, warning or critical", a.Severity)
			}
			as = append(as, a)
		}
		sc.Alerts[n] = as
	}
	return sc, nil
}

// parseWork reads one work rule: true/false, {"cycles": [..]}, {"from":
// n}, {"until": n} or {"every": k}.
func parseWork(v json.RawMessage) (Work, error) {
	t := bytes.TrimSpace(v)
	switch string(t) {
	case "true":
		return Work{kind: "always", always: true}, nil
	case "false", "null":
		return Work{kind: "always"}, nil
	}
	if len(t) == 0 || t[0] != '{' {
		return Work{}, errors.New(`must be true, false, {"cycles": [..]}, {"from": n}, {"until": n} or {"every": k}`)
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(t, &m); err != nil || len(m) != 1 {
		return Work{}, errors.New(`must be an object with exactly one of "cycles", "from", "until", "every"`)
	}
	for k, raw := range m {
		switch k {
		case "cycles":
			var cs []int
			if err := json.Unmarshal(raw, &cs); err != nil {
				return Work{}, errors.New(`"cycles" must be a list of cycle numbers`)
			}
			for _, c := range cs {
				if c < 1 || c > MaxCycles {
					return Work{}, fmt.Errorf(`"cycles": %d: cycles are numbered from 1 to %d`, c, MaxCycles)
				}
			}
			return Work{kind: "cycles", cycles: cs}, nil
		case "from", "until", "every":
			var n int
			if err := json.Unmarshal(raw, &n); err != nil || n < 1 || n > MaxCycles {
				return Work{}, fmt.Errorf("%q must be a whole number from 1 to %d", k, MaxCycles)
			}
			w := Work{kind: k}
			switch k {
			case "from":
				w.from = n
			case "until":
				w.until = n
			default:
				w.every = n
			}
			return w, nil
		}
		return Work{}, fmt.Errorf("unknown key %q: one of \"cycles\", \"from\", \"until\", \"every\"", k)
	}
	return Work{}, nil
}

// orderedKeys lists an object's keys in the order the file gives them.
func orderedKeys(raw json.RawMessage) ([]string, error) {
	if len(bytes.TrimSpace(raw)) == 0 || string(bytes.TrimSpace(raw)) == "null" {
		return nil, nil
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return nil, errors.New("must be an object of domain name to {weight, mission_alignment, kind}")
	}
	var keys []string
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		keys = append(keys, tok.(string))
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			return nil, err
		}
	}
	return keys, nil
}
