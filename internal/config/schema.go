package config

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"math/big"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"

	"github.com/ooda-loop/ooda/internal/gitrepo"
)

// schemaJSON is the JSON Schema of config.json. It is embedded rather than
// generated so that `ooda config schema` prints exactly what validation uses,
// descriptions included, and editors can consume the same document.
//
//go:embed schema.json
var schemaJSON []byte

// schemaURL names the embedded schema inside the compiler only. It is never
// fetched and never shown: reasons are built from the error kinds, not from
// the library's messages, which embed schema locations.
const schemaURL = "mem:///ooda/config.schema.json"

// messageKeyword is the non-standard keyword holding a hand-written reason
// for a schema node whose generic failure would read badly (anyOf
// alternatives, patterns). It is the keyword editors such as VS Code show,
// so the same text reaches users there too.
const messageKeyword = "errorMessage"

var (
	schemaOnce     sync.Once
	compiledSchema *jsonschema.Schema
	schemaDocOnce  sync.Once
	schemaDoc      any // the decoded schema, read to find errorMessage texts and known keys
)

// Schema returns the JSON Schema (draft 2020-12) of config.json, formatted
// as embedded. The caller owns the returned slice.
func Schema() []byte { return bytes.Clone(schemaJSON) }

// decodeSchema decodes the embedded schema once per process, for the
// validation and the checks that accompany it (errorMessage texts, the
// keys of a decoded document). A configuration whose verdict is
// remembered needs none of it: its unknown keys are found along the key
// tree generated from the schema (keytree_gen.go).
func decodeSchema() {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(schemaJSON))
	if err != nil {
		panic(fmt.Sprintf("config: embedded schema.json is not JSON: %v", err))
	}
	schemaDoc = doc
}

// compileSchema compiles the embedded schema once per process. The schema is
// part of the binary, so a failure here is a programming error, not a user
// error, and panicking surfaces it in the first test that validates a config.
func compileSchema() {
	schemaDocOnce.Do(decodeSchema)
	doc := schemaDoc
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	if err := c.AddResource(schemaURL, doc); err != nil {
		panic(fmt.Sprintf("config: embedded schema.json: %v", err))
	}
	sch, err := c.Compile(schemaURL)
	if err != nil {
		panic(fmt.Sprintf("config: embedded schema.json does not compile: %v", err))
	}
	compiledSchema = sch
}

// ValidateSchema checks raw against the embedded JSON Schema. On failure it
// returns an *Error naming file, the JSON Pointer and reason of the first
// problem, and every problem in Issues, sorted by path so that the report is
// identical from run to run.
func ValidateSchema(file string, raw []byte) error {
	_, err := validateSchema(file, raw)
	return err
}

// validateSchema is ValidateSchema, also returning the decoded document
// (nil when raw is not JSON) for the checks that warn rather than fail.
func validateSchema(file string, raw []byte) (any, error) {
	schemaOnce.Do(compileSchema)

	// Every pass below walks the nesting, the validator recursively.
	if err := depthCheck(file, raw); err != nil {
		return nil, err
	}
	inst, err := decodeInstance(raw)
	if err != nil {
		return nil, &Error{File: file, Reason: "parse error: " + err.Error()}
	}
	// The validator parses every number into a big.Rat and dereferences the
	// result unchecked, so numbers it cannot parse must be stopped here.
	// A duplicate key is invisible once decoded, so it is found in the text.
	unparsable, huge := numberIssues(inst)
	issues := append(unparsable, duplicateKeyIssues(raw)...)
	issues = append(issues, domainNameIssues(inst)...)
	issues = append(issues, skillNameIssues(inst)...)
	issues = append(issues, branchIssues(inst)...)
	issues = append(issues, domainSkillIssues(inst)...)
	if len(unparsable) > 0 {
		return inst, issuesError(file, append(issues, huge...))
	}
	var schemaIssues []Issue
	if err := compiledSchema.Validate(inst); err != nil {
		var ve *jsonschema.ValidationError
		if !errors.As(err, &ve) {
			return inst, &Error{File: file, Reason: err.Error()}
		}
		collectIssues(ve, inst, &schemaIssues) // always at least one: every node is a leaf or has causes
	}
	// A known key's own bound ("must be <= 1000000") says more than the
	// general one, so the general one is reported only where no other is.
	for _, h := range huge {
		if !slices.ContainsFunc(schemaIssues, func(is Issue) bool { return is.Path == h.Path }) {
			issues = append(issues, h)
		}
	}
	issues = append(issues, schemaIssues...)
	if len(issues) == 0 {
		return inst, nil
	}
	return inst, issuesError(file, issues)
}

