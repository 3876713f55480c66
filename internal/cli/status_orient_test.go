package cli

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// orientDemo is a project after the demo's six real cycles (and a
// seventh): reflections, a lens that learned, memos.
func orientDemo(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "demo")
	var out, errb bytes.Buffer
	if code := Main([]string{"demo", "--example", "quickstart", "--dir", dir}, strings.NewReader(""), &out, &errb); code != 0 {
		t.Fatalf("demo: exit %d\n%s\n%s", code, out.String(), errb.String())
	}
	if code, stdout, stderr := run(t, dir, "cycle", "--now", "2026-01-06T09:00:00Z"); code != 0 {
		t.Fatalf("cycle: exit %d\n%s\n%s", code, stdout, stderr)
	}
	return dir
}

// After real cycles the view shows what the engine recorded, reads
// without writing, and its --json document carries the same.
func TestStatusOrientAfterRealCycles(t *testing.T) {
	dir := orientDemo(t)
	before := statusTree(t, dir)
	code, stdout, stderr := run(t, dir, "status", "--orient")
	if code != 0 || stderr != "" {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, want := range []string{
		"Orient health after 7 cycles (last 2026-01-06T09:00:00Z)\n",
		"\nReflections: 7 kept: ",
		"  #6  miss  backlog /plan-backlog → futile  lesson ",
		"      lesson:   When backlog yields nothing, lower its priority until its state changes.\n",
		"\nLens: 3 of 3 active domains have a lens\n",
		"    #5 added p95_ms variability — → 0.30  p95_ms coefficient of variation",
		"\nSkill gaps: 0 open, 0 resolved; learning_loop_break: 0 open, 0 resolved\n  none yet\n",
		"\nChains: 0 of the last 7 decisions ran a chain\n",
	} {
		if !strings.Contains(stdout, want) {
			t.Errorf("stdout lacks %q:\n%s", want, stdout)
		}
	}
	if strings.Contains(stdout, "\x1b") {
		t.Errorf("colour on a pipe:\n%q", stdout)
	}
	if after := statusTree(t, dir); after != before {
		t.Errorf("status --orient changed the project")
	}

	code, jout, jerr := run(t, dir, "status", "--orient", "--json")
	if code != 0 || jerr != "" {
		t.Fatalf("--json: exit %d: %s", code, jerr)
	}
	var doc map[string]any
	if err := json.Unmarshal([]byte(jout), &doc); err != nil {
		t.Fatalf("--json: %v\n%s", err, jout)
	}
	for _, k := range []string{"cycle_count", "last_cycle", "episodes", "principles", "lens", "interventions", "gaps", "reflections", "lessons", "chain", "corrupt"} {
		if _, ok := doc[k]; !ok {
			t.Errorf("document lacks %q: %s", k, jout)
		}
	}
	refl := doc["reflections"].(map[string]any)
	recent := refl["recent"].([]any)
	if doc["cycle_count"] != 7.0 || refl["count"] != 7.0 || len(recent) != 3 || recent[1].(map[string]any)["verdict"] != "miss" {
		t.Errorf("reflections: %v", refl)
	}
}

// Width comes from COLUMNS on a pipe too, so a script can ask for 80
// columns; without it nothing is cut.
func TestStatusOrientWidth(t *testing.T) {
	dir := orientDemo(t)
	t.Setenv("COLUMNS", "80")
	_, narrow, _ := run(t, dir, "status", "--orient")
	for i, l := range strings.Split(strings.TrimSuffix(narrow, "\n"), "\n") {
		if n := len([]rune(l)); n > 80 {
			t.Errorf("line %d is %d columns: %q", i+1, n, l)
		}
	}
	t.Setenv("COLUMNS", "")
	_, wide, _ := run(t, dir, "status", "--orient")
	if !strings.Contains(wide, "critique: Chose backlog (score 24.26) and got futile: the decision did not pay off.\n") || narrow == wide {
		t.Errorf("without COLUMNS a line was cut:\n%s", wide)
	}
}

// A corrupt file is named on stderr in the dashboard's words, once; the
// view still renders (exit 0) and the --json document lists it.
func TestStatusOrientNamesCorruptFiles(t *testing.T) {
	dir := orientDemo(t)
	refl := filepath.Join(dir, "agent/state/evolve/reflections.json")
	lens := filepath.Join(dir, "agent/state/service_health/lens.json")
	for _, p := range []string{refl, lens} {
		if err := os.WriteFile(p, []byte(`{"reflections": [`), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	before := statusTree(t, dir)
	code, stdout, stderr := run(t, dir, "status", "--orient")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	want := "[WARN] corrupt state file: " + lens + "\n[WARN] corrupt state file: " + refl + "\n"
	if stderr != want {
		t.Errorf("stderr:\n%s\nwant:\n%s", stderr, want)
	}
	if !strings.Contains(stdout, "\nReflections: 0 kept: 0 hit, 0 miss, 0 too early, 0 unclear\n  unreadable: the file is corrupt") ||
		!strings.Contains(stdout, "  service_health  lens unreadable") {
		t.Errorf("stdout:\n%s", stdout)
	}
	code, jout, jerr := run(t, dir, "status", "--orient", "--json")
	var doc struct {
		Corrupt []string `json:"corrupt"`
	}
	if code != 0 || jerr != want || json.Unmarshal([]byte(jout), &doc) != nil || strings.Join(doc.Corrupt, ",") != lens+","+refl {
		t.Errorf("--json: exit %d, corrupt %v\n%s\n%s", code, doc.Corrupt, jerr, jout)
	}
	if after := statusTree(t, dir); after != before {
		t.Errorf("status --orient set a corrupt file aside or rewrote it")
	}
}

// An empty project: every section says "none yet"; nothing is created.
func TestStatusOrientEmptyProject(t *testing.T) {
	dir := statusProject(t)
	before := statusTree(t, dir)
	code, stdout, stderr := run(t, dir, "status", "--orient")
	if code != 0 || stderr != "" {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if !strings.HasPrefix(stdout, "Orient health: no cycle yet\n") || strings.Count(stdout, "  none yet\n") != 6 ||
		!strings.Contains(stdout, "\nLens: 0 of 1 active domain has a lens\n  health  no lens yet\n") {
		t.Errorf("stdout:\n%s", stdout)
	}
	if after := statusTree(t, dir); after != before {
		t.Errorf("status --orient wrote to the project")
	}
}
