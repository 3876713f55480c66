package contract

import (
	"cmp"
	"fmt"
	"strconv"
	"strings"
	"unicode"
)

// Condition is a parsed chain-trigger condition (SPEC-NOTES §3):
//
//	cond    := and ("OR" and)*
//	and     := cmp ("AND" cmp)*
//	cmp     := operand OP operand
//	OP      := >= <= == != > <
//	operand := number | 'string' | true | false | field
//
// There are no parentheses: AND binds tighter than OR. Keywords are
// case-sensitive, as in the original contracts.
type Condition struct {
	src string
	or  [][]comparison
}

type operand struct {
	kind  byte // 'n' number, 's' string, 'b' bool, 'f' field
	num   float64
	str   string
	boolv bool
}

type comparison struct {
	left, right operand
	op          string
}

// String returns the condition's source text.
func (c *Condition) String() string { return c.src }

// Fields lists the field names the condition reads, in order of appearance.
func (c *Condition) Fields() []string {
	var out []string
	seen := map[string]bool{}
	for _, and := range c.or {
		for _, cmp := range and {
			for _, o := range []operand{cmp.left, cmp.right} {
				if o.kind == 'f' && !seen[o.str] {
					seen[o.str] = true
					out = append(out, o.str)
				}
			}
		}
	}
	return out
}

// ParseCondition parses a condition; the error names the offending token.
func ParseCondition(src string) (*Condition, error) {
	toks, err := tokenize(src)
	if err != nil {
		return nil, err
	}
	if len(toks) == 0 {
		return nil, fmt.Errorf("condition %q: empty", src)
	}
	c := &Condition{src: src}
	var and []comparison
	i := 0
	for {
		if i+3 > len(toks) {
			return nil, fmt.Errorf("condition %q: incomplete comparison at %q", src, strings.Join(toks[i:], " "))
		}
		l, err := parseOperand(toks[i])
		if err != nil {
			return nil, fmt.Errorf("condition %q: %w", src, err)
		}
		op := toks[i+1]
		if !isOp(op) {
			return nil, fmt.Errorf("condition %q: %q is not a comparison operator (>= <= == != > <)", src, op)
		}
		r, err := parseOperand(toks[i+2])
		if err != nil {
			return nil, fmt.Errorf("condition %q: %w", src, err)
		}
		and = append(and, comparison{left: l, op: op, right: r})
		i += 3
		if i == len(toks) {
			c.or = append(c.or, and)
			return c, nil
		}
		switch toks[i] {
		case "AND":
		case "OR":
			c.or = append(c.or, and)
			and = nil
		default:
			return nil, fmt.Errorf("condition %q: expected AND or OR, got %q", src, toks[i])
		}
		i++
		if i == len(toks) {
			return nil, fmt.Errorf("condition %q: ends with %s", src, toks[i-1])
		}
	}
}

func isOp(s string) bool {
	switch s {
	case ">=", "<=", "==", "!=", ">", "<":
		return true
	}
	return false
}

func tokenize(src string) ([]string, error) {
	var toks []string
	rs := []rune(src)
	for i := 0; i < len(rs); {
		r := rs[i]
		switch {
		case unicode.IsSpace(r):
			i++
		case r == '\'' || r == '"':
			j := i + 1
			for j < len(rs) && rs[j] != r {
				j++
			}
			if j == len(rs) {
				return nil, fmt.Errorf("condition %q: unterminated string", src)
			}
			toks = append(toks, "'"+string(rs[i+1:j])+"'")
			i = j + 1
		case strings.ContainsRune("<>=!", r):
			// A whole run of operator characters is one token, so that a
			// typo such as "=>" is reported as written.
			j := i + 1
			for j < len(rs) && strings.ContainsRune("<>=!", rs[j]) {
				j++
			}
			toks = append(toks, string(rs[i:j]))
			i = j
		case r == '(' || r == ')':
			return nil, fmt.Errorf("condition %q: parentheses are not supported", src)
		default:
			j := i
			for j < len(rs) && !unicode.IsSpace(rs[j]) && !strings.ContainsRune("<>=!'\"()", rs[j]) {
				j++
			}
			toks = append(toks, string(rs[i:j]))
			i = j
		}
	}
	return toks, nil
}

