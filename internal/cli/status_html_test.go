package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const htmlNow = "2026-01-06T09:00:00Z"

// `ooda status --html FILE` writes the dashboard's page, plots included,
// as one file that needs nothing else: its style inside, no script, no
// address to fetch; `-` prints the same page.
func TestStatusHTMLWritesASelfContainedPage(t *testing.T) {
	dir := metricsDemo(t)
	out := filepath.Join(t.TempDir(), "report.html")
	code, stdout, stderr := run(t, dir, "--now", htmlNow, "status", "--html", out)
	if code != 0 || stdout != "" || stderr != "" {
		t.Fatalf("status --html: exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	page := string(b)
	low := strings.ToLower(page)
	for _, bad := range []string{"<script", "http://", "https://", "<link", `style="`, "/api/", "data-version-url"} {
		if strings.Contains(low, bad) {
			t.Errorf("the page holds %q", bad)
		}
	}
	for _, want := range []string{"<style>", "svg.plot {", `<section id="plots">`, `id="chart-score"`, `class="point winner"`, "Loop Scorecard", "ooda status --html"} {
		if !strings.Contains(page, want) {
			t.Errorf("the page lacks %q", want)
		}
	}
	if n := strings.Count(page, `<svg class="plot" role="img"`); n != 6 {
		t.Errorf("%d plots, want 6", n)
	}
	if n := strings.Count(page, `class="point winner"`); n != 6 {
		t.Errorf("%d cycles in the score plot, want 6", n)
	}
	code, stdout, _ = run(t, dir, "--now", htmlNow, "status", "--html", "-")
	if code != 0 || stdout != page {
		t.Errorf("status --html -: exit %d, and stdout is not the file's page", code)
	}
	// Written again over itself: replaced, not appended to.
	if code, _, stderr := run(t, dir, "--now", htmlNow, "status", "--html", out); code != 0 {
		t.Fatalf("again: exit %d %s", code, stderr)
	}
	if b2, _ := os.ReadFile(out); string(b2) != page {
		t.Error("the page written again differs")
	}
}

// A corrupt state file is named on stderr, as `ooda status` names it, and
// on the page.
func TestStatusHTMLNamesACorruptFile(t *testing.T) {
	dir := metricsDemo(t)
	if err := os.WriteFile(filepath.Join(dir, "agent/state/evolve/confidence.json"), []byte("{not json"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := run(t, dir, "--now", htmlNow, "status", "--html", "-")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if !strings.Contains(stderr, "[WARN] corrupt state file: agent/state/evolve/confidence.json") {
		t.Errorf("stderr does not name the file: %q", stderr)
	}
	if !strings.Contains(stdout, "<li><code>agent/state/evolve/confidence.json</code></li>") {
		t.Error("the page does not name the corrupt file")
	}
}

// --html never writes over the loop's own files: not into agent/state/
// (named directly or through a symlinked directory), not over the
// configuration (by its name or a hard link to it), not over a directory;
// and it is a view of its own. Each refusal is a usage error (exit 2)
// that names the file, and leaves everything as it was.
func TestStatusHTMLRefuses(t *testing.T) {
	dir := metricsDemo(t)
	elsewhere := t.TempDir()
	link := filepath.Join(elsewhere, "state-link")
	if err := os.Symlink(filepath.Join(dir, "agent", "state"), link); err != nil {
		t.Fatal(err)
	}
	hard := filepath.Join(elsewhere, "cfg.html")
	if err := os.Link(filepath.Join(dir, "config.json"), hard); err != nil {
		t.Fatal(err)
	}
	cfgBefore, err := os.ReadFile(filepath.Join(dir, "config.json"))
	if err != nil {
		t.Fatal(err)
	}
	stateBefore := statusTree(t, dir)
	cases := []struct {
		name string
		args []string
		want string
	}{
		{"state file", []string{"--html", filepath.Join(dir, "agent/state/evolve/state.json")}, "inside agent/state/"},
		{"new file in state", []string{"--html", filepath.Join(dir, "agent/state/report.html")}, "inside agent/state/"},
		{"state directory", []string{"--html", filepath.Join(dir, "agent/state")}, "inside agent/state/"},
		{"through a symlink", []string{"--html", filepath.Join(link, "evolve", "x.html")}, "inside agent/state/"},
		{"config", []string{"--html", filepath.Join(dir, "config.json")}, "that is the configuration"},
		{"hard link to config", []string{"--html", hard}, "under another name"},
		{"directory", []string{"--html", elsewhere}, "is a directory"},
		{"empty", []string{"--html", ""}, "needs a FILE"},
		{"with metrics", []string{"--html", "-", "--metrics"}, "a view of its own"},
		{"with scorecard", []string{"--html", "-", "--scorecard"}, "a view of its own"},
		{"with json", []string{"--json", "--html", "-"}, "leave out --json"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			code, stdout, stderr := run(t, dir, append([]string{"--now", htmlNow, "status"}, tc.args...)...)
			if code != 2 || stdout != "" || !strings.Contains(stderr, tc.want) {
				t.Errorf("exit %d, stdout %q, stderr %q; want 2 and %q", code, stdout, stderr, tc.want)
			}
		})
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "config.json")); string(b) != string(cfgBefore) {
		t.Error("config.json changed")
	}
	if after := statusTree(t, dir); after != stateBefore {
		t.Errorf("the project changed:\n%s\nwas\n%s", after, stateBefore)
	}
}
