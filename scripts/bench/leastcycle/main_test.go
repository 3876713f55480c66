package main

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// project makes a project with a config and two evolve files.
func project(t *testing.T) (root, evolve string) {
	t.Helper()
	root = t.TempDir()
	evolve = filepath.Join(root, "agent", "state", "evolve")
	if err := os.MkdirAll(evolve, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, data := range map[string]string{
		filepath.Join(root, "config.json"):     `{"domains":{}}`,
		filepath.Join(evolve, "state.json"):    `{"cycle_count":3}` + "\n",
		filepath.Join(evolve, "outcomes.json"): `{"outcomes":[]}` + "\n",
	} {
		if err := os.WriteFile(name, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root, evolve
}

// It writes as many whole files and appends as asked, state.json last and
// unchanged, and leaves neither its lock nor a temporary file behind; run
// again, it reads back only the project's files.
func TestLeastCycleMakesTheDurableWritesAsked(t *testing.T) {
	root, evolve := project(t)
	for round := 1; round <= 2; round++ {
		if err := run([]string{"--writes", "6", "--appends", "2", root}); err != nil {
			t.Fatalf("run %d: %v", round, err)
		}
	}
	ents, err := os.ReadDir(evolve)
	if err != nil {
		t.Fatal(err)
	}
	var written []string
	for _, e := range ents {
		switch name := e.Name(); {
		case strings.HasPrefix(name, ".") || name == prefix+"lock":
			t.Errorf("left behind: %s", name)
		case strings.HasPrefix(name, prefix) && strings.HasSuffix(name, ".json"):
			written = append(written, name)
		}
	}
	if len(written) != 4 { // 6 whole files: state.json twice, 4 others
		t.Errorf("whole files besides state.json: %v, want 4", written)
	}
	st, err := os.ReadFile(filepath.Join(evolve, "state.json"))
	if err != nil || string(st) != `{"cycle_count":3}`+"\n" {
		t.Errorf("state.json = %q, %v; want it unchanged", st, err)
	}
	log, err := os.ReadFile(filepath.Join(evolve, prefix+"log.jsonl"))
	if err != nil || bytes.Count(log, []byte("\n")) != 4 {
		t.Errorf("log = %q, %v; want two appends a run", log, err)
	}
}

// A project without its state, a held lock or impossible counts are
// errors, and a held lock is left where it was.
func TestLeastCycleRefuses(t *testing.T) {
	root, evolve := project(t)
	for _, args := range [][]string{
		{"--writes", "1", root},
		{"--appends", "-1", root},
		{root, "extra"},
		{filepath.Join(root, "missing")},
	} {
		if err := run(args); err == nil {
			t.Errorf("%v: no error", args)
		}
	}
	lock := filepath.Join(evolve, prefix+"lock")
	if err := os.WriteFile(lock, []byte("held"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := run([]string{root}); err == nil {
		t.Error("ran beside a held lock")
	}
	if b, err := os.ReadFile(lock); err != nil || string(b) != "held" {
		t.Errorf("the held lock: %q, %v", b, err)
	}
}

// Built with -tags bare, leastcycle links none of ooda's packages (so it
// starts as a small Go program does, figure m), refuses --ooda, and still
// makes its durable writes; built without, it links ooda's command line.
func TestLeastCycleBareBuildLinksNoneOfOoda(t *testing.T) {
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go tool to build with")
	}
	deps := func(tags ...string) string {
		out, err := exec.Command(gobin, append(append([]string{"list"}, tags...), "-deps", ".")...).CombinedOutput()
		if err != nil {
			t.Fatalf("go list %v: %v\n%s", tags, err, out)
		}
		return string(out)
	}
	if d := deps("-tags", "bare"); strings.Contains(d, "github.com/ooda-loop/ooda/internal/") {
		t.Errorf("the bare build links ooda's packages:\n%s", d)
	}
	if d := deps(); !strings.Contains(d, "github.com/ooda-loop/ooda/internal/cli\n") {
		t.Errorf("the linked build does not link internal/cli:\n%s", d)
	}

	bin := filepath.Join(t.TempDir(), "leastcycle-bare")
	if out, err := exec.Command(gobin, "build", "-tags", "bare", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build -tags bare: %v\n%s", err, out)
	}
	out, err := exec.Command(bin, "--ooda", "version").CombinedOutput()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 2 || !strings.Contains(string(out), "bare") {
		t.Errorf("--ooda in a bare build: %v, %q; want exit 2 saying the build is bare", err, out)
	}
	root, evolve := project(t)
	if out, err := exec.Command(bin, "--writes", "3", "--appends", "1", root).CombinedOutput(); err != nil {
		t.Fatalf("bare run: %v\n%s", err, out)
	}
	if _, err := os.Stat(filepath.Join(evolve, prefix+"log.jsonl")); err != nil {
		t.Errorf("the bare build made no append: %v", err)
	}
}
