package jsonschema

import (
	"errors"
	"go/ast"
	"go/parser"
	"go/token"
	"math/big"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6/kind"
)

func rat(s string) *big.Rat {
	r, ok := new(big.Rat).SetString(s)
	if !ok {
		panic(s)
	}
	return r
}

// TestMessagesAsTheEnglishPrinter holds every error kind's message to what
// the release printed with golang.org/x/text's English printer (each want
// below is its output), numbers of four digits and more included: this
// copy prints them without that library (third_party/README.md).
func TestMessagesAsTheEnglishPrinter(t *testing.T) {
	for _, c := range []struct {
		kind ErrorKind
		want string
	}{
		{&kind.InvalidJsonValue{Value: 1234}, "invalid jsonType int"},
		{&kind.Schema{Location: "http://x/s.json#/a'b"}, "jsonschema validation failed with 'http://x/s.json#/a\\'b'"},
		{&kind.Group{}, "validation failed"},
		{&kind.Not{}, "'not' failed"},
		{&kind.AllOf{}, "'allOf' failed"},
		{&kind.AnyOf{}, "'anyOf' failed"},
		{&kind.OneOf{}, "'oneOf' failed, none matched"},
		{&kind.OneOf{Subschemas: []int{1000, 2000}}, "'oneOf' failed, subschemas 1,000, 2,000 matched"},
		{&kind.FalseSchema{}, "false schema"},
		{&kind.RefCycle{URL: "http://x/\"q\"", KeywordLocation1: "/a", KeywordLocation2: "/b"}, "both /a and /b resolve to \"http://x/\\\"q\\\"\" causing reference cycle"},
		{&kind.Type{Got: "string", Want: []string{"integer", "null"}}, "got string, want integer or null"},
		{&kind.Enum{Want: []any{"a", 1234567.0, nil}}, "value must be one of 'a', 1.234567e+06, <nil>"},
		{&kind.Enum{Want: []any{[]any{1}}}, "'enum' failed"},
		{&kind.Const{Want: 1234.5}, "value must be 1234.5"},
		{&kind.Const{Want: map[string]any{}}, "'const' failed"},
		{&kind.Format{Got: "x", Want: "uuid", Err: LocalizableError("must have %d elements", 1005)}, "'x' is not valid uuid: must have 1,005 elements"},
		{&kind.Reference{Keyword: "$ref", URL: "u"}, "validation failed"},
		{&kind.MinProperties{Got: 1, Want: 1001}, "minProperties: got 1, want 1,001"},
		{&kind.MaxProperties{Got: 12345, Want: 0}, "maxProperties: got 12,345, want 0"},
		{&kind.MinItems{Got: 3, Want: 1500}, "minItems: got 3, want 1,500"},
		{&kind.MaxItems{Got: 2000000, Want: 1}, "maxItems: got 2,000,000, want 1"},
		{&kind.AdditionalItems{Count: 1000}, "last 1,000 additionalItem(s) not allowed"},
		{&kind.Required{Missing: []string{"a"}}, "missing property 'a'"},
		{&kind.Required{Missing: []string{"a", "b'c"}}, "missing properties 'a', 'b\\'c'"},
		{&kind.Dependency{Prop: "p", Missing: []string{"a", "b"}}, "properties 'a', 'b' required, if 'p' exists"},
		{&kind.DependentRequired{Prop: "p", Missing: []string{"a"}}, "properties 'a' required, if 'p' exists"},
		{&kind.AdditionalProperties{Properties: []string{"x", "y\n"}}, "additional properties 'x', 'y\\n' not allowed"},
		{&kind.PropertyNames{Property: "\u2028"}, "invalid propertyName '\\u2028'"},
		{&kind.UniqueItems{Duplicates: [2]int{999, 1000}}, "items at 999 and 1,000 are equal"},
		{&kind.Contains{}, "no items match contains schema"},
		{&kind.MinContains{Want: 1200}, "min 1,200 items required to match contains schema, but none matched"},
		{&kind.MinContains{Got: []int{1, 1000}, Want: 1200}, "min 1,200 items required to match contains schema, but matched 2 items at 1 1000"},
		{&kind.MaxContains{Got: []int{1, 1000, 2}, Want: 1}, "max 1 items required to match contains schema, but matched 3 items at 1 1000 2"},
		{&kind.MinLength{Got: 0, Want: 2000}, "minLength: got 0, want 2,000"},
		{&kind.MaxLength{Got: 4096, Want: 1024}, "maxLength: got 4,096, want 1,024"},
		{&kind.Pattern{Got: "abc", Want: "^x$"}, "'abc' does not match pattern '^x$'"},
		{&kind.ContentEncoding{Want: "base64", Err: LocalizableError("invalid character %q", 'é')}, "value is not 'base64' encoded: invalid character 'é'"},
		{&kind.ContentMediaType{Want: "application/json", Err: errors.New("unexpected end of JSON input")}, "value is not of mediatype 'application/json': unexpected end of JSON input"},
		{&kind.ContentSchema{}, "'contentSchema' failed"},
		{&kind.Minimum{Got: rat("999"), Want: rat("1000")}, "minimum: got 999, want 1,000"},
		{&kind.Maximum{Got: rat("1234567.5"), Want: rat("-1/3")}, "maximum: got 1.2345675×10⁰⁶, want -0.3333333333333333"},
		{&kind.ExclusiveMinimum{Got: rat("0"), Want: rat("0.00001")}, "exclusiveMinimum: got 0, want 1×10⁻⁰⁵"},
		{&kind.ExclusiveMaximum{Got: rat("2e300"), Want: rat("1e300")}, "exclusiveMaximum: got 2×10³⁰⁰, want 1×10³⁰⁰"},
		{&kind.MultipleOf{Got: rat("1000000"), Want: rat("0.001")}, "multipleOf: got 1×10⁰⁶, want 0.001"},
	} {
		if got := c.kind.LocalizedString(nil); got != c.want {
			t.Errorf("%T: %q, want %q", c.kind, got, c.want)
		}
	}
}

