package state

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strconv"
	"syscall"
	"testing"
	"time"
)

// fixturesDir holds real agent/state trees written by the original project.
const fixturesDir = "../../../shared/compat/ooda-loop/fixtures"

// helperEnv selects the role of a re-executed test binary; the value is the
// role name. Processes, not goroutines, are what the lock and the atomic
// write must withstand, so some tests run their subject in a child process.
const helperEnv = "OODA_STATE_TEST_HELPER"

// helperCommand re-executes this test binary so that only TestHelperProcess
// runs, in the given role.
func helperCommand(t *testing.T, role string, extraEnv ...string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperProcess$", "-test.count=1")
	cmd.Env = append(os.Environ(), helperEnv+"="+role)
	cmd.Env = append(cmd.Env, extraEnv...)
	return cmd
}

func fixture(t testing.TB, name string) string {
	t.Helper()
	dir := filepath.Join(fixturesDir, name)
	if _, err := os.Stat(dir); err != nil {
		t.Skipf("compat fixture %s not available: %v", name, err)
	}
	return dir
}

func readFixture(t testing.TB, name, rel string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(fixture(t, name), rel))
	if err != nil {
		t.Skipf("compat fixture file missing: %v", err)
	}
	return b
}

// copyTree copies src into dst (created as needed), preserving file bytes.
func copyTree(t *testing.T, src, dst string) {
	t.Helper()
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, p)
		if err != nil {
			return err
		}
		target := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(target, b, 0o644)
	})
	if err != nil {
		t.Fatalf("copy %s: %v", src, err)
	}
}

// projectFromFixture builds a temporary project whose agent/ tree is the fixture's.
func projectFromFixture(t *testing.T, name string) string {
	t.Helper()
	root := t.TempDir()
	copyTree(t, filepath.Join(fixture(t, name), "agent"), filepath.Join(root, "agent"))
	return root
}

func writeFile(t testing.TB, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func readString(t testing.TB, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// generic decodes JSON into plain maps, slices and float64s so that two
// documents can be compared regardless of key order and spacing.
func generic(t testing.TB, b []byte) any {
	t.Helper()
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, b)
	}
	return v
}

// missingFrom reports every path of want that got lost or changed in got:
// objects may gain keys, but every key and value of want must survive.
func missingFrom(want, got any, path string) []string {
	switch w := want.(type) {
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok {
			return []string{path + ": not an object any more"}
		}
		var out []string
		for k, wv := range w {
			gv, ok := g[k]
			if !ok {
				out = append(out, path+"."+k+": missing")
				continue
			}
			out = append(out, missingFrom(wv, gv, path+"."+k)...)
		}
		return out
	case []any:
		g, ok := got.([]any)
		if !ok || len(g) != len(w) {
			return []string{path + ": array changed"}
		}
		var out []string
		for i := range w {
			out = append(out, missingFrom(w[i], g[i], path+"["+strconv.Itoa(i)+"]")...)
		}
		return out
	default:
		if !reflect.DeepEqual(want, got) {
			return []string{path + ": value changed"}
		}
		return nil
	}
}

func ptr[T any](v T) *T { return &v }

// TestHelperProcess is the body of the child processes started by
// helperCommand; run directly it does nothing.
func TestHelperProcess(t *testing.T) {
	switch os.Getenv(helperEnv) {
	case "":
		return
	case "lock":
		os.Exit(lockHelper())
	case "write-fsize":
		os.Exit(writeFsizeHelper())
	case "write-killed":
		os.Exit(writeKilledHelper())
	case "cycle-killed-in-batch":
		os.Exit(cycleKilledInBatchHelper())
	default:
		fmt.Fprintln(os.Stderr, "unknown helper role")
		os.Exit(2)
	}
}

// cycleKilledInBatchHelper runs a real cycle (helperCycle) and is killed
// by SIGKILL in its record's batch once $OODA_KILL_AFTER files are renamed
// into place, before the next.
func cycleKilledInBatchHelper() int {
	after, _ := strconv.Atoi(os.Getenv("OODA_KILL_AFTER"))
	batchRenameHook = func(renamed, n int) {
		if n > 1 && renamed == after {
			_ = syscall.Kill(os.Getpid(), syscall.SIGKILL)
		}
	}
	now, err := time.Parse(time.RFC3339, os.Getenv("OODA_HELPER_NOW"))
	if err == nil {
		err = helperCycle(os.Getenv("OODA_PROJECT"), now)
	}
	fmt.Println("NOT KILLED:", err)
	return 3
}
