package config

import (
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"syscall"
	"testing"
)

// concurrentCase is a project for the comparison of the two loads: its
// configuration, and the files to make in it before it is loaded.
type concurrentCase struct {
	name  string
	raw   string
	setup func(t *testing.T, root string)
	// fallback says the key walk cannot take raw: the concurrent load
	// must give way to the load in order.
	fallback bool
}

// manyDomains is the members of a domains object of n domains, extra
// appended to the members of the domains named in it.
func manyDomains(n int, extra map[int]string) string {
	var ms []string
	for i := 0; i < n; i++ {
		m := fmt.Sprintf(`"d%d": {"weight": %d, "primary_skill": "/x", "mission_alignment": 0.5`, i, 1+i%5)
		if e, ok := extra[i]; ok {
			m += ", " + e
		}
		ms = append(ms, m+"}")
	}
	return strings.Join(ms, ",\n")
}

func largeConfig(domains, rest string) string {
	s := `{"mission": "m", "domains": {` + domains + `}, "skills": {"/x": {"command": ["true"]}}`
	if rest != "" {
		s += ", " + rest
	}
	return s + "}"
}

func mkfile(t *testing.T, p, body string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
}

func symlink(t *testing.T, target, p string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, p); err != nil {
		t.Fatal(err)
	}
}

// concurrentCases are configurations of many domains, valid and not: state
// files present, missing, symlinked inside and out of the project, in
// agent/state/evolve/, shared with the HALT file, unknown keys, a domain
// defined twice, a key the text walk cannot unquote.
func concurrentCases(t *testing.T) []concurrentCase {
	outside := t.TempDir()
	mkfile(t, filepath.Join(outside, "secret"), "x")
	half := func(t *testing.T, root string) {
		for i := 0; i < 300; i += 2 {
			mkfile(t, filepath.Join(root, "agent", "state", fmt.Sprintf("d%d.json", i)), "{}")
		}
	}
	cases := []concurrentCase{
		{name: "plain", raw: largeConfig(manyDomains(300, nil), "")},
		{name: "half present", raw: largeConfig(manyDomains(300, nil), ""), setup: half},
		{name: "unknown keys", raw: largeConfig(manyDomains(300, map[int]string{3: `"wieght": 2`, 250: `"nested": {"k": 1}`}), `"safety": {"confidence_treshold": 0.5}`)},
		{name: "symlink inside", raw: largeConfig(manyDomains(300, nil), ""), setup: func(t *testing.T, root string) {
			half(t, root)
			mkfile(t, filepath.Join(root, "data", "real.json"), "{}")
			symlink(t, "../../data/real.json", filepath.Join(root, "agent", "state", "d7.json"))
		}},
		{name: "symlink out", raw: largeConfig(manyDomains(300, nil), ""), setup: func(t *testing.T, root string) {
			symlink(t, filepath.Join(outside, "secret"), filepath.Join(root, "agent", "state", "d123.json"))
		}},
		{name: "state directory a symlink out", raw: largeConfig(manyDomains(300, nil), ""), setup: func(t *testing.T, root string) {
			symlink(t, outside, filepath.Join(root, "agent", "state"))
		}},
		{name: "state directory a file", raw: largeConfig(manyDomains(300, nil), ""), setup: func(t *testing.T, root string) {
			mkfile(t, filepath.Join(root, "agent", "state"), "x")
		}},
		{name: "paths refused", raw: largeConfig(manyDomains(300, map[int]string{
			5: `"state_file": "../escape.json"`, 6: `"state_file": "agent/state/evolve/x.json"`, 7: `"state_file": ".git/config"`,
			8: `"state_file": "config.json"`, 9: `"state_file": "HALT"`,
		}), `"safety": {"halt_file": "HALT"}`), setup: half},
		{name: "defined twice", raw: largeConfig(manyDomains(300, nil)+`, "d17": {"weight": 1, "primary_skill": "/x"}`, "")},
		{name: "escaped key", raw: largeConfig(manyDomains(300, nil)+`, "caf\u00e9": {"weight": 1, "primary_skill": "/x"}`, ""), fallback: true},
	}
	for _, raw := range unknownKeyCorpus(t) {
		cases = append(cases, concurrentCase{name: "corpus " + string(raw[:min(len(raw), 24)]), raw: string(raw)})
	}
	return cases
}

