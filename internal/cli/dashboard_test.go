package cli

import (
	"bufio"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// dashboardDemo makes a project with `ooda demo --example quickstart`.
func dashboardDemo(t *testing.T, dir string) string {
	t.Helper()
	for k, v := range map[string]string{"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.invalid", "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.invalid", "OODA_NO_CACHE": "1"} {
		t.Setenv(k, v)
	}
	if code, _, stderr := run(t, t.TempDir(), "demo", "--example", "quickstart", "--dir", dir); code != 0 {
		t.Fatalf("ooda demo: %d\n%s", code, stderr)
	}
	return dir
}

func TestLoopbackAddr(t *testing.T) {
	for addr, want := range map[string]bool{
		"127.0.0.1:8765": true, "127.1.2.3:0": true, "[::1]:0": true, "localhost:80": true, "LOCALHOST:80": true,
		"0.0.0.0:8765": false, ":8765": false, "[::]:0": false, "192.168.1.5:80": false, "example.com:80": false,
		"localhost.example.com:80": false, "[::ffff:10.0.0.1]:80": false,
	} {
		got, err := loopbackAddr(addr)
		if err != nil || got != want {
			t.Errorf("loopbackAddr(%q) = %v, %v; want %v", addr, got, err, want)
		}
	}
	if _, err := loopbackAddr("8765"); err == nil {
		t.Error("a port alone: no error")
	}
}

// An address other machines can reach is refused without --allow-remote
// (exit 2, saying why and naming the flag), before anything listens; so
// are the other malformed command lines.
func TestDashboardUsageErrors(t *testing.T) {
	dir := dashboardDemo(t, filepath.Join(t.TempDir(), "p"))
	for _, addr := range []string{"0.0.0.0:0", ":0", "[::]:0", "192.0.2.1:0", "example.com:0"} {
		code, stdout, stderr := run(t, dir, "dashboard", "--listen", addr)
		if code != ExitUsage || stdout != "" {
			t.Errorf("--listen %s: exit %d, stdout %q; want 2 and nothing", addr, code, stdout)
		}
		if !strings.Contains(stderr, "not a loopback address") || !strings.Contains(stderr, "--allow-remote") {
			t.Errorf("--listen %s: %q does not say why nor name --allow-remote", addr, stderr)
		}
	}
	empty := t.TempDir()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"dashboard", "--listen", "8765"}, "give host:port"},
		{[]string{"dashboard", "extra"}, "takes no arguments"},
		{[]string{"dashboard", "--json"}, "leave out --json"},
	} {
		code, _, stderr := run(t, dir, tc.args...)
		if code != ExitUsage || !strings.Contains(stderr, tc.want) {
			t.Errorf("%q: exit %d, %q; want 2 and %q", tc.args, code, stderr, tc.want)
		}
	}
	var eout, eerr strings.Builder
	if code := Main([]string{"dashboard", "--projects", dir, empty}, strings.NewReader(""), &eout, &eerr); code != ExitUsage || !strings.Contains(eerr.String(), "no config.json there") {
		t.Errorf("a directory without config.json: %d %q", code, eerr.String())
	}
	// --project goes with one project, --projects with several.
	var out, errb strings.Builder
	if code := Main([]string{"--project", dir, "dashboard", "--projects", dir}, strings.NewReader(""), &out, &errb); code != ExitUsage || !strings.Contains(errb.String(), "leave out --project") {
		t.Errorf("--project with --projects: %d %q", code, errb.String())
	}
	// An invalid configuration is the usual configuration error.
	bad := t.TempDir()
	os.WriteFile(filepath.Join(bad, "config.json"), []byte("{"), 0o644)
	if code, _, stderr := run(t, bad, "dashboard", "--listen", "127.0.0.1:0"); code != ExitUsage || !strings.Contains(stderr, "invalid configuration") {
		t.Errorf("invalid configuration: %d %q", code, stderr)
	}
}

// startDashboard runs `ooda dashboard` in a process of its own and returns
// it with the URL it printed and the rest of its output to come.
func startDashboard(t *testing.T, args ...string) (cmd *exec.Cmd, url, head string, br *bufio.Reader, done chan error) {
	t.Helper()
	raw, _ := json.Marshal(args)
	cmd = exec.Command(os.Args[0], "-test.run=^TestRunHelperProcess$", "-test.count=1")
	cmd.Env = append(os.Environ(), runHelperEnv+"="+string(raw), "NO_COLOR=1")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = cmd.Stdout
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done = make(chan error, 1)
	br = bufio.NewReader(stdout)
	for url == "" {
		line, err := br.ReadString('\n')
		head += line
		if err != nil {
			cmd.Process.Kill()
			t.Fatalf("ooda dashboard ended before serving: %v (%q)", err, line)
		}
		if i := strings.Index(line, "http://"); i >= 0 && strings.HasPrefix(line, "Serving the dashboard") {
			url = strings.Fields(line[i:])[0]
		}
	}
	go func() { done <- cmd.Wait() }()
	t.Cleanup(func() { cmd.Process.Kill() })
	return cmd, url, head, br, done
}