// TestMessagesUsePlainVerbs: the English printer is reproduced for the
// directives the messages use (internal/english); a message brought in by
// an update that uses another (a width, a precision, %e) must be checked
// against the release's output first.
func TestMessagesUsePlainVerbs(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	more, _ := filepath.Glob(filepath.Join("kind", "*.go"))
	directive := regexp.MustCompile(`%[^a-zA-Z%]*[a-zA-Z%]`)
	plain := map[string]bool{"%d": true, "%v": true, "%s": true, "%q": true, "%T": true, "%%": true}
	checked := 0
	for _, file := range append(files, more...) {
		f, err := parser.ParseFile(token.NewFileSet(), file, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok || len(call.Args) == 0 {
				return true
			}
			name := ""
			switch fun := call.Fun.(type) {
			case *ast.Ident:
				name = fun.Name
			case *ast.SelectorExpr:
				if x, ok := fun.X.(*ast.Ident); ok && x.Name == "english" {
					name = "english." + fun.Sel.Name
				}
			}
			if name != "sprintf" && name != "english.Sprintf" && name != "LocalizableError" {
				return true
			}
			lit, ok := call.Args[0].(*ast.BasicLit)
			if !ok || lit.Kind != token.STRING {
				return true // a wrapper passing its own format on
			}
			format, _ := strconv.Unquote(lit.Value)
			checked++
			for _, d := range directive.FindAllString(format, -1) {
				if !plain[d] {
					t.Errorf("%s: %s(%q) uses %s", file, name, format, d)
				}
			}
			return true
		})
	}
	if checked < 50 {
		t.Errorf("only %d message formats found; the test no longer finds the messages", checked)
	}
}