// decodeInstance decodes raw keeping numbers exact, as the validator expects.
func decodeInstance(raw []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("trailing data after the top-level value")
	}
	return v, nil
}

// MaxMagnitude bounds every number in config.json, known key or not:
// numbers this large are never meant, and a bound far below float64's
// range keeps every sum and product of configured values finite. Known
// keys have tighter bounds in the schema.
const MaxMagnitude = 1e15

// numberIssues reports, in unparsable, every number that does not fit a
// float64 (the type the config is finally decoded into) or that big.Rat
// cannot represent, and, in huge, every other number whose magnitude
// exceeds MaxMagnitude.
func numberIssues(inst any) (unparsable, huge []Issue) {
	// One path, grown and shrunk as the walk goes: copying it at every
	// level would make the walk quadratic in the nesting depth.
	var loc []string
	var walk func(v any)
	walk = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			for k, e := range v {
				loc = append(loc, k)
				walk(e)
				loc = loc[:len(loc)-1]
			}
		case []any:
			for i, e := range v {
				loc = append(loc, strconv.Itoa(i))
				walk(e)
				loc = loc[:len(loc)-1]
			}
		case json.Number:
			f, ferr := strconv.ParseFloat(string(v), 64)
			// big.Rat's work grows with the exponent, so a number that
			// underflows to 0 (1e-99999999) or is absurdly long is stopped
			// before it can stall validation for minutes.
			ok := ferr == nil && len(v) <= maxNumberLen && !(f == 0 && nonZeroMantissa(string(v)))
			if ok {
				_, ok = new(big.Rat).SetString(string(v))
			}
			switch {
			case !ok:
				unparsable = append(unparsable, Issue{Path: pointer(loc), Reason: "number out of range, got " + shorten(string(v))})
			case math.Abs(f) > MaxMagnitude:
				huge = append(huge, Issue{Path: pointer(loc), Reason: "number out of range (at most 1e15 in magnitude), got " + shorten(string(v))})
			}
		}
	}
	walk(inst)
	return unparsable, huge
}

// domainNameIssues reports every domain whose name is not a plain name
// (ValidDomainName). It is checked here rather than with the schema's
// propertyNames keyword because the validator reports a propertyNames
// failure with an instance location that later validation overwrites.
func domainNameIssues(inst any) []Issue {
	doc, _ := inst.(map[string]any)
	domains, _ := doc["domains"].(map[string]any)
	var issues []Issue
	for name := range domains {
		if err := ValidDomainName(name); err != nil {
			issues = append(issues, Issue{Path: pointer([]string{"domains", name}), Reason: err.Error()})
		}
	}
	return issues
}

// skillNameIssues reports every skill name in the config that is not a
// plain name (ValidSkillName): the keys of skills, every builtin, the
// chain targets of inline contracts, the domains' primary_skill and chain,
// implementation.primary_skill, active_context.refresh_skill and the
// entries of safety.skill_allowlist. A skill name reaches a command line
// ({skill_name} in agent.command), so one like "--output=/tmp/x" must
// never validate. A value of the wrong type is the schema's to report, and
// an empty primary_skill or refresh_skill means none.
func skillNameIssues(inst any) []Issue {
	doc, _ := inst.(map[string]any)
	var issues []Issue
	name := func(v any, optional bool, loc ...string) {
		s, ok := v.(string)
		if !ok || (optional && s == "") {
			return
		}
		if err := ValidSkillName(s); err != nil {
			issues = append(issues, Issue{Path: pointer(loc), Reason: err.Error()})
		}
	}
	list := func(v any, loc ...string) {
		items, _ := v.([]any)
		for i, e := range items {
			name(e, false, append(slices.Clip(loc), strconv.Itoa(i))...)
		}
	}
	obj := func(v any) map[string]any {
		m, _ := v.(map[string]any)
		return m
	}

	skills := obj(doc["skills"])
	for k, v := range skills {
		name(k, false, "skills", k)
		spec := obj(v)
		name(spec["builtin"], true, "skills", k, "builtin")
		triggers, _ := obj(spec["contract"])["chain_triggers"].([]any)
		for i, t := range triggers {
			if tm := obj(t); tm != nil {
				if target, ok := tm["target"]; ok {
					name(target, false, "skills", k, "contract", "chain_triggers", strconv.Itoa(i), "target")
				}
			}
		}
	}
	for d, v := range obj(doc["domains"]) {
		dm := obj(v)
		name(dm["primary_skill"], true, "domains", d, "primary_skill")
		list(dm["chain"], "domains", d, "chain")
	}
	name(obj(doc["implementation"])["primary_skill"], true, "implementation", "primary_skill")
	name(obj(doc["active_context"])["refresh_skill"], true, "active_context", "refresh_skill")
	list(obj(doc["safety"])["skill_allowlist"], "safety", "skill_allowlist")
	return issues
}