// stopDashboard signals the process and waits for it: exit 0, having said
// it stopped. The limit only keeps a broken test from hanging.
func stopDashboard(t *testing.T, cmd *exec.Cmd, br *bufio.Reader, done chan error, sig os.Signal) {
	t.Helper()
	if err := cmd.Process.Signal(sig); err != nil {
		t.Fatal(err)
	}
	rest, _ := io.ReadAll(br)
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("ooda dashboard after %v: %v (want exit 0)\n%s", sig, err, rest)
		}
	case <-time.After(2 * time.Minute):
		t.Fatalf("ooda dashboard did not stop after %v\n%s", sig, rest)
	}
	if !strings.Contains(string(rest), "Dashboard stopped.") {
		t.Errorf("no word of stopping after %v: %q", sig, rest)
	}
}

func fetch(t *testing.T, url string) (int, string) {
	t.Helper()
	c := &http.Client{Timeout: time.Minute}
	resp, err := c.Get(url)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// The command serves the project on a free loopback port, prints the URL,
// and stops on SIGINT with exit 0.
func TestDashboardServesAndStops(t *testing.T) {
	dir := dashboardDemo(t, filepath.Join(t.TempDir(), "p"))
	cmd, url, _, br, done := startDashboard(t, "--project", dir, "--now", "2026-01-06T09:00:00Z", "dashboard", "--listen", "127.0.0.1:0")
	if !strings.HasPrefix(url, "http://127.0.0.1:") || strings.HasSuffix(url, ":0/") {
		t.Errorf("printed URL %q", url)
	}
	code, body := fetch(t, url+"api/status")
	_, want, _ := run(t, dir, "--now", "2026-01-06T09:00:00Z", "status", "--json")
	if code != 200 || body != want {
		t.Errorf("/api/status: %d\n%s\nwant:\n%s", code, body, want)
	}
	if code, body := fetch(t, url); code != 200 || !strings.Contains(body, "service_health") {
		t.Errorf("/: %d\n%s", code, body)
	}
	stopDashboard(t, cmd, br, done, os.Interrupt)
}

// --projects serves several projects (the directories after the flag as a
// shell glob expands them) and --allow-remote lets it listen beyond the
// loopback interface, with a warning; SIGTERM stops it with exit 0.
func TestDashboardManyProjectsAllowRemote(t *testing.T) {
	root := t.TempDir()
	a := dashboardDemo(t, filepath.Join(root, "a"))
	if err := os.CopyFS(filepath.Join(root, "b"), os.DirFS(a)); err != nil {
		t.Fatal(err)
	}
	b := filepath.Join(root, "b")
	cmd, url, head, br, done := startDashboard(t, "dashboard", "--allow-remote", "--listen", "0.0.0.0:0", "--projects", a, b)
	if !strings.Contains(head, "[WARN] the dashboard listens on 0.0.0.0:0, beyond this machine") {
		t.Errorf("no warning of a remote address: %q", head)
	}
	if !strings.HasPrefix(url, "http://127.0.0.1:") {
		t.Errorf("printed URL %q, want the loopback address and the bound port", url)
	}
	local := url
	code, body := fetch(t, local)
	if code != 200 || !strings.Contains(body, `href="/p/a/"`) || !strings.Contains(body, `href="/p/b/"`) {
		t.Errorf("the list: %d\n%s", code, body)
	}
	if code, _ := fetch(t, local+"p/b/api/status"); code != 200 {
		t.Errorf("/p/b/api/status: %d", code)
	}
	if code, _ := fetch(t, local+"p/c/"); code != 404 {
		t.Errorf("/p/c/: %d, want 404", code)
	}
	stopDashboard(t, cmd, br, done, syscall.SIGTERM)
}

// A quoted pattern (no shell expanded it) is expanded to the matching
// directories that hold a config.json, others left out; one that matches
// no project, or is malformed, is a usage error naming it.
func TestDashboardProjectsExpandsAQuotedGlob(t *testing.T) {
	root := t.TempDir()
	a := dashboardDemo(t, filepath.Join(root, "srv", "a"))
	if err := os.CopyFS(filepath.Join(root, "srv", "b"), os.DirFS(a)); err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{"srv/not-a-project", "other/c"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	ps, err := dashboardProjects([]string{filepath.Join(root, "srv", "*")})
	if err != nil {
		t.Fatal(err)
	}
	if len(ps) != 2 || ps[0].Name != "a" || ps[1].Name != "b" {
		t.Errorf("projects %+v, want a and b", ps)
	}
	for _, bad := range []string{filepath.Join(root, "other", "*"), filepath.Join(root, "srv", "[")} {
		_, err := dashboardProjects([]string{bad})
		if err == nil || exitCode(err) != ExitUsage || !strings.Contains(err.Error(), bad) {
			t.Errorf("--projects %s: %v, want a usage error naming it", bad, err)
		}
	}
}
