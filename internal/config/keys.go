package config

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/ooda-loop/ooda/internal/config/internal/schemaref"
)

// Warning is a problem in the configuration that does not stop it from
// loading: the file, the JSON path (a JSON Pointer) and the reason. Every
// command that loads the configuration shows its warnings; `ooda config
// validate --strict` turns them into errors.
type Warning struct {
	File   string `json:"-"`
	Path   string `json:"path"`
	Reason string `json:"reason"`
}

// String renders the warning as "<file>: <path>: <reason>", the form of an
// error's single problem.
func (w Warning) String() string {
	return fmt.Sprintf("%s: %s: %s", w.File, displayPath(w.Path), w.Reason)
}

// IsDocKey reports whether key is a note for humans, such as the original
// project's "__doc__" and "__auto_merge_doc__": any key that starts and
// ends with two underscores. Such keys are allowed in every object and
// never read.
func IsDocKey(key string) bool {
	return len(key) > 4 && strings.HasPrefix(key, "__") && strings.HasSuffix(key, "__")
}

// unknownKeyIssues reports every key of inst that the schema does not
// define, in each object whose keys the schema lists (a domain, a skill,
// safety, scoring, a rubric dimension...): a misspelt key is otherwise
// silently ignored and its setting silently takes the default ("wieght"
// leaves the weight at 0). Keys at the top level are left alone (the
// original project's files carry sections this version does not define)
// unless one is a near miss of a known key (topLevelKeyReason),
// and so are documentation keys (IsDocKey) and the content of objects
// whose keys are free (domains, skills, env, a contract). The reason
// suggests the nearest known key when one is close.
func unknownKeyIssues(inst any) []Issue {
	schemaDocOnce.Do(decodeSchema)
	root, _ := schemaDoc.(map[string]any)
	var issues []Issue
	var loc []string
	var walk func(node map[string]any, v any)
	walk = func(node map[string]any, v any) {
		node = resolveRef(root, node)
		if node == nil {
			return
		}
		switch v := v.(type) {
		case map[string]any:
			props, _ := node["properties"].(map[string]any)
			addl, _ := node["additionalProperties"].(map[string]any)
			for _, k := range sortedKeys(v) {
				loc = append(loc, k)
				switch sub, known := props[k].(map[string]any); {
				case IsDocKey(k):
				case known:
					walk(sub, v[k])
				case addl != nil:
					walk(addl, v[k])
				case props != nil && len(loc) > 1:
					issues = append(issues, Issue{Path: pointer(loc), Reason: unknownKeyReason(k, slices.Sorted(mapKeys(props)))})
				case props != nil:
					if r := topLevelKeyReason(k, slices.Sorted(mapKeys(props))); r != "" {
						issues = append(issues, Issue{Path: pointer(loc), Reason: r})
					}
				}
				loc = loc[:len(loc)-1]
			}
		case []any:
			items, _ := node["items"].(map[string]any)
			if items == nil {
				return
			}
			for i, e := range v {
				loc = append(loc, strconv.Itoa(i))
				walk(items, e)
				loc = loc[:len(loc)-1]
			}
		}
	}
	walk(root, inst)
	return issues
}

//go:generate go run ./internal/genkeys

// keyNode is one node of the schema's key tree, keyTree (keytree_gen.go,
// generated from schema.json): what unknownKeyIssuesRaw needs of a schema
// object, every "$ref" followed, so that finding the unknown keys of a
// configuration known valid costs no decoding of the 47 KB schema. An
// index is one of keyTree's, or -1 where the schema leads nowhere.
type keyNode struct {
	// props says the node has "properties": an object's other keys are
	// then unknown, unless addl says what they are.
	props bool
	// keys are the names "properties" defines, sorted; next[i] is the
	// node of keys[i], -1 when its schema is not an object.
	keys []string
	next []int16
	// addl is the node of "additionalProperties", items that of "items".
	addl, items int16
}

