package main

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// Every ooda process, each `ooda cycle` above all, initialises every
// package it links before main runs, whatever the command needs. These
// tests keep that work from growing back where it was cut: a regular
// expression compiled or a template parsed for a variable, the
// validator's drafts and its localisation library.

// TestNoPatternCompiledAtStart reads the sources of every package the
// binary is built from (ooda's own and the validator's copy) for a
// package-level variable or an init function that compiles a regular
// expression or parses a template when the process starts. Inside a
// function literal (sync.OnceValue) it runs on first use, which is fine.
func TestNoPatternCompiledAtStart(t *testing.T) {
	root := filepath.Join("..", "..")
	var found []string
	for _, dir := range []string{"cmd", "internal", filepath.Join("third_party", "jsonschema")} {
		err := filepath.WalkDir(filepath.Join(root, dir), func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() && d.Name() == "testdata" {
				return filepath.SkipDir
			}
			if d.IsDir() || !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
				return nil
			}
			rel, _ := filepath.Rel(root, p)
			found = append(found, compiledAtStart(t, p, filepath.ToSlash(rel))...)
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range found {
		t.Errorf("%s is compiled when every ooda process starts; compile it on first use (sync.OnceValue) or match by hand", f)
	}
}

// compiledAtStart returns "file: name" for each package-level variable of
// the file (or "file: init") whose initialisation compiles a pattern.
func compiledAtStart(t *testing.T, path, rel string) []string {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.SkipObjectResolution)
	if err != nil {
		t.Fatal(err)
	}
	// The names the file gives the packages whose constructors compile.
	compilers := map[string]map[string]bool{}
	for _, imp := range f.Imports {
		ip, _ := strconv.Unquote(imp.Path.Value)
		var funcs map[string]bool
		switch ip {
		case "regexp":
			funcs = map[string]bool{"MustCompile": true, "Compile": true, "MustCompilePOSIX": true, "CompilePOSIX": true}
		case "text/template", "html/template":
			funcs = map[string]bool{"Must": true, "New": true, "ParseFS": true, "ParseFiles": true, "ParseGlob": true}
		default:
			continue
		}
		name := ip[strings.LastIndex(ip, "/")+1:]
		if imp.Name != nil {
			name = imp.Name.Name
		}
		compilers[name] = funcs
	}
	if len(compilers) == 0 {
		return nil
	}
	compiles := func(n ast.Node) bool {
		hit := false
		ast.Inspect(n, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.FuncLit:
				return false // runs when called, not at start
			case *ast.CallExpr:
				if sel, ok := n.Fun.(*ast.SelectorExpr); ok {
					if x, ok := sel.X.(*ast.Ident); ok && compilers[x.Name][sel.Sel.Name] {
						hit = true
					}
				}
			}
			return !hit
		})
		return hit
	}
	var out []string
	for _, decl := range f.Decls {
		switch decl := decl.(type) {
		case *ast.GenDecl:
			if decl.Tok != token.VAR {
				continue
			}
			for _, spec := range decl.Specs {
				vs := spec.(*ast.ValueSpec)
				for i, v := range vs.Values {
					if compiles(v) {
						name := "_"
						if i < len(vs.Names) {
							name = vs.Names[i].Name
						}
						out = append(out, rel+": "+name)
					}
				}
			}
		case *ast.FuncDecl:
			if decl.Recv == nil && decl.Name.Name == "init" && decl.Body != nil && compiles(decl.Body) {
				out = append(out, rel+": init")
			}
		}
	}
	return out
}

// initBudget is the most each package may allocate before main, in
// allocations as GODEBUG=inittrace=1 counts them. Building the command
// tree and validating a configuration are what these packages are for;
// nothing of either needs to exist before a command asks for it.
var initBudget = map[string]int{
	"github.com/santhosh-tekuri/jsonschema/v6":  16, // the drafts' meta-schema descriptions and format tables are made by the first Compiler
	"github.com/ooda-loop/ooda/internal/cli":    24,
	"github.com/ooda-loop/ooda/internal/stack":  8,
	"github.com/ooda-loop/ooda/internal/notify": 8,
	"github.com/ooda-loop/ooda/internal/forge":  8,
}

// initLine is one line of GODEBUG=inittrace=1.
var initLine = regexp.MustCompile(`^init (\S+) @\S+ ms, \S+ ms clock, (\d+) bytes, (\d+) allocs$`)

func TestStartupAllocationBudget(t *testing.T) {
	cmd := exec.Command(oodaBinary(t), "--version")
	cmd.Env = append(os.Environ(), "GODEBUG=inittrace=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("ooda --version: %v\n%s", err, out)
	}
	seen := map[string]bool{}
	for _, line := range strings.Split(string(out), "\n") {
		m := initLine.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		budget, ok := initBudget[m[1]]
		if !ok {
			continue
		}
		seen[m[1]] = true
		if allocs, _ := strconv.Atoi(m[3]); allocs > budget {
			t.Errorf("%s allocates %s times (%s bytes) before main, more than its %d", m[1], m[3], m[2], budget)
		}
	}
	if len(seen) == 0 {
		// A package without package-level state has no line at all, but
		// the command tree's has some.
		t.Fatalf("no inittrace line for any of the budgeted packages; is GODEBUG=inittrace=1 still printed?\n%s", out)
	}
}

// TestBinaryLinksNoTextPackages: the validator's copy and the config
// package print their messages without golang.org/x/text, whose language
// tables, plural rules and catalog were initialised in every process
// (third_party/README.md).
func TestBinaryLinksNoTextPackages(t *testing.T) {
	for _, pkg := range linkedPackages(t) {
		if strings.HasPrefix(pkg, "golang.org/x/text/") {
			t.Errorf("ooda links %s", pkg)
		}
	}
}

// TestBinaryLinksNoTestingOrGenerator: the testing package (which the
// config package once imported for testing.Testing) and the go/parser,
// go/format family (which config's key-tree generator needs) are not
// linked into ooda: each package linked is initialised, and partly paged
// in, by every process.
func TestBinaryLinksNoTestingOrGenerator(t *testing.T) {
	for _, pkg := range linkedPackages(t) {
		if pkg == "testing" || strings.HasPrefix(pkg, "go/") || strings.HasSuffix(pkg, "/internal/keytree") {
			t.Errorf("ooda links %s", pkg)
		}
	}
}

// linkedPackages lists the import paths of every package ooda is built
// from, as `go list -deps` does.
func linkedPackages(t *testing.T) []string {
	t.Helper()
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("the go command is needed to list ooda's dependencies: %v", err)
	}
	out, err := exec.Command(goTool, "list", "-deps", ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	return strings.Fields(string(out))
}
