package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/ooda-loop/ooda/internal/cli"
)

// TestMain lets the test binary stand in for the real `ooda` inside the
// scripts: testscript re-executes it under the name "ooda", so every script
// drives the command line exactly as a user's shell would, in its own
// process with its own exit code.
func TestMain(m *testing.M) {
	testscript.Main(cleanupM{m}, map[string]func(){
		"ooda": func() { os.Exit(cli.Main(os.Args[1:], os.Stdin, os.Stdout, os.Stderr)) },
	})
}

// cleanupM removes the binary built for the process-level tests once every
// test has run; testscript.Main exits the process itself, so a deferred
// call in TestMain would never run.
type cleanupM struct{ m *testing.M }

func (c cleanupM) Run() int {
	// The binaries these tests start would remember valid configurations
	// in the user's cache directory (docs/config.md); tests leave the
	// developer's home alone.
	os.Setenv("OODA_NO_CACHE", "1")
	code := c.m.Run()
	removeBuiltBinary()
	return code
}

func TestScripts(t *testing.T) {
	testscript.Run(t, testscript.Params{
		Dir: filepath.Join("testdata", "script"),
		Setup: func(env *testscript.Env) error {
			// A skill or a later engine step may run git; it must never
			// read the developer's own identity or configuration.
			env.Setenv("HOME", env.WorkDir)
			env.Setenv("GIT_AUTHOR_NAME", "ooda test")
			env.Setenv("GIT_AUTHOR_EMAIL", "ooda-test@example.invalid")
			env.Setenv("GIT_COMMITTER_NAME", "ooda test")
			env.Setenv("GIT_COMMITTER_EMAIL", "ooda-test@example.invalid")
			env.Setenv("GIT_CONFIG_NOSYSTEM", "1")
			env.Setenv("NO_COLOR", "1")
			// Under -race every `ooda` of a script is the instrumented test
			// binary, which by default sleeps a second before exiting;
			// hundreds of invocations would make the suite crawl. Races
			// are still reported (and exit 66, failing the script).
			if g := os.Getenv("GORACE"); !strings.Contains(g, "atexit_sleep_ms") {
				env.Setenv("GORACE", strings.TrimSpace(g+" atexit_sleep_ms=0"))
			}
			env.Vars = append(env.Vars, goEnv()...)
			return nil
		},
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"exitcode": cmdExitcode,
			"mklock":   cmdMklock,
			"onejson":  cmdOnejson,
			"jsonok":   cmdJSONOK,
			"manifest": cmdManifest,
			"mtime":    cmdMtime,
		},
	})
}

// goEnv is what lets a scenario run the go command offline on a copy of
// a real module, as first_walkthrough.txtar's skills run `go test` and
// `go vet`: the build and module caches of the go command running these
// tests (so that nothing is fetched and the standard library is not
// rebuilt in every scenario), no proxy and no toolchain switch. PFLAG_DIR is the module
// cache's copy of github.com/spf13/pflag, a small real module without
// dependencies of its own that this module's build needs (cobra requires
// it), so it is there wherever these tests could be built. When the go
// command cannot say where, PFLAG_DIR holds the reason, which the
// scenario's first `exists` then shows.
var goEnv = sync.OnceValue(func() []string {
	vars := []string{"GOPROXY=off", "GOTOOLCHAIN=local", "GOFLAGS="}
	if out, err := exec.Command("go", "env", "GOCACHE", "GOMODCACHE").Output(); err == nil {
		if f := strings.Split(strings.TrimSpace(string(out)), "\n"); len(f) == 2 {
			vars = append(vars, "GOCACHE="+f[0], "GOMODCACHE="+f[1])
		}
	}
	list := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "github.com/spf13/pflag")
	list.Env = append(os.Environ(), "GOPROXY=off")
	out, err := list.Output()
	dir := strings.TrimSpace(string(out))
	switch {
	case err != nil:
		dir = fmt.Sprintf("(unavailable: go list -m github.com/spf13/pflag: %v)", err)
	case dir == "":
		dir = "(unavailable: github.com/spf13/pflag is not in the module cache)"
	}
	return append(vars, "PFLAG_DIR="+dir)
})

// cmdExitcode runs a program and requires its exact exit status:
//
//	exitcode 3 ooda cycle
//
// `! exec` only tells failure from success, and the contract gives each
// non-zero code its own meaning. The program's stdout and stderr are kept
// for the `stdout` and `stderr` commands that follow.
func cmdExitcode(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 2 {
		ts.Fatalf("usage: exitcode CODE program [args...]")
	}
	want, err := strconv.Atoi(args[0])
	if err != nil {
		ts.Fatalf("exitcode: bad code %q", args[0])
	}
	got := 0
	if err := ts.Exec(args[1], args[2:]...); err != nil {
		var ee *exec.ExitError
		if !errors.As(err, &ee) {
			ts.Fatalf("exitcode: %v", err)
		}
		got = ee.ExitCode()
	}
	if got != want {
		ts.Fatalf("%s exited with %d, want %d", args[1], got, want)
	}
}