// loadWith loads the project with concurrentLoadBytes set to n.
func loadWith(n int, path, root string) (*Config, error) {
	defer func(old int) { concurrentLoadBytes = old }(concurrentLoadBytes)
	concurrentLoadBytes = n
	return LoadProject(path, root)
}

// TestConcurrentLoadIsTheSequentialLoad loads each configuration of the
// cases in order and concurrently, its verdict remembered, and requires
// the same configuration or the same error, with the same warnings; and
// that the concurrent load was the one taken, but where its key walk
// cannot read the text.
func TestConcurrentLoadIsTheSequentialLoad(t *testing.T) {
	withVerdicts(t)
	concurrent := 0
	for _, tc := range concurrentCases(t) {
		root, path := project(t, tc.raw)
		if tc.setup != nil {
			tc.setup(t, root)
		}
		// The first load remembers a configuration the schema finds valid.
		_, _ = loadWith(math.MaxInt, path, root)
		want, werr := loadWith(math.MaxInt, path, root)
		got, gerr := loadWith(0, path, root)
		if !sameLoad(want, werr, got, gerr) {
			t.Errorf("%s:\n in order:     %v\n%+v\n concurrently: %v\n%+v", tc.name, werr, want, gerr, got)
		}
		if !knownValid([]byte(tc.raw)) {
			continue // refused by the schema: loaded in order both times
		}
		c, ok, err := parseKnownConcurrently(path, []byte(tc.raw), root)
		if ok == tc.fallback {
			t.Errorf("%s: concurrent load taken = %v, want %v", tc.name, ok, !tc.fallback)
		}
		if ok {
			concurrent++
			if !sameLoad(want, werr, c, err) {
				t.Errorf("%s: parseKnownConcurrently:\n in order:     %v\n concurrently: %v", tc.name, werr, err)
			}
		}
	}
	if concurrent < 8 {
		t.Errorf("only %d configurations were loaded concurrently", concurrent)
	}
}

// sameLoad reports whether two loads gave the same configuration or the
// same error (its message, path, issues and warnings).
func sameLoad(a *Config, aerr error, b *Config, berr error) bool {
	if (aerr == nil) != (berr == nil) {
		return false
	}
	if aerr != nil {
		var ae, be *Error
		if errors.As(aerr, &ae) != errors.As(berr, &be) {
			return false
		}
		return aerr.Error() == berr.Error() && reflect.DeepEqual(ae, be)
	}
	return reflect.DeepEqual(a, b)
}

// TestListingOfAnotherDirectoryIsNotUsed hands the path checks a listing
// taken ahead of them of a directory that is not the state directory — an
// empty one, in which no state file is found — while a domain's state file
// is a symlink out of the project. Were the listing used for the state
// directory, the symlink would be taken for a file that does not exist yet
// and the escape would go unreported.
func TestListingOfAnotherDirectoryIsNotUsed(t *testing.T) {
	outside := t.TempDir()
	mkfile(t, filepath.Join(outside, "secret"), "x")
	root, path := project(t, largeConfig(manyDomains(40, nil), ""))
	symlink(t, filepath.Join(outside, "secret"), filepath.Join(root, "agent", "state", "d30.json"))
	c, err := loadWith(math.MaxInt, path, root)
	if err == nil {
		t.Fatalf("loaded with d30's state file a symlink out of the project: %+v", c)
	}
	if !strings.Contains(err.Error(), "/domains/d30/state_file") || !strings.Contains(err.Error(), "through a symlink") {
		t.Fatalf("error %v does not name d30's state file leaving through a symlink", err)
	}
	for _, dir := range []string{t.TempDir(), filepath.Join(root, "agent"), outside} {
		pre := &listing{dir: dir, done: make(chan struct{})}
		pre.read()
		if pre.unusable {
			t.Fatalf("listing of %s unusable", dir)
		}
		dc, err := decodeConfig([]byte(largeConfig(manyDomains(40, nil), "")))
		if err != nil {
			t.Fatal(err)
		}
		dc.applyDomainDefaults()
		issues := dc.pathIssuesWith(path, root, pre)
		if len(issues) != 1 || issues[0].Path != "/domains/d30/state_file" {
			t.Errorf("with a listing of %s: issues %v, want d30's state file refused", dir, issues)
		}
	}
}

