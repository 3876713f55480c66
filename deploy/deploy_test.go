package deploy_test

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// repoRoot is the repository root, seen from this package's directory.
const repoRoot = ".."

// binDir holds the ooda that scripts/action/build.sh built, under the
// name ooda, and ooda-cycle-push (the image's name for the cycle script).
var binDir string

// builtVersion is the release tag the build is given, as a workflow's
// `uses: ooda-loop/ooda@v9.8.7` would.
const builtVersion = "v9.8.7"

// TestMain builds ooda the way action.yml does, through the action's own
// build script, so the script is exercised by every run of this package.
func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "ooda-deploy-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	binDir = dir
	// The ooda these tests start would remember valid configurations in
	// the user's cache directory (docs/config.md); tests leave it alone.
	os.Setenv("OODA_NO_CACHE", "1")
	code := func() int {
		build := exec.Command("bash", filepath.Join(repoRoot, "scripts", "action", "build.sh"))
		build.Env = append(os.Environ(),
			"OODA_OUT="+filepath.Join(dir, "ooda"),
			"OODA_ACTION_REF="+builtVersion,
			"GOFLAGS=-buildvcs=false", "GOPROXY=off")
		out, err := build.CombinedOutput()
		if err != nil {
			fmt.Fprintf(os.Stderr, "scripts/action/build.sh: %v\n%s", err, out)
			return 1
		}
		// The script prints the built binary's --version: the tag must
		// be what it says, or `ooda version` in a workflow would lie.
		if got := strings.TrimSpace(string(out)); !strings.HasSuffix(got, "ooda "+builtVersion) {
			fmt.Fprintf(os.Stderr, "scripts/action/build.sh printed %q, want the version line \"ooda %s\"\n", got, builtVersion)
			return 1
		}
		script, err := filepath.Abs(filepath.Join(repoRoot, "scripts", "action", "cycle.sh"))
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		if err := os.Symlink(script, filepath.Join(dir, "ooda-cycle-push")); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		return m.Run()
	}()
	os.RemoveAll(dir)
	os.Exit(code)
}

// readFile returns a file of the repository as text.
func readFile(t *testing.T, rel string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(repoRoot, filepath.FromSlash(rel)))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// goModVersion is the go line of go.mod.
func goModVersion(t *testing.T) string {
	t.Helper()
	sc := bufio.NewScanner(strings.NewReader(readFile(t, "go.mod")))
	for sc.Scan() {
		if f := strings.Fields(sc.Text()); len(f) == 2 && f[0] == "go" {
			return f[1]
		}
	}
	t.Fatal("go.mod: no go line")
	return ""
}
