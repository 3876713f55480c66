package decide

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
)

// forbiddenImports reach outside the process; Decide and Orient take every
// fact as a value, so none of these belongs in them.
var forbiddenImports = map[string]bool{"os": true, "os/exec": true, "net/http": true, "io/ioutil": true}

// clockCalls read the wall clock; "now" must arrive in the input instead,
// or a replayed decision could differ from the recorded one.
var clockCalls = map[string]bool{"Now": true, "Since": true, "Until": true}

// impurities lists every forbidden import and clock call in one file.
func impurities(fset *token.FileSet, f *ast.File) []string {
	var out []string
	timeNames := map[string]bool{}
	for _, imp := range f.Imports {
		path, _ := strconv.Unquote(imp.Path.Value)
		if forbiddenImports[path] {
			out = append(out, fset.Position(imp.Pos()).String()+": imports "+path)
		}
		if path == "time" {
			name := "time"
			if imp.Name != nil {
				name = imp.Name.Name
			}
			timeNames[name] = true
		}
	}
	ast.Inspect(f, func(n ast.Node) bool {
		sel, ok := n.(*ast.SelectorExpr)
		if !ok {
			return true
		}
		if x, ok := sel.X.(*ast.Ident); ok && timeNames[x.Name] && clockCalls[sel.Sel.Name] {
			out = append(out, fset.Position(sel.Pos()).String()+": uses time."+sel.Sel.Name)
		}
		return true
	})
	return out
}

func TestDecideIsPure(t *testing.T) {
	for _, dir := range []string{".", "../orient"} {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			files, err := filepath.Glob(filepath.Join(dir, "*.go"))
			if err != nil {
				t.Fatal(err)
			}
			fset := token.NewFileSet()
			checked := 0
			for _, path := range files {
				if strings.HasSuffix(path, "_test.go") {
					continue
				}
				src, err := os.ReadFile(path)
				if err != nil {
					t.Fatal(err)
				}
				f, err := parser.ParseFile(fset, path, src, parser.SkipObjectResolution)
				if err != nil {
					t.Fatal(err)
				}
				checked++
				for _, p := range impurities(fset, f) {
					t.Error(p)
				}
			}
			if checked == 0 {
				t.Fatalf("no source files in %s: the check would pass vacuously", dir)
			}
		})
	}
}

// The detector itself must catch what it is meant to catch, including an
// aliased time import and a method value that is never called.
func TestImpuritiesDetector(t *testing.T) {
	src := `package p
import (
	"os"
	clock "time"
	"net/http"
)
var f = clock.Since
func g() { _ = clock.Now(); _ = os.Args; _ = http.Get }
`
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "p.go", src, 0)
	if err != nil {
		t.Fatal(err)
	}
	got := strings.Join(impurities(fset, f), "\n")
	for _, want := range []string{"imports os", "imports net/http", "uses time.Since", "uses time.Now"} {
		if !strings.Contains(got, want) {
			t.Errorf("detector missed %q in:\n%s", want, got)
		}
	}
	clean := `package p
import "time"
func h(now time.Time) time.Duration { return now.Sub(now) }
`
	f, err = parser.ParseFile(fset, "q.go", clean, 0)
	if err != nil {
		t.Fatal(err)
	}
	if got := impurities(fset, f); len(got) != 0 {
		t.Errorf("false positives: %v", got)
	}
}

// Decide reads its input and never writes to it: the engine reuses the
// same maps and slices for reporting after the decision.
func TestDecideDoesNotMutateInput(t *testing.T) {
	for name, build := range map[string]func() Input{
		"mixed": mixedInput, "implementation": implementationInput, "gated": gatedInput, "idle": idleInput,
	} {
		t.Run(name, func(t *testing.T) {
			in, before := build(), build()
			Decide(in)
			if !reflect.DeepEqual(in, before) {
				t.Fatal("Decide modified its input")
			}
		})
	}
}
