package cli

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// A forge that accepts the connection and never answers must not hold
// doctor: the check fails after doctorNetTimeout, naming the forge, and
// the other checks are still reported.
func TestDoctorForgeThatNeverAnswers(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-release:
		}
	}))
	// LIFO: the handlers are released before the server waits for them.
	t.Cleanup(srv.Close)
	t.Cleanup(func() { close(release) })

	old := doctorNetTimeout
	doctorNetTimeout = 300 * time.Millisecond
	t.Cleanup(func() { doctorNetTimeout = old })

	dir := t.TempDir()
	cfg := `{
  "domains": {"api": {"weight": 1, "primary_skill": "/noop"}},
  "safety": {"skill_allowlist": ["/noop"]},
  "git": {"commit_state": false, "push": false},
  "forge": {"provider": "github", "repo": "owner/app", "api_url": "` + srv.URL + `", "timeout": "10m"}
}`
	if err := os.WriteFile(filepath.Join(dir, "config.json"), []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	var out, errb bytes.Buffer
	code := Main([]string{"doctor", "--json", "--project", dir}, strings.NewReader(""), &out, &errb)
	if code != ExitUsage {
		t.Fatalf("exit %d, want %d; stderr: %s", code, ExitUsage, errb.String())
	}
	var doc struct {
		OK     bool          `json:"ok"`
		Checks []doctorCheck `json:"checks"`
	}
	if err := json.Unmarshal(out.Bytes(), &doc); err != nil {
		t.Fatalf("not one JSON document: %v\n%s", err, out.String())
	}
	if doc.OK {
		t.Fatalf("ok is true with an unanswering forge:\n%s", out.String())
	}
	byName := map[string]doctorCheck{}
	for _, c := range doc.Checks {
		byName[c.Name] = c
	}
	f := byName["forge"]
	if f.OK || f.Status != checkFail || !strings.Contains(f.Detail, "github owner/app") || !strings.Contains(f.Detail, "no answer within 300ms") {
		t.Errorf("forge check = %+v, want a failure naming the forge and the timeout", f)
	}
	if g := byName["git"]; g.Status != checkSkip {
		t.Errorf("git check = %+v, want skipped (git.commit_state and git.push false)", g)
	}
	if c := byName["config"]; !c.OK {
		t.Errorf("config check = %+v, want ok", c)
	}
}

// On a terminal the checklist uses marks; elsewhere words that a log or
// grep reads. Each continuation line of a detail is indented under it.
func TestDoctorPrintPlain(t *testing.T) {
	var out bytes.Buffer
	d := &doctorRun{g: &globals{stdout: &out}}
	d.add("config", checkOK, "valid")
	d.add("state", checkFail, "a.json: bad", "b.json: bad")
	d.add("forge", checkSkip, "none")
	d.add("lock", checkWarn, "held")
	d.print(false)
	want := "ok   config  valid\n" +
		"FAIL state   a.json: bad\n" +
		"               b.json: bad\n" +
		"skip forge   none\n" +
		"warn lock    held\n" +
		"1 check failed, 1 warning: fix the lines marked FAIL above.\n"
	if out.String() != want {
		t.Errorf("checklist:\n%s\nwant:\n%s", out.String(), want)
	}
}