// cmdMklock writes the cycle lock as another ooda process would:
//
//	mklock live|dead STARTED_AT
//
// "live" names the test process itself, which certainly exists on this
// host for as long as the script runs; "dead" names a PID that cannot be a
// running process. The host is this machine's, so that the engine's
// dead-PID check applies.
func cmdMklock(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: mklock live|dead STARTED_AT")
	}
	var pid int
	switch args[0] {
	case "live":
		pid = os.Getpid()
	case "dead":
		pid = deadPID(ts)
	default:
		ts.Fatalf("mklock: want live or dead, got %q", args[0])
	}
	host, err := os.Hostname()
	ts.Check(err)
	b, err := json.Marshal(map[string]any{"pid": pid, "host": host, "started_at": args[1]})
	ts.Check(err)
	p := ts.MkAbs(filepath.Join("agent", "state", "evolve", ".lock"))
	ts.Check(os.MkdirAll(filepath.Dir(p), 0o755))
	ts.Check(os.WriteFile(p, b, 0o644))
}

// deadPID returns the PID of a process that has exited and been reaped.
func deadPID(ts *testscript.TestScript) int {
	cmd := exec.Command("/bin/sh", "-c", "exit 0")
	ts.Check(cmd.Run())
	return cmd.Process.Pid
}

// cmdMtime sets a file's modification time:
//
//	mtime FILE RFC3339
//
// The engine falls back to a file's mtime where a file's content cannot
// tell its age, and under --now that must be a simulated instant too.
func cmdMtime(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: mtime FILE RFC3339|-DURATION (ago, by the real clock)")
	}
	var tm time.Time
	if d, err := time.ParseDuration(args[1]); err == nil {
		tm = time.Now().Add(d)
	} else {
		tm, err = time.Parse(time.RFC3339, args[1])
		ts.Check(err)
	}
	ts.Check(os.Chtimes(ts.MkAbs(args[0]), tm, tm))
}

// cmdOnejson requires that a file (or "stdout") holds exactly one JSON
// document and nothing else: --json output is read by scripts that
// decode the whole of stdout.
func cmdOnejson(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 1 {
		ts.Fatalf("usage: onejson FILE|stdout")
	}
	err := exactlyOneJSON([]byte(ts.ReadFile(args[0])))
	switch {
	case err != nil && !neg:
		ts.Fatalf("%s: %v", args[0], err)
	case err == nil && neg:
		ts.Fatalf("%s: unexpectedly one JSON document", args[0])
	}
}

func exactlyOneJSON(b []byte) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	var v any
	if err := dec.Decode(&v); err != nil {
		return fmt.Errorf("not JSON: %v", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return fmt.Errorf("more than one JSON document (or trailing text)")
	}
	return nil
}

// cmdJSONOK requires that every *.json file under a directory parses.
func cmdJSONOK(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: jsonok DIR")
	}
	ts.Check(allJSONParses(ts.MkAbs(args[0])))
}

func allJSONParses(dir string) error {
	return filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".json") {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if !json.Valid(b) {
			return fmt.Errorf("%s is not valid JSON: %q", p, b)
		}
		return nil
	})
}

// cmdManifest prints one line per file and directory under DIR: path,
// mode, size, content hash and modification time. Comparing two manifests
// with `cmp` shows that a command wrote, created or removed nothing.
//
//	manifest [-files] DIR
//
// -files leaves directories out, for a command that may briefly create
// and remove its lock (which touches the directory's mtime) but must
// leave every file as it was.
func cmdManifest(ts *testscript.TestScript, neg bool, args []string) {
	filesOnly := len(args) > 0 && args[0] == "-files"
	if filesOnly {
		args = args[1:]
	}
	if neg || len(args) != 1 {
		ts.Fatalf("usage: manifest [-files] DIR")
	}
	m, err := manifest(ts.MkAbs(args[0]), filesOnly)
	ts.Check(err)
	fmt.Fprint(ts.Stdout(), m)
}

// manifest describes every entry under root (root itself included).
func manifest(root string, filesOnly bool) (string, error) {
	var lines []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if filesOnly && d.IsDir() {
			return nil
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		sum := "-"
		if info.Mode().IsRegular() {
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			sum = fmt.Sprintf("%x", sha256.Sum256(b))
		}
		lines = append(lines, fmt.Sprintf("%s %v %d %s %d", rel, info.Mode(), info.Size(), sum, info.ModTime().UnixNano()))
		return nil
	})
	sort.Strings(lines)
	return strings.Join(lines, "\n") + "\n", err
}
