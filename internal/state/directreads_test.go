package state

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// directReadsProject is a project whose domains' lenses and state files
// are each something a read must handle: missing, a directory, a
// symlink inside or out of the project, a FIFO, too large, too deep,
// not JSON.
func directReadsProject(t *testing.T) (*Store, []string) {
	t.Helper()
	root := t.TempDir()
	outside := t.TempDir()
	stateDir := filepath.Join(root, "agent", "state")
	write := func(p, body string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	lens := `{"schema_version":"1.0.0","domain":"x","focus_items":[]}`
	write(filepath.Join(outside, "lens.json"), lens)
	write(filepath.Join(outside, "state.json"), `{"status":"ok"}`)
	cases := map[string]func(dir, stateFile string){
		"plain": func(dir, sf string) {
			write(filepath.Join(dir, "lens.json"), lens)
			write(sf, `{"status":"ok","run_count":2}`)
		},
		"missing":    func(dir, sf string) {},
		"no lens":    func(dir, sf string) { os.MkdirAll(dir, 0o755) },
		"blank lens": func(dir, sf string) { write(filepath.Join(dir, "lens.json"), "  \n") },
		"not json":   func(dir, sf string) { write(filepath.Join(dir, "lens.json"), "{x"); write(sf, "{x") },
		"array":      func(dir, sf string) { write(filepath.Join(dir, "lens.json"), "[1]"); write(sf, "[1]") },
		"bad field":  func(dir, sf string) { write(filepath.Join(dir, "lens.json"), `{"focus_items":3}`) },
		"too deep": func(dir, sf string) {
			deep := strings.Repeat("[", 200) + strings.Repeat("]", 200)
			write(filepath.Join(dir, "lens.json"), deep)
			write(sf, deep)
		},
		"too large": func(dir, sf string) {
			big := `{"x":"` + strings.Repeat("a", 5000) + `"}`
			write(filepath.Join(dir, "lens.json"), big)
			write(sf, big)
		},
		"lens is dir": func(dir, sf string) { os.MkdirAll(filepath.Join(dir, "lens.json"), 0o755); os.MkdirAll(sf, 0o755) },
		"symlink in": func(dir, sf string) {
			os.MkdirAll(dir, 0o755)
			write(filepath.Join(stateDir, "shared-lens.json"), lens)
			os.Symlink("../shared-lens.json", filepath.Join(dir, "lens.json"))
			os.Symlink("shared-lens.json", sf)
		},
		"symlink out": func(dir, sf string) {
			os.MkdirAll(dir, 0o755)
			os.Symlink(filepath.Join(outside, "lens.json"), filepath.Join(dir, "lens.json"))
			os.Symlink(filepath.Join(outside, "state.json"), sf)
		},
		"dir symlink out": func(dir, sf string) { os.Symlink(outside, dir) },
		"fifo": func(dir, sf string) {
			os.MkdirAll(dir, 0o755)
			if err := syscall.Mkfifo(filepath.Join(dir, "lens.json"), 0o644); err != nil {
				t.Skip("no FIFO:", err)
			}
			syscall.Mkfifo(sf, 0o644)
		},
	}
	var names []string
	for name, make := range cases {
		d := strings.ReplaceAll(name, " ", "-")
		names = append(names, d)
		make(filepath.Join(stateDir, d), filepath.Join(stateDir, d+".json"))
		// The domain's lens changelog is what its lens is.
		lp, cp := filepath.Join(stateDir, d, "lens.json"), filepath.Join(stateDir, d, "lens_changelog.json")
		fi, err := os.Lstat(lp)
		switch {
		case err != nil:
		case fi.Mode()&os.ModeSymlink != 0:
			target, _ := os.Readlink(lp)
			os.Symlink(target, cp)
		case fi.IsDir():
			os.Mkdir(cp, 0o755)
		case fi.Mode()&os.ModeNamedPipe != 0:
			syscall.Mkfifo(cp, 0o644)
		default:
			body, _ := os.ReadFile(lp)
			write(cp, strings.Replace(string(body), `"focus_items":[]`, `"entries":[{"cycle":3}]`, 1))
		}
	}
	// Enough domains without a state file for the held root to list
	// agent/state/ instead of opening each (listAfter).
	for i := 0; i < 2*listAfter; i++ {
		d := fmt.Sprintf("filler%d", i)
		names = append(names, d)
		write(filepath.Join(stateDir, d, "lens.json"), lens)
	}
	s := New(root)
	s.MaxRead = 4096
	return s, names
}

// readAll is, for every domain, what LensState and ReadDomainState
// return, with the root held or not.
func readAll(s *Store, names []string, hold bool) []string {
	var out []string
	if hold {
		defer s.HoldRoot()()
	}
	for _, d := range names {
		found, err := s.LensState(d)
		ds, derr := s.ReadDomainState(filepath.Join("agent", "state", d+".json"))
		cl, cerr := s.ReadLensChangelog(d)
		clb, _ := json.Marshal(cl)
		out = append(out, fmt.Sprintf("%s: lens %v %v; state %v %q %q %v %v; changelog %s %v", d, found, err, ds.Found, ds.Status, ds.Bytes, ds.Warnings, derr, clb, cerr))
	}
	return out
}

func TestDirectReadsSameAsGeneralPath(t *testing.T) {
	s, names := directReadsProject(t)
	for _, hold := range []bool{true, false} {
		got := readAll(s, names, hold)
		directReadsOff = true
		want := readAll(s, names, hold)
		directReadsOff = false
		for i := range got {
			if got[i] != want[i] {
				t.Errorf("held %v:\n got %s\nwant %s", hold, got[i], want[i])
			}
		}
	}
}

// TestHeldAbsentOnlyForCleanStatePaths holds heldAbsent to the paths
// readFileLimit turns into a name in agent/state/: any other spelling is
// read as always.
func TestHeldAbsentOnlyForCleanStatePaths(t *testing.T) {
	s, names := directReadsProject(t)
	defer s.HoldRoot()()
	for _, d := range names {
		s.ReadDomainState(filepath.Join("agent", "state", d+".json"))
	}
	for _, rel := range []string{
		"agent/state/./missing.json", "agent/state/x/../missing.json", "/agent/state/missing.json",
		"agent/other/missing.json", filepath.Join(s.Root, "agent", "state", "missing.json"),
	} {
		if s.heldAbsent(rel) {
			t.Errorf("%s: taken as missing by the listing", rel)
		}
	}
	if !s.heldAbsent("agent/state/missing.json") {
		t.Errorf("agent/state/missing.json: not found missing by the listing")
	}
}

// BenchmarkObserveStep1000 is Observe's reads of a 1,000-domain project
// (observe.go): each domain's state file (missing) and whether its lens
// exists and reads; general=true takes the general path.
func BenchmarkObserveStep1000(b *testing.B) {
	s, names := domainsProject(b, 1000)
	for _, general := range []bool{false, true} {
		b.Run(fmt.Sprintf("general=%v", general), func(b *testing.B) {
			directReadsOff = general
			defer func() { directReadsOff = false }()
			for b.Loop() {
				release := s.HoldRoot()
				for _, d := range names {
					if ds, err := s.ReadDomainState(filepath.Join("agent", "state", d+".json")); err != nil || ds.Found {
						b.Fatal(ds, err)
					}
					if found, err := s.LensState(d); err != nil || !found {
						b.Fatal(d, found, err)
					}
				}
				release()
			}
		})
	}
}

// BenchmarkLensChangelogs1000 is the card's reads of a 1,000-domain
// project's lens changelogs (none exists); general=true takes the
// general path.
func BenchmarkLensChangelogs1000(b *testing.B) {
	s, names := domainsProject(b, 1000)
	for _, general := range []bool{false, true} {
		b.Run(fmt.Sprintf("general=%v", general), func(b *testing.B) {
			directReadsOff = general
			defer func() { directReadsOff = false }()
			for b.Loop() {
				release := s.HoldRoot()
				for _, d := range names {
					if cl, err := s.ReadLensChangelog(d); err != nil || cl.Domain != d {
						b.Fatal(cl, err)
					}
				}
				release()
			}
		})
	}
}
