package config

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"testing"

	"github.com/ooda-loop/ooda/internal/config/internal/keytree"
)

// TestKeyTreeIsGenerated regenerates the key tree from the embedded
// schema and requires the very bytes of keytree_gen.go: a schema edited
// without `go generate` fails here.
func TestKeyTreeIsGenerated(t *testing.T) {
	want, err := keytree.Source(schemaJSON)
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile("keytree_gen.go")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatal("keytree_gen.go is not what schema.json generates: run `go generate ./internal/config/`")
	}
	// A schema with one more key must generate another tree: the
	// comparison above can fail.
	edited := bytes.Replace(schemaJSON, []byte(`"halt_file"`), []byte(`"halt_file_x": {"type": "string"}, "halt_file"`), 1)
	if other, err := keytree.Source(edited); err != nil || bytes.Equal(other, want) {
		t.Fatalf("an edited schema generates the same tree (err %v)", err)
	}
}

// unknownKeyIssuesRawSchema is unknownKeyIssuesRaw as it was before the key
// tree: walking the decoded schema itself. It is the oracle the tree walk
// is compared with.
func unknownKeyIssuesRawSchema(raw []byte) (issues []Issue, ok bool) {
	schemaDocOnce.Do(decodeSchema)
	root, _ := schemaDoc.(map[string]any)
	var loc []string
	ok = true
	var walk func(node map[string]any, b []byte)
	walk = func(node map[string]any, b []byte) {
		if len(b) == 0 || (b[0] != '{' && b[0] != '[') {
			return
		}
		node = resolveRef(root, node)
		if node == nil {
			return
		}
		switch b[0] {
		case '{':
			props, _ := node["properties"].(map[string]any)
			addl, _ := node["additionalProperties"].(map[string]any)
			if !eachMember(b, 0, func(k string, v []byte) bool {
				loc = append(loc, k)
				switch sub, known := props[k].(map[string]any); {
				case IsDocKey(k):
				case known:
					walk(sub, v)
				case addl != nil:
					walk(addl, v)
				case props != nil && len(loc) > 1:
					issues = append(issues, Issue{Path: pointer(loc), Reason: unknownKeyReason(k, slices.Sorted(mapKeys(props)))})
				case props != nil:
					if r := topLevelKeyReason(k, slices.Sorted(mapKeys(props))); r != "" {
						issues = append(issues, Issue{Path: pointer(loc), Reason: r})
					}
				}
				loc = loc[:len(loc)-1]
				return ok
			}) {
				ok = false
			}
		case '[':
			items, _ := node["items"].(map[string]any)
			if items == nil {
				return
			}
			i := 0
			if !eachElement(b, func(v []byte) bool {
				loc = append(loc, strconv.Itoa(i))
				walk(items, v)
				loc = loc[:len(loc)-1]
				i++
				return ok
			}) {
				ok = false
			}
		}
	}
	walk(root, raw[skipWS(raw, 0):])
	if !ok {
		return nil, false
	}
	return issues, true
}

// configCorpus is every configuration file at hand: the examples, the
// original project's configurations, this package's test data, and the
// unknown-key corpus.
func configCorpus(t testing.TB) [][]byte {
	t.Helper()
	var files []string
	for _, pattern := range []string{"../../examples/*/config.json", "../compat/testdata/config.json", "../compat/testdata/*/config.json",
		"../compat/testdata/*/*/config.json", "testdata/*.json", compatDir + "/config*.json", compatDir + "/fixtures/*/config*.json"} {
		m, err := filepath.Glob(pattern)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, m...)
	}
	if len(files) < 15 {
		t.Fatalf("only %d configuration files found", len(files))
	}
	var out [][]byte
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, b)
	}
	if tt, ok := t.(*testing.T); ok {
		out = append(out, unknownKeyCorpus(tt)...)
	}
	return out
}

// keyMutations are raw with members inserted in one object at a time,
// at every depth: an unknown key, a misspelt known one, a documentation
// key and an unknown key holding an object with unknown keys of its own.
func keyMutations(raw []byte) [][]byte {
	var out [][]byte
	inString := false
	for i := 0; i < len(raw); i++ {
		switch c := raw[i]; {
		case inString && c == '\\':
			i++
		case c == '"':
			inString = !inString
		case !inString && c == '{':
			// The object's first key, misspelt by a swap of two letters.
			first := ""
			if j := skipWS(raw, i+1); j < len(raw) && raw[j] == '"' {
				if end, ok := valueEnd(raw, j); ok {
					if k, ok := fastString(raw[j:end]); ok && len(k) > 3 {
						first = k[:1] + k[2:3] + k[1:2] + k[3:]
					}
				}
			}
			for _, m := range []string{`"wieght": 1`, `"zz_unknown": {"a": [1, {"b": 2}]}`, `"__note__": {"x": 1}`, strconv.Quote(first) + `: {"q": 1}`, `"status": {"nested": 1}`, `"caf\u00e9": {"wieght": 1}`} {
				if m == `"": {"q": 1}` {
					continue
				}
				sep := ","
				if j := skipWS(raw, i+1); j < len(raw) && raw[j] == '}' {
					sep = ""
				}
				b := append(append(append([]byte(nil), raw[:i+1]...), m+sep...), raw[i+1:]...)
				out = append(out, b)
			}
		}
	}
	return out
}

// TestKeyTreeWalkIsSchemaWalk walks every configuration at hand, and every
// mutation of it with keys inserted at every depth, along the generated
// key tree and along the decoded schema, and requires the very same
// issues, in the same order, and the same giving up.
func TestKeyTreeWalkIsSchemaWalk(t *testing.T) {
	docs, walked, issues := 0, 0, 0
	for i, raw := range configCorpus(t) {
		for j, b := range append([][]byte{raw}, keyMutations(raw)...) {
			want, wok := unknownKeyIssuesRawSchema(b)
			got, gok := unknownKeyIssuesRaw(b)
			if wok != gok || !reflect.DeepEqual(got, want) {
				t.Fatalf("config %d, mutation %d (%s):\n tree:   %v %v\n schema: %v %v", i, j, b, gok, got, wok, want)
			}
			docs++
			if gok {
				walked++
			}
			issues += len(got)
		}
	}
	if walked < docs/2 || walked == docs || issues < docs/2 {
		t.Fatalf("%d documents, %d walked, %d issues: the corpus does not exercise the walk", docs, walked, issues)
	}
	t.Logf("%d documents, %d walked, %d issues", docs, walked, issues)
}

// TestUnknownKeysNeedNoSchema finds the unknown keys of a configuration
// known valid and requires that the schema was not decoded for it.
func TestUnknownKeysNeedNoSchema(t *testing.T) {
	// Run in a process of its own: another test may have decoded the
	// schema in this one.
	if os.Getenv("OODA_KEYTREE_CHILD") == "" {
		runChild(t, "TestUnknownKeysNeedNoSchema", "OODA_KEYTREE_CHILD=1")
		return
	}
	issues, ok := unknownKeyIssuesRaw([]byte(`{"safety": {"wieght": 1}, "domains": {"a": {"wieght": 1}}}`))
	if !ok || len(issues) != 2 {
		t.Fatalf("issues %v, ok %v", issues, ok)
	}
	if schemaDoc != nil {
		t.Fatal("the schema was decoded to find unknown keys")
	}
}

// runChild runs the test named test alone in a new process of this test
// binary, with env added, and fails when it fails.
func runChild(t *testing.T, test string, env ...string) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^"+test+"$", "-test.count=1")
	cmd.Env = append(os.Environ(), env...)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s in a process of its own: %v\n%s", test, err, out)
	}
}