// unknownKeyIssuesRaw is unknownKeyIssues(decodeInstance(raw)) walking
// raw itself, which must be a configuration found valid before (so JSON,
// and with no key twice in an object: duplicateKeyIssues refuses that),
// along the schema's key tree (keyTree); the issues come in another
// order, which keyWarnings' sort removes. ok is false — and the document
// must be decoded — when a key is not plain ASCII (an escape, or a byte
// decoding could change).
func unknownKeyIssuesRaw(raw []byte) (issues []Issue, ok bool) {
	var loc []string
	ok = true
	var walk func(n int16, b []byte)
	walk = func(n int16, b []byte) {
		if len(b) == 0 || (b[0] != '{' && b[0] != '[') || n < 0 {
			return // a scalar, or a value the schema says nothing of
		}
		node := &keyTree[n]
		switch b[0] {
		case '{':
			if !eachMember(b, 0, func(k string, v []byte) bool {
				loc = append(loc, k)
				i, known := slices.BinarySearch(node.keys, k)
				switch {
				case IsDocKey(k):
				case known && node.next[i] >= 0:
					walk(node.next[i], v)
				case node.addl >= 0:
					walk(node.addl, v)
				case node.props && len(loc) > 1:
					issues = append(issues, Issue{Path: pointer(loc), Reason: unknownKeyReason(k, node.keys)})
				case node.props && !known:
					if r := topLevelKeyReason(k, node.keys); r != "" {
						issues = append(issues, Issue{Path: pointer(loc), Reason: r})
					}
				}
				loc = loc[:len(loc)-1]
				return ok
			}) {
				ok = false
			}
		case '[':
			if node.items < 0 {
				return
			}
			i := 0
			if !eachElement(b, func(v []byte) bool {
				loc = append(loc, strconv.Itoa(i))
				walk(node.items, v)
				loc = loc[:len(loc)-1]
				i++
				return ok
			}) {
				ok = false
			}
		}
	}
	walk(0, raw[skipWS(raw, 0):])
	if !ok {
		return nil, false
	}
	return issues, true
}

// topLevelKeyReason is the warning for an unknown top-level key that is
// close enough to a known one to be a misspelling of it ("mision",
// "saftey"), else "": other top-level keys are sections of the original
// project's files that this version does not define, and are left alone.
//
// Closer than Suggest's misspellings inside a section: one edit, two for a
// key longer than 10 characters, so that a section of the original's
// ("references_v2", three edits from "references") is not taken for one.
func topLevelKeyReason(key string, known []string) string {
	s := Suggest(key, known)
	if s == "" {
		return ""
	}
	norm := func(s string) string { return strings.ReplaceAll(strings.ToLower(s), "-", "_") }
	limit := 1
	if utf8.RuneCountInString(key) > 10 {
		limit = 2
	}
	if editDistance(norm(key), norm(s)) > limit {
		return ""
	}
	return fmt.Sprintf("unknown top-level key %q is ignored: did you mean %q?", shorten(key), s)
}

// unknownKeyReason says that key is ignored and, when a known key is close
// enough to be what was meant, which one.
func unknownKeyReason(key string, known []string) string {
	if s := Suggest(key, known); s != "" {
		return fmt.Sprintf("unknown key %q is ignored: did you mean %q?", shorten(key), s)
	}
	return fmt.Sprintf("unknown key %q is ignored (not a key of this object; `ooda config schema` lists the keys)", shorten(key))
}

// resolveRef follows node's "$ref" (only local "#/$defs/NAME" references
// occur in the embedded schema) to the schema node it names.
func resolveRef(root, node map[string]any) map[string]any { return schemaref.ResolveRef(root, node) }

func mapKeys(m map[string]any) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

func sortedKeys(m map[string]any) []string { return slices.Sorted(mapKeys(m)) }

