package main

import (
	"bytes"
	"os"
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