// maxNumberLen bounds the text of one JSON number; 100 characters hold
// every float64 in any notation.
const maxNumberLen = 100

// nonZeroMantissa reports whether a JSON number's digits before its
// exponent include a non-zero one.
func nonZeroMantissa(s string) bool {
	if i := strings.IndexAny(s, "eE"); i >= 0 {
		s = s[:i]
	}
	return strings.ContainsAny(s, "123456789")
}

// duplicateKeyIssues reports every key that appears twice in one object,
// at any depth: JSON decoders silently keep the last value, so the value
// ooda would act on is not the one a reader of the file may see first.
// raw has already been decoded once, so it is known to be valid JSON.
func duplicateKeyIssues(raw []byte) []Issue {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var issues []Issue
	// One path, grown and shrunk as the walk goes; a pointer is rendered
	// only for a key that is reported. Copying the path at every level
	// made this walk quadratic in the nesting depth.
	var loc []string
	var walk func() bool
	walk = func() bool {
		t, err := dec.Token()
		if err != nil {
			return false
		}
		d, ok := t.(json.Delim)
		if !ok {
			return true
		}
		switch d {
		case '{':
			seen := map[string]bool{}
			for dec.More() {
				kt, err := dec.Token()
				k, isKey := kt.(string)
				if err != nil || !isKey {
					return false
				}
				if seen[k] {
					reason := fmt.Sprintf("key %q is defined twice in the same object (only one value can apply)", k)
					if len(loc) == 1 && loc[0] == "domains" {
						reason = fmt.Sprintf("domain %q is defined twice", k)
					}
					issues = append(issues, Issue{Path: pointer(append(loc, k)), Reason: reason})
				}
				seen[k] = true
				loc = append(loc, k)
				ok := walk()
				loc = loc[:len(loc)-1]
				if !ok {
					return false
				}
			}
		case '[':
			for i := 0; dec.More(); i++ {
				loc = append(loc, strconv.Itoa(i))
				ok := walk()
				loc = loc[:len(loc)-1]
				if !ok {
					return false
				}
			}
		}
		_, err = dec.Token() // the closing delimiter
		return err == nil
	}
	walk()
	return issues
}

// issuesError sorts and de-duplicates issues and wraps them in an *Error
// whose Path and Reason are those of the first issue.
func issuesError(file string, issues []Issue) *Error {
	slices.SortFunc(issues, func(a, b Issue) int {
		if c := comparePointers(a.Path, b.Path); c != 0 {
			return c
		}
		return strings.Compare(a.Reason, b.Reason)
	})
	issues = slices.Compact(issues)
	return &Error{File: file, Path: issues[0].Path, Reason: issues[0].Reason, Issues: issues}
}

// comparePointers orders JSON Pointers token by token, numerically where
// both tokens are array indexes, so /a/2 sorts before /a/10.
func comparePointers(a, b string) int {
	ta, tb := strings.Split(a, "/"), strings.Split(b, "/")
	for i := 0; i < len(ta) && i < len(tb); i++ {
		if ta[i] == tb[i] {
			continue
		}
		na, ea := strconv.Atoi(ta[i])
		nb, eb := strconv.Atoi(tb[i])
		if ea == nil && eb == nil && na != nb {
			if na < nb {
				return -1
			}
			return 1
		}
		return strings.Compare(ta[i], tb[i])
	}
	return len(ta) - len(tb)
}

// collectIssues flattens the error tree into leaf issues. Wrapper kinds only
// group their causes; an anyOf or oneOf is reported as one issue, because the
// failures of each alternative are noise to someone who chose one of them.
func collectIssues(ve *jsonschema.ValidationError, inst any, out *[]Issue) {
	switch ve.ErrorKind.(type) {
	case *kind.Schema, *kind.Group, *kind.Reference, *kind.AllOf:
		if len(ve.Causes) > 0 {
			for _, c := range ve.Causes {
				collectIssues(c, inst, out)
			}
			return
		}
	}
	*out = append(*out, Issue{Path: pointer(ve.InstanceLocation), Reason: reason(ve, inst)})
}