func parseOperand(t string) (operand, error) {
	switch {
	case strings.HasPrefix(t, "'"):
		return operand{kind: 's', str: strings.Trim(t, "'")}, nil
	case t == "true" || t == "false":
		return operand{kind: 'b', boolv: t == "true"}, nil
	case isOp(t) || t == "AND" || t == "OR":
		return operand{}, fmt.Errorf("expected a value or a field, got %q", t)
	}
	if f, err := strconv.ParseFloat(t, 64); err == nil {
		return operand{kind: 'n', num: f}, nil
	}
	for _, r := range t {
		if !(unicode.IsLetter(r) || unicode.IsDigit(r) || r == '_' || r == '.' || r == '-') {
			return operand{}, fmt.Errorf("%q is not a field name", t)
		}
	}
	return operand{kind: 'f', str: t}, nil
}

// Lookup resolves a field to its value: a float64, string, bool or nil.
// found is false when the field exists nowhere.
type Lookup func(field string) (value any, found bool)

// Eval evaluates the condition. A comparison that reads a field found
// nowhere is false, and the field is returned in undecidable so the caller
// can say so: a missing variable is never guessed.
func (c *Condition) Eval(look Lookup) (result bool, undecidable []string) {
	for _, and := range c.or {
		all := true
		for _, cmp := range and {
			ok, missing := cmp.eval(look)
			undecidable = append(undecidable, missing...)
			if !ok {
				all = false
				break
			}
		}
		if all {
			return true, undecidable
		}
	}
	return false, undecidable
}

func (cmp comparison) eval(look Lookup) (bool, []string) {
	var missing []string
	value := func(o operand) (any, bool) {
		switch o.kind {
		case 'n':
			return o.num, true
		case 's':
			return o.str, true
		case 'b':
			return o.boolv, true
		}
		v, ok := look(o.str)
		if !ok {
			missing = append(missing, o.str)
		}
		return v, ok
	}
	l, lok := value(cmp.left)
	r, rok := value(cmp.right)
	if !lok || !rok {
		return false, missing
	}
	return compare(l, cmp.op, r), nil
}

func compare(l any, op string, r any) bool {
	switch lv := l.(type) {
	case float64:
		rv, ok := toNumber(r)
		if !ok {
			return op == "!="
		}
		return ordered(lv, op, rv)
	case string:
		if rn, ok := r.(float64); ok {
			if ln, err := strconv.ParseFloat(lv, 64); err == nil {
				return compare(ln, op, rn)
			}
			return op == "!="
		}
		rv, ok := r.(string)
		if !ok {
			return op == "!="
		}
		return ordered(lv, op, rv)
	case bool:
		rv, ok := r.(bool)
		switch op {
		case "==":
			return ok && lv == rv
		case "!=":
			return !ok || lv != rv
		}
		return false
	case nil:
		switch op {
		case "==":
			return r == nil
		case "!=":
			return r != nil
		}
		return false
	}
	return false
}

func toNumber(v any) (float64, bool) {
	switch x := v.(type) {
	case float64:
		return x, true
	case string:
		f, err := strconv.ParseFloat(x, 64)
		return f, err == nil
	}
	return 0, false
}

// ordered applies a comparison operator to two values of one ordered kind.
func ordered[T cmp.Ordered](l T, op string, r T) bool {
	switch op {
	case ">=":
		return l >= r
	case "<=":
		return l <= r
	case "==":
		return l == r
	case "!=":
		return l != r
	case ">":
		return l > r
	case "<":
		return l < r
	}
	return false
}