// TestListingIsOfItsDirectoryOnly checks listing.of: the names for the
// directory listed, found by its identity (also through another path to
// it), and nothing for another directory, a symlink to the directory, a
// listing that failed or none.
func TestListingIsOfItsDirectoryOnly(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "state")
	mkfile(t, filepath.Join(dir, "A.json"), "{}")
	symlink(t, "state", filepath.Join(root, "via"))
	other := t.TempDir()
	lstat := func(p string) fs.FileInfo {
		fi, err := os.Lstat(p)
		if err != nil {
			t.Fatal(err)
		}
		return fi
	}
	pre := &listing{dir: filepath.Join(root, "via"), done: make(chan struct{})}
	pre.read()
	names, ok := pre.of(lstat(dir))
	if !ok || !names["a.json"] || len(names) != 1 {
		t.Fatalf("listing of %s through a symlink, for the directory itself: %v, %v", dir, names, ok)
	}
	for _, fi := range []fs.FileInfo{lstat(other), lstat(filepath.Join(root, "via")), lstat(filepath.Join(dir, "A.json")), nil} {
		if names, ok := pre.of(fi); ok {
			t.Errorf("listing of %s used for %v: %v", dir, fi, names)
		}
	}
	if _, ok := (*listing)(nil).of(lstat(dir)); ok {
		t.Error("no listing gave names")
	}
	failed := &listing{dir: filepath.Join(root, "missing"), done: make(chan struct{})}
	failed.read()
	if _, ok := failed.of(lstat(dir)); ok || !failed.unusable {
		t.Error("a listing that failed gave names")
	}
}

// TestListingDoesNotBlockOnANamedPipe puts a named pipe where the state
// directory would be, under a configuration of enough domains that the
// path checks list that directory rather than look up each name: the
// listing, ahead of the checks or by them, must fail at once (an open for
// reading would wait for a writer forever, and so would every process
// loading the configuration), and both loads give the same result.
func TestListingDoesNotBlockOnANamedPipe(t *testing.T) {
	withVerdicts(t)
	root, path := project(t, largeConfig(manyDomains(40, nil), ""))
	if err := os.MkdirAll(filepath.Join(root, "agent"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(root, "agent", "state"), 0o644); err != nil {
		t.Skip("no named pipes here:", err)
	}
	pre := &listing{dir: filepath.Join(root, "agent", "state"), done: make(chan struct{})}
	pre.read()
	if !pre.unusable {
		t.Fatal("a named pipe was listed")
	}
	_, _ = loadWith(math.MaxInt, path, root)
	want, werr := loadWith(math.MaxInt, path, root)
	got, gerr := loadWith(0, path, root)
	if !sameLoad(want, werr, got, gerr) {
		t.Fatalf("in order: %v; concurrently: %v", werr, gerr)
	}
}

// TestNotThereIsErrorsIs checks notThere's shortcut against the errors.Is
// tests it stands in for, on the errors a lookup returns and others.
func TestNotThereIsErrorsIs(t *testing.T) {
	errs := []error{
		&fs.PathError{Op: "lstat", Path: "/x", Err: syscall.ENOENT},
		&fs.PathError{Op: "lstat", Path: "/x", Err: syscall.ENOTDIR},
		&fs.PathError{Op: "lstat", Path: "/x", Err: syscall.EACCES},
		&fs.PathError{Op: "lstat", Path: "/x", Err: syscall.ELOOP},
		&fs.PathError{Op: "lstat", Path: "/x", Err: fs.ErrNotExist},
		&fs.PathError{Op: "lstat", Path: "/x", Err: fmt.Errorf("wrapped: %w", syscall.ENOENT)},
		&fs.PathError{Op: "lstat", Path: "/x", Err: errors.New("other")},
		syscall.ENOENT, syscall.ENOTDIR, syscall.EPERM, fs.ErrNotExist, fs.ErrPermission,
		fmt.Errorf("x: %w", &fs.PathError{Op: "lstat", Path: "/x", Err: syscall.ENOENT}),
	}
	if _, err := os.Lstat(filepath.Join(t.TempDir(), "missing")); err != nil {
		errs = append(errs, err)
	}
	if _, err := os.Lstat(filepath.Join(os.Args[0], "below-a-file")); err != nil {
		errs = append(errs, err)
	}
	for _, err := range errs {
		want := errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR)
		if got := notThere(err); got != want {
			t.Errorf("notThere(%#v) = %v, errors.Is says %v", err, got, want)
		}
	}
}