// Suggest returns the candidate nearest to key when it is close enough to
// be a misspelling of it, else "". Distance is counted in edits (insert,
// delete, substitute, or swap two neighbours), case and "-" for "_"
// ignored; a key of up to 4 characters may be 1 edit away, up to 10
// characters 2, longer ones 3. A tie goes to the candidate first in order.
func Suggest(key string, candidates []string) string {
	norm := func(s string) string { return strings.ReplaceAll(strings.ToLower(s), "-", "_") }
	k := norm(key)
	limit := 3
	switch n := utf8.RuneCountInString(k); {
	case n <= 4:
		limit = 1
	case n <= 10:
		limit = 2
	}
	best, bestDist := "", limit+1
	kn := utf8.RuneCountInString(k)
	for _, c := range candidates {
		nc := norm(c)
		// The length difference is a lower bound of the distance; it
		// also keeps a huge key from costing a quadratic comparison.
		if diff := kn - utf8.RuneCountInString(nc); diff > limit || -diff > limit {
			continue
		}
		if d := editDistance(k, nc); d < bestDist {
			best, bestDist = c, d
		}
	}
	return best
}

// editDistance is the optimal-string-alignment distance between a and b:
// the fewest single-character insertions, deletions, substitutions and
// transpositions of neighbours ("wieght" is one edit from "weight").
func editDistance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	// Three rows of the dynamic-programming table suffice.
	prev2 := make([]int, len(rb)+1)
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && ra[i-1] == rb[j-2] && ra[i-2] == rb[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(rb)]
}

// domainSkillIssues reports every domain that can run — status active,
// degraded or missing, and not "enabled": false — but names no skill: its
// primary_skill is missing or empty. Such a domain could win a cycle and
// run nothing (a skill named "/"). A domain that is "available" (known, not
// configured yet) or disabled may leave primary_skill out: it never runs,
// and the original project's files list such domains. A primary_skill of
// the wrong type is the schema's to report.
func domainSkillIssues(inst any) []Issue {
	doc, _ := inst.(map[string]any)
	domains, _ := doc["domains"].(map[string]any)
	schemaDocOnce.Do(decodeSchema)
	root, _ := schemaDoc.(map[string]any)
	known, _ := resolveRef(root, map[string]any{"$ref": "#/$defs/domain"})["properties"].(map[string]any)
	var issues []Issue
	for _, name := range sortedKeys(domains) {
		d, ok := domains[name].(map[string]any)
		if !ok {
			continue
		}
		if st, _ := d["status"].(string); st == "disabled" || st == "available" {
			continue
		}
		if en, ok := d["enabled"].(bool); ok && !en {
			continue
		}
		ps, has := d["primary_skill"]
		switch {
		case !has:
			reason := fmt.Sprintf(`domain %q has no "primary_skill": name the skill to run when it wins, e.g. "primary_skill": "/scan-health", or set "status": "disabled"`, name)
			for _, k := range sortedKeys(d) {
				if _, isKnown := known[k]; !isKnown && !IsDocKey(k) && Suggest(k, []string{"primary_skill"}) != "" {
					reason = fmt.Sprintf(`domain %q has no "primary_skill": %q is not a key, did you mean "primary_skill"?`, name, k)
					break
				}
			}
			issues = append(issues, Issue{Path: pointer([]string{"domains", name}), Reason: reason})
		case ps == "":
			issues = append(issues, Issue{Path: pointer([]string{"domains", name, "primary_skill"}),
				Reason: fmt.Sprintf(`domain %q names no skill: name the skill to run when it wins, e.g. "/scan-health", or set "status": "disabled"`, name)})
		}
	}
	return issues
}

// MaxShownWarnings bounds the configuration warnings a command prints:
// a file with hundreds of misspelt keys must not bury every cycle's
// output. `ooda config validate` lists them all.
const MaxShownWarnings = 10

// ShownWarnings are the warnings a command prints, at most
// MaxShownWarnings of them and then one line counting the others.
func (c *Config) ShownWarnings() []string {
	out := make([]string, 0, min(len(c.Warnings), MaxShownWarnings+1))
	for i, w := range c.Warnings {
		if i == MaxShownWarnings {
			out = append(out, fmt.Sprintf("%d more configuration warning(s); `ooda config validate` lists them all", len(c.Warnings)-i))
			break
		}
		out = append(out, w.String())
	}
	return out
}
