package observe

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"syscall"
	"testing"

	"github.com/ooda-loop/ooda/internal/config"
	"github.com/ooda-loop/ooda/internal/state"
)

// writeAt writes content at root/rel, making its directories.
func writeAt(t testing.TB, root, rel, content string) {
	t.Helper()
	p := filepath.Join(root, rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// linkAt makes root/rel a symlink to target.
func linkAt(t testing.TB, root, rel, target string) {
	t.Helper()
	p := filepath.Join(root, rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, p); err != nil {
		t.Fatal(err)
	}
}

// errText is an error as text, "" for none.
func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// lensCases are lens files of every kind Step 1 meets: the common shape,
// every way a file can fail to be one JSON object (or pass as one with
// members of the wrong type, which the lens reader keeps), refused ones
// (too deep, too large, not regular, through a symlink out of the
// project) and missing ones.
func lensCases(t *testing.T, root string) []string {
	t.Helper()
	common := `{"schema_version":"1.0.0","domain":"%s","last_updated":"2026-03-01T01:00:00Z","focus_items":[],"learned_thresholds":[],"discovered_signals":[],"evidence":[{"cycle":2,"alerts":[]}],"deprecated_items":[]}`
	contents := map[string]string{
		"common":      fmt.Sprintf(common, "common"),
		"spaced":      " \n\t{ \"domain\" : \"spaced\" , \"focus_items\" : [ { \"item\" : \"x\" , \"confidence\" : 0.7 } ] }\r\n",
		"empty":       "",
		"blank":       " \n",
		"null":        "null",
		"array":       "[]",
		"string":      `"lens"`,
		"number":      "12",
		"truncated":   `{"domain": "truncated"`,
		"trailing":    `{} x`,
		"two":         `{}{}`,
		"wrongtypes":  `{"focus_items": 3, "evidence": {"a": 1}, "schema_version": 1, "learned_thresholds": [1, "x", null]}`,
		"badutf8":     "{\"domain\": \"\xff\xfe\"}",
		"ctrl":        "{\"domain\": \"a\x01b\"}",
		"escapes":     `{"domain": "\u00e9\n", "k\"ey": 1}`,
		"dupkeys":     `{"domain": "a", "domain": "b"}`,
		"nested":      `{"x": ` + strings.Repeat(`[`, 30) + strings.Repeat(`]`, 30) + `}`,
		"deep":        `{"x": ` + strings.Repeat(`[`, state.MaxJSONDepth+2) + strings.Repeat(`]`, state.MaxJSONDepth+2) + `}`,
		"badnumber":   `{"x": 01}`,
		"badliteral":  `{"x": tru}`,
		"badescape":   `{"x": "\q"}`,
		"commatrail":  `{"x": 1,}`,
		"bom":         "\xef\xbb\xbf{}",
		"hugestring":  `{"x": "` + strings.Repeat("a", 5000) + `"}`,
		"toolarge":    `{"x": "` + strings.Repeat("a", 2<<20) + `"}`,
		"nulmember":   "{\"x\": \"\x00\"}",
		"lonesurrog":  `{"x": "\ud800"}`,
		"unicodekeys": `{"ключ": 1}`,
	}
	var domains []string
	for d, c := range contents {
		writeAt(t, root, filepath.Join("agent", "state", d, "lens.json"), c)
		domains = append(domains, d)
	}
	writeAt(t, root, "elsewhere/lens.json", fmt.Sprintf(common, "x"))
	linkAt(t, root, "agent/state/inproject/lens.json", "../../../elsewhere/lens.json")
	linkAt(t, root, "agent/state/sibling/lens.json", "../common/lens.json")
	linkAt(t, root, "agent/state/linkeddir", "../common")
	linkAt(t, root, "agent/state/outside/lens.json", "../../../../outside-secret.json")
	writeAt(t, filepath.Dir(root), "outside-secret.json", "{}")
	linkAt(t, root, "agent/state/dangling/lens.json", "nowhere.json")
	if err := os.MkdirAll(filepath.Join(root, "agent", "state", "isdir", "lens.json"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(root, "agent", "state", "pipe", "lens.json"), 0o644); err != nil {
		if err := os.MkdirAll(filepath.Join(root, "agent", "state", "pipe"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := syscall.Mkfifo(filepath.Join(root, "agent", "state", "pipe", "lens.json"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.MkdirAll(filepath.Join(root, "agent", "state", "nolens"), 0o755); err != nil {
		t.Fatal(err)
	}
	return append(domains, "inproject", "sibling", "linkeddir", "outside", "dangling", "isdir", "pipe", "nolens", "nodir", "../escape", ".hidden")
}

// TestLensStateIsReadLens asks whether each lens exists and reads, with
// the root held and without, and requires the answer ReadLens gives:
// found, and the same error word for word. The files that are one JSON
// object are answered without decoding; every other is decoded, for its
// error.
func TestLensStateIsReadLens(t *testing.T) {
	root := filepath.Join(t.TempDir(), "project")
	domains := lensCases(t, root)
	s := state.New(root)
	s.MaxRead = 1 << 20
	check := func(how string) {
		for _, d := range domains {
			_, wantFound, wantErr := s.ReadLens(d)
			found, err := s.LensState(d)
			if found != wantFound || errText(err) != errText(wantErr) {
				t.Errorf("%s, lens of %q: LensState = %v, %q; ReadLens = %v, %q", how, d, found, errText(err), wantFound, errText(wantErr))
			}
		}
	}
	check("not held")
	release := s.HoldRoot()
	check("held")
	release()
	for _, d := range []string{"common", "spaced", "wrongtypes", "escapes", "dupkeys", "nested", "sibling", "inproject"} {
		if found, err := s.LensState(d); !found || err != nil {
			t.Errorf("lens of %q: %v, %v; want it found and read", d, found, err)
		}
	}
	for _, d := range []string{"empty", "null", "array", "truncated", "trailing", "two", "deep", "toolarge", "outside", "isdir", "pipe", "bom"} {
		if _, err := s.LensState(d); err == nil {
			t.Errorf("lens of %q read without error; want the error ReadLens gives", d)
		}
	}
}

// manyDomains writes a project of n domains with state files and lenses
// of every kind, and returns its configuration.
func manyDomains(t *testing.T, root string, n int) *config.Config {
	t.Helper()
	cfg := config.Default()
	for i := 0; i < n; i++ {
		name := fmt.Sprintf("d%03d", i)
		d := config.Domain{Name: name, Index: i, Weight: 1, PrimarySkill: "/x", StateFile: "agent/state/" + name + ".json"}
		switch i % 9 {
		case 0:
			writeAt(t, root, d.StateFile, `{"last_run": "2026-03-01T00:00:00Z", "alerts": ["disk"], "metrics": {"a": 1}}`)
		case 1:
			writeAt(t, root, d.StateFile, `{"last_run": 5, "alerts": "x", "run_count": "many"}`)
		case 2:
			writeAt(t, root, d.StateFile, `not json`)
		case 3:
			d.StateFile = "reports/" + name + "/state.json"
			writeAt(t, root, d.StateFile, `{"status": "ok", "alerts": [{"severity": "critical", "message": "fire"}]}`)
		case 4:
			d.Status = "disabled"
		case 5:
			linkAt(t, root, d.StateFile, "../../outside.json")
		}
		switch i % 7 {
		case 0:
			writeAt(t, root, filepath.Join("agent", "state", name, "lens.json"), `{"domain": "`+name+`", "focus_items": []}`)
		case 1:
			writeAt(t, root, filepath.Join("agent", "state", name, "lens.json"), `{"domain": `)
		case 2:
			writeAt(t, root, filepath.Join("agent", "state", name, "lens.json"), `[]`)
		case 3:
			writeAt(t, root, filepath.Join("agent", "state", name, "lens.json"), `{"focus_items": "x"}`)
		}
		cfg.Domains = append(cfg.Domains, d)
	}
	writeAt(t, root, "outside.json", `{"last_run": "2026-02-01T00:00:00Z"}`)
	// Names that differ from a configured one only by case.
	writeAt(t, root, "agent/state/D007.json", `{"last_run": "2026-01-01T00:00:00Z"}`)
	return cfg
}

// observeWith observes cfg's project with GOMAXPROCS set to procs: one
// goroutine reads every domain's files, or several share them.
func observeWith(t *testing.T, procs int, root string, cfg *config.Config) *Observation {
	t.Helper()
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
	snap := &state.Snapshot{}
	snap.State.DomainLastRun = map[string]string{"d010": "2026-03-01T08:00:00Z", "d002": "2026-02-28T00:00:00Z"}
	return Observe(Input{Now: firstNow, Config: cfg, Store: state.New(root), Snap: snap, PhaseOf: func(string) string { return "" }})
}

// observationText is an Observation as text, its errors by their text
// (two reads of a file make two error values).
func observationText(o *Observation) string {
	var b strings.Builder
	for _, d := range o.Domains {
		fmt.Fprintf(&b, "%s %v %v %v %q %+v %v\n", d.Config.Name, d.Hours, d.NeverRun, d.Phase, errText(d.StateErr), d.State, d.Weight)
	}
	fmt.Fprintf(&b, "%q\n%q\n%v\n%v\n", o.Warnings, o.LensInit, o.Skipped, o.AnyCritical)
	return b.String()
}

// TestObserveManyDomainsReadsAsOneGoroutine observes a project of more
// domains than one goroutine reads alone, with state files and lenses of
// every kind, with the reads shared among goroutines and made by one, and
// requires the same observation, warning for warning and in order. It
// also requires each domain's state to be what reading its file alone,
// without the root held, gives.
func TestObserveManyDomainsReadsAsOneGoroutine(t *testing.T) {
	root := t.TempDir()
	cfg := manyDomains(t, root, 150)
	one := observeWith(t, 1, root, cfg)
	many := observeWith(t, 4, root, cfg)
	if a, b := observationText(one), observationText(many); a != b {
		t.Fatalf("one goroutine:\n%s\nseveral:\n%s", a, b)
	}
	s := state.New(root)
	for _, d := range many.Domains {
		ds, err := s.ReadDomainState(d.Config.StateFile)
		if errText(err) != errText(d.StateErr) || !reflect.DeepEqual(ds, d.State) {
			t.Errorf("%s: observed %+v, %v; read alone %+v, %v", d.Config.Name, d.State, d.StateErr, ds, err)
		}
	}
	if len(many.Domains) < 100 || len(many.LensInit) == 0 || !many.AnyCritical || len(many.Warnings) < 50 {
		t.Fatalf("the project does not have the files it was written with: %d domains, %d lenses to create, %d warnings",
			len(many.Domains), len(many.LensInit), len(many.Warnings))
	}
}

// TestDomainStateMissingByListing reads the state files directly under
// agent/state/ of many domains with the root held — after the first few,
// the directory's listing answers for a name it does not hold — and
// requires what reading each alone gives: a file that exists is read
// (through a symlink too), one that does not is missing, and a name that
// differs from a file's only by case is looked up, not taken as missing.
// A directory holding a name that is not ASCII is not answered by its
// listing at all.
func TestDomainStateMissingByListing(t *testing.T) {
	for _, withNonASCII := range []bool{false, true} {
		root := t.TempDir()
		var names []string
		for i := 0; i < 40; i++ {
			names = append(names, fmt.Sprintf("d%d.json", i))
			if i%3 == 0 {
				writeAt(t, root, filepath.Join("agent", "state", fmt.Sprintf("d%d.json", i)), fmt.Sprintf(`{"run_count": %d}`, i))
			}
		}
		writeAt(t, root, "agent/state/Upper.json", `{"run_count": 1}`)
		writeAt(t, root, "target.json", `{"run_count": 2}`)
		linkAt(t, root, "agent/state/linked.json", "../../target.json")
		linkAt(t, root, "agent/state/escape.json", "../../../x.json")
		if withNonASCII {
			writeAt(t, root, "agent/state/é.json", `{}`)
		}
		names = append(names, "Upper.json", "upper.json", "UPPER.JSON", "linked.json", "escape.json", "é.json", "e.json", "missing.json", "sub/x.json")
		s := state.New(root)
		want := map[string]string{}
		for _, n := range names {
			ds, err := s.ReadDomainState(filepath.Join("agent", "state", n))
			want[n] = fmt.Sprintf("%+v %q", ds, errText(err))
		}
		release := s.HoldRoot()
		for _, n := range names {
			ds, err := s.ReadDomainState(filepath.Join("agent", "state", n))
			if got := fmt.Sprintf("%+v %q", ds, errText(err)); got != want[n] {
				t.Errorf("%s (a name that is not ASCII listed: %v), root held:\n %s\nalone:\n %s", n, withNonASCII, got, want[n])
			}
		}
		release()
	}
}