// reason renders one failure as a short plain-English sentence fragment.
func reason(ve *jsonschema.ValidationError, inst any) string {
	val := lookup(inst, ve.InstanceLocation)
	got := ""
	switch val.(type) {
	case map[string]any, []any:
		// "got an object" adds nothing when the object's content is at fault.
	default:
		got = ", got " + show(val)
	}
	if _, isType := ve.ErrorKind.(*kind.Type); !isType {
		// A type mismatch is clearer in generic words than in the node's
		// hand-written message, which describes the valid values.
		if msg := schemaMessage(ve.SchemaURL); msg != "" {
			return msg + got
		}
	}
	switch k := ve.ErrorKind.(type) {
	case *kind.Type:
		// The library lists types alphabetically; "string or null" reads
		// better than "null or string", so null goes last.
		want := slices.Clone(k.Want)
		if i := slices.Index(want, "null"); i >= 0 {
			want = append(slices.Delete(want, i, i+1), "null")
		}
		return fmt.Sprintf("expected %s, got %s", strings.Join(want, " or "), k.Got)
	case *kind.Enum:
		return "must be " + oneOf(k.Want) + got
	case *kind.Const:
		return "must be " + literal(k.Want) + got
	case *kind.Minimum:
		return "must be >= " + ratString(k.Want) + got
	case *kind.Maximum:
		return "must be <= " + ratString(k.Want) + got
	case *kind.ExclusiveMinimum:
		return "must be > " + ratString(k.Want) + got
	case *kind.ExclusiveMaximum:
		return "must be < " + ratString(k.Want) + got
	case *kind.MultipleOf:
		return "must be a multiple of " + ratString(k.Want) + got
	case *kind.MinItems:
		if k.Want == 1 {
			return "must not be empty"
		}
		return fmt.Sprintf("must have at least %d items, got %d", k.Want, k.Got)
	case *kind.MaxItems:
		return fmt.Sprintf("must have at most %d items, got %d", k.Want, k.Got)
	case *kind.MinLength:
		if k.Want == 1 {
			return "must not be empty"
		}
		return fmt.Sprintf("must be at least %d characters long, got %d", k.Want, k.Got)
	case *kind.MaxLength:
		return fmt.Sprintf("must be at most %d characters long, got %d", k.Want, k.Got)
	case *kind.Pattern:
		return "must match the pattern " + literal(k.Want) + got
	case *kind.MinProperties:
		return fmt.Sprintf("must have at least %d keys, got %d", k.Want, k.Got)
	case *kind.MaxProperties:
		return fmt.Sprintf("must have at most %d keys, got %d", k.Want, k.Got)
	case *kind.Required:
		return "missing required " + plural(len(k.Missing), "key ", "keys ") + quoteList(k.Missing)
	case *kind.DependentRequired:
		return "missing " + quoteList(k.Missing) + ", required when " + literal(k.Prop) + " is set"
	case *kind.AdditionalProperties:
		return "unknown " + plural(len(k.Properties), "key ", "keys ") + quoteList(k.Properties)
	case *kind.PropertyNames:
		return "invalid key " + literal(k.Property)
	case *kind.UniqueItems:
		return fmt.Sprintf("items %d and %d are equal; items must be unique", k.Duplicates[0], k.Duplicates[1])
	case *kind.Format:
		return "must be a valid " + k.Want + got
	case *kind.FalseSchema:
		return "is not allowed here"
	case *kind.Not:
		return "matches a form that is not allowed" + got
	case *kind.OneOf:
		if len(k.Subschemas) > 1 {
			return "matches more than one allowed form" + got
		}
		return alternatives(ve, inst)
	case *kind.AnyOf:
		return alternatives(ve, inst)
	}
	return ve.ErrorKind.LocalizedString(nil)
}

// alternatives describes a failed anyOf/oneOf that has no hand-written
// message by listing what each alternative wanted.
func alternatives(ve *jsonschema.ValidationError, inst any) string {
	var parts []string
	for _, c := range ve.Causes {
		var sub []Issue
		collectIssues(c, inst, &sub)
		for _, is := range sub {
			r := is.Reason
			if is.Path != pointer(ve.InstanceLocation) {
				r = displayPath(is.Path) + ": " + r
			}
			if !slices.Contains(parts, r) {
				parts = append(parts, r)
			}
		}
	}
	if len(parts) == 0 {
		return "does not match any allowed form"
	}
	return "does not match any allowed form (" + strings.Join(parts, "; or ") + ")"
}

