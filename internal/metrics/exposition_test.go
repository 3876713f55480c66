package metrics_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ooda-loop/ooda/internal/metrics"
	"github.com/ooda-loop/ooda/internal/secret"
)

// Real projects are written as the Prometheus client library wrote them,
// byte for byte: the demo; one whose state files hold hostile statuses,
// result types and skill names, with skill durations; one of corrupt
// files; one halted with goals and a running session; one that never ran;
// a directory without a configuration; and all of them together, named
// by directories whose names are hostile too.
func TestWriteIsTheClientLibrarysOnProjects(t *testing.T) {
	const tok = "ghp_metricsOracleToken0123456789"
	secret.Register(tok)
	root := t.TempDir()
	mk := func(rel string) string {
		d := filepath.Join(root, rel)
		if err := os.CopyFS(d, os.DirFS(demoDir)); err != nil {
			t.Fatal(err)
		}
		return d
	}
	ev := "agent/state/evolve/"

	plain := mk("a/api")

	hostile := mk("b/api")
	write(t, hostile, "agent/state/service_health.json", `{"status": "a\"b\n}\\", "alerts": [{"severity": "critical"}]}`)
	write(t, hostile, "agent/state/test_coverage.json", `{"status": "<script>\u0000\t`+strings.Repeat("é", 100)+`", "alerts": []}`)
	write(t, hostile, "agent/state/backlog.json", `{"status": "x\u001b[2J\r`+tok+`\u202e", "alerts": []}`)
	log, err := os.ReadFile(filepath.Join(hostile, ev+"cycle_log.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	for i, l := range []struct{ rt, skill, secs string }{
		{`a\"b\n}`, "/scan-health", "0.004"}, {"<script>", "scan-health", "0.2"}, {"z1", "/check-tests", "30"},
		{"observe", "/evil\\u001b[31m\\\"", "1"}, {"futile", "/plan-backlog", "5000"}, {"error", "/plan-backlog", "1e300"},
		{"", "/plan-backlog", "0.30000000000000004"}, {"pr_merged", "/plan-backlog", "-1"},
	} {
		log = fmt.Appendf(log, `{"cycle_id": %d, "timestamp": "2026-01-05T09:00:00Z", "domain": "backlog", "skill": "%s", "result_type": "%s", "quality_multiplier": 0.1, "skill_seconds": %s}`+"\n", 7+i, l.skill, l.rt, l.secs)
	}
	write(t, hostile, ev+"cycle_log.jsonl", string(log))

	corrupt := mk("x/a\"b\n}")
	write(t, corrupt, ev+"state.json", `{"cycle_count": 6, "decision_log": [`)
	write(t, corrupt, ev+"metrics.json", "")
	write(t, corrupt, "agent/state/service_health.json", `{"status": "healthy", "alerts": [`)

	halted := mk("x/<script>")
	write(t, halted, "agent/safety/HALT", "stop\n")
	write(t, halted, ev+"goals.json", `{"goals": [{"id": "g1", "status": "active", "progress": 0.4}]}`)
	write(t, halted, ev+"sessions/s1.json", `{"id": "s1", "status": "running", "started_at": "2026-01-06T06:00:00Z", "iteration": 2, "max_iterations": 10, "quarantined": ["service_health"], "deferred": [{"id": "d"}]}`)

	never := filepath.Join(root, "never\\ran\x1b")
	write(t, never, "config.json", `{"domains": {"api": {"weight": 1, "primary_skill": "/x"}}, "skills": {"/x": {"command": ["/bin/true"]}}, "safety": {"skill_allowlist": ["/x"]}, "cost": {"daily_limit_usd": 5}}`)

	empty := filepath.Join(root, "empty")
	if err := os.MkdirAll(empty, 0o755); err != nil {
		t.Fatal(err)
	}

	dirs := []string{plain, hostile, corrupt, halted, never, empty}
	for _, dir := range dirs {
		r := metrics.Read(metrics.Project{Dir: dir}, demoNow)
		var got, want strings.Builder
		gerr := metrics.Write(&got, r)
		werr := metrics.ReferenceWrite(&want, r)
		if got.String() != want.String() || (gerr == nil) != (werr == nil) {
			t.Errorf("%s: Write differs from the client library's:\n got (error %v):\n%s\nwant (error %v):\n%s", dir, gerr, got.String(), werr, want.String())
		}
	}

	projects, err := metrics.Projects(dirs)
	if err != nil {
		t.Fatal(err)
	}
	var got, want strings.Builder
	gerr := metrics.WriteMany(&got, projects, demoNow)
	werr := metrics.ReferenceWriteMany(&want, projects, demoNow)
	if got.String() != want.String() || (gerr == nil) != (werr == nil) {
		t.Errorf("WriteMany differs from the client library's:\n got (error %v):\n%s\nwant (error %v):\n%s", gerr, got.String(), werr, want.String())
	}
	for _, s := range []string{`project="a/api"`, `project="a\"b\n}"`, `project="never\\ran\\x1b"`, `skill="other"`, `result_type="other"`, "ooda_skill_duration_seconds_bucket", "ooda_state_file_corrupt"} {
		if !strings.Contains(got.String(), s) {
			t.Errorf("the projects' exposition lacks %s: the comparison misses what it was made for", s)
		}
	}

	// Two projects of one name are refused, as they were.
	twice := []metrics.Project{{Name: "p", Dir: plain}, {Name: "p", Dir: hostile}}
	if gerr, werr := metrics.WriteMany(&got, twice, demoNow), metrics.ReferenceWriteMany(&want, twice, demoNow); gerr == nil || werr == nil || gerr.Error() != werr.Error() {
		t.Errorf("two projects of one name: %v, want %v", gerr, werr)
	}
}

// The ooda binary links no Prometheus client library and no protocol
// buffers: their package initialization alone would cost every ooda
// process milliseconds at its start, for an exposition this package
// writes itself.
func TestBinaryLinksNoPrometheusLibrary(t *testing.T) {
	cmd := exec.Command("go", "list", "-deps", "github.com/ooda-loop/ooda/cmd/ooda")
	cmd.Env = append(os.Environ(), "GOFLAGS=-buildvcs=false", "GOPROXY=off")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, stderr.String())
	}
	deps := strings.Fields(string(out))
	found := false
	for _, p := range deps {
		found = found || p == "github.com/ooda-loop/ooda/internal/metrics"
		if strings.HasPrefix(p, "github.com/prometheus/") || strings.HasPrefix(p, "google.golang.org/protobuf/") {
			t.Errorf("ooda links %s", p)
		}
	}
	if !found {
		t.Errorf("go list -deps does not list this package: %d packages listed", len(deps))
	}
}