// schemaMessage returns the errorMessage of the schema node at loc (an
// absolute schema location whose fragment is a JSON Pointer), if any.
func schemaMessage(loc string) string {
	_, frag, ok := strings.Cut(loc, "#")
	if !ok {
		return ""
	}
	node := schemaDoc
	for _, tok := range strings.Split(frag, "/")[1:] {
		if t, err := url.PathUnescape(tok); err == nil {
			tok = t
		}
		tok = strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
		switch n := node.(type) {
		case map[string]any:
			node = n[tok]
		case []any:
			i, err := strconv.Atoi(tok)
			if err != nil || i < 0 || i >= len(n) {
				return ""
			}
			node = n[i]
		default:
			return ""
		}
	}
	if m, ok := node.(map[string]any); ok {
		if s, ok := m[messageKeyword].(string); ok {
			return s
		}
	}
	return ""
}

// lookup returns the instance value at the unescaped pointer tokens loc.
func lookup(v any, loc []string) any {
	for _, tok := range loc {
		switch n := v.(type) {
		case map[string]any:
			v = n[tok]
		case []any:
			i, err := strconv.Atoi(tok)
			if err != nil || i < 0 || i >= len(n) {
				return nil
			}
			v = n[i]
		default:
			return nil
		}
	}
	return v
}

// pointer renders unescaped tokens as a JSON Pointer ("" is the whole file).
func pointer(loc []string) string {
	var b strings.Builder
	for _, tok := range loc {
		b.WriteByte('/')
		b.WriteString(escapePointer(tok))
	}
	return b.String()
}

// show renders an offending scalar briefly, as JSON.
func show(v any) string {
	switch v := v.(type) {
	case nil:
		return "null"
	case json.Number:
		return shorten(string(v))
	case string:
		return literal(shorten(v))
	default:
		return fmt.Sprint(v)
	}
}

// shorten cuts s to a length that keeps a reason on one line.
func shorten(s string) string {
	const limit = 40
	if utf8.RuneCountInString(s) <= limit {
		return s
	}
	r := []rune(s)
	return string(r[:limit]) + "…"
}

// literal renders a schema or instance value as JSON, without HTML escaping.
func literal(v any) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return fmt.Sprint(v)
	}
	return strings.TrimSuffix(b.String(), "\n")
}

func oneOf(values []any) string {
	if len(values) == 1 {
		return literal(values[0])
	}
	parts := make([]string, len(values))
	for i, v := range values {
		parts[i] = literal(v)
	}
	return "one of " + strings.Join(parts, ", ")
}

func quoteList(names []string) string {
	parts := make([]string, len(names))
	for i, n := range names {
		parts[i] = literal(n)
	}
	return strings.Join(parts, ", ")
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// ratString renders a schema bound as the number a user would write.
func ratString(r *big.Rat) string {
	if r == nil {
		return "?"
	}
	if r.IsInt() {
		return r.Num().String()
	}
	f, _ := r.Float64()
	return strconv.FormatFloat(f, 'g', -1, 64)
}

// branchIssues reports forge.default_branch and every branch_prefix
// (domains, implementation) that git would not take as a branch name: they
// reach git's argv, so one like "--output=/tmp/x" must never validate,
// and one git refuses would only fail later, every cycle.
func branchIssues(inst any) []Issue {
	doc, _ := inst.(map[string]any)
	obj := func(v any) map[string]any {
		m, _ := v.(map[string]any)
		return m
	}
	var issues []Issue
	check := func(v any, prefix bool, loc ...string) {
		s, ok := v.(string)
		if !ok || s == "" {
			return
		}
		name := s
		if prefix {
			// A prefix is completed by the branch's own name.
			name = strings.TrimSuffix(s, "/") + "/x"
		}
		if err := gitrepo.CheckBranchName(name); err != nil {
			issues = append(issues, Issue{Path: pointer(loc), Reason: fmt.Sprintf("%q is not usable as a git branch name: %v", s, err)})
		}
	}
	check(obj(doc["forge"])["default_branch"], false, "forge", "default_branch")
	for d, v := range obj(doc["domains"]) {
		check(obj(v)["branch_prefix"], true, "domains", d, "branch_prefix")
	}
	check(obj(doc["implementation"])["branch_prefix"], true, "implementation", "branch_prefix")
	return issues
}
