package cli

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/ooda-loop/ooda/internal/config"
)

// configName is the file that marks a project root.
const configName = "config.json"

// discovery is where the project search from a directory ended.
type discovery struct {
	// Dir is the project root: the nearest directory, from the start
	// upwards, holding an ooda config.json; the start itself when none
	// was found.
	Dir string
	// Found is false when no ooda config.json was found (Dir is then the
	// start directory).
	Found bool
	// From is the start directory relative to Dir ("." when they are the
	// same directory).
	From string
	// Skipped lists the config.json files passed over on the way up
	// because they are not ooda configurations, each with the reason.
	Skipped []string
	// Top is the last directory searched (the repository root or "/")
	// when nothing was found; "" when nothing was searched.
	Top string
}

// findProject walks up from start (an absolute directory) to the nearest
// directory holding an ooda config.json, as git finds its repository. The
// walk follows the physical path, as git's does: the parent of a
// directory reached through a symlink is its real parent, so the project
// found is the one whose git repository a cycle commits to. It stops
// after the first directory holding .git (the repository root, a
// directory or, for worktrees and submodules, a file) and at the
// filesystem root. When the start was reached through symlinks, the
// project is named by the path the user typed when that path leads to the
// same directory, so messages show paths the user recognises.
func findProject(start string) (discovery, error) {
	start = filepath.Clean(start)
	phys, err := filepath.EvalSymlinks(start)
	if err != nil {
		return discovery{}, fmt.Errorf("the current directory %s: %w", start, err)
	}
	d := discovery{Dir: start, From: "."}
	dir, up := phys, 0
	for {
		p := filepath.Join(dir, configName)
		ok, why := isOodaConfig(p)
		if ok {
			d.Found = true
			d.Dir = displayDir(start, dir, up)
			if up > 0 {
				d.From, _ = filepath.Rel(dir, phys)
			}
			return d, nil
		}
		if why != "" {
			d.Skipped = append(d.Skipped, fmt.Sprintf("%s (%s)", p, why))
		}
		if _, err := os.Lstat(filepath.Join(dir, ".git")); err == nil {
			d.Top = dir
			return d, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			d.Top = dir
			return d, nil
		}
		dir, up = parent, up+1
	}
}

// displayDir names the physical directory found, up levels above the
// start: the start's own path with up elements removed when it leads to
// the same directory (a symlinked home, say), else the physical path.
func displayDir(start, phys string, up int) string {
	logical := start
	for range up {
		logical = filepath.Dir(logical)
	}
	if logical == phys {
		return phys
	}
	if r, err := filepath.EvalSymlinks(logical); err == nil && r == phys {
		return logical
	}
	return phys
}

// oodaMarkers are the top-level keys that make a config.json an ooda
// configuration for the project search: every configuration `ooda init`
// writes and every file of the original project has "domains"; one
// written by hand without domains is recognised by "schema_version"
// together with "project", as both write them.
var oodaMarkers = []string{"domains"}

// isOodaConfig reports whether p is an ooda configuration, cheaply and
// without trusting the file: only a regular file is opened (a directory,
// a named pipe or a device named config.json is passed over without
// being opened, and the open does not block), at most
// config.MaxConfigBytes are read, and only the top-level keys are looked
// at, up to the first syntax error, so a configuration broken further
// down still marks its project and the full validation, which the
// command does next, names the mistake. why says why an existing
// config.json is not one ("" when there is none).
func isOodaConfig(p string) (ok bool, why string) {
	fi, err := os.Stat(p)
	if errors.Is(err, fs.ErrNotExist) {
		return false, ""
	}
	if err != nil {
		return false, "cannot be read: " + errReason(err)
	}
	if !fi.Mode().IsRegular() {
		return false, "not a regular file: " + config.FileKind(fi.Mode())
	}
	raw, err := config.ReadRegular(p, config.MaxConfigBytes)
	if err != nil {
		return false, "cannot be read: " + errReason(err)
	}
	keys, complete := topLevelKeys(raw)
	has := map[string]bool{}
	for _, k := range keys {
		has[k] = true
	}
	for _, m := range oodaMarkers {
		if has[m] {
			return true, ""
		}
	}
	if has["schema_version"] && has["project"] {
		return true, ""
	}
	if !complete && len(keys) == 0 {
		return false, "not a JSON object"
	}
	return false, `no "domains" key`
}

// errReason is err without the path a *fs.PathError repeats.
func errReason(err error) string {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
}

// topLevelKeys returns the keys of a JSON object in the order they
// appear, read as a stream: the keys before a syntax error are returned,
// with complete false.
func topLevelKeys(raw []byte) (keys []string, complete bool) {
	dec := json.NewDecoder(bytes.NewReader(bytes.TrimPrefix(raw, []byte("\xef\xbb\xbf"))))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil, false
	}
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return keys, false
		}
		k, _ := t.(string)
		keys = append(keys, k)
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			return keys, false
		}
	}
	return keys, true
}

// enclosingProject returns the nearest ooda project strictly above dir,
// up to the repository root or the filesystem root, or "" when there is
// none. A directory that is itself a repository root has none: a nested
// repository (a submodule, a vendored checkout) is a project of its own.
// A dir that does not exist yet is searched from its nearest existing
// ancestor, which then counts as above it.
func enclosingProject(dir string) (string, error) {
	start := filepath.Clean(dir)
	for {
		_, err := os.Lstat(start)
		if err == nil {
			break
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return "", err
		}
		parent := filepath.Dir(start)
		if parent == start {
			return "", nil
		}
		start = parent
	}
	if start == filepath.Clean(dir) {
		phys, err := filepath.EvalSymlinks(start)
		if err != nil {
			return "", err
		}
		if _, err := os.Lstat(filepath.Join(phys, ".git")); err == nil {
			return "", nil
		}
		if start = filepath.Dir(phys); start == phys {
			return "", nil
		}
	}
	d, err := findProject(start)
	if err != nil || !d.Found {
		return "", err
	}
	return d.Dir, nil
}

// notFoundHint completes "config.json not found" after a search that
// found nothing: where it looked, so that a user in the wrong directory
// sees it.
func notFoundHint(d discovery) string {
	if d.Top == "" || d.Found {
		return ""
	}
	var b strings.Builder
	if d.Top == d.Dir {
		fmt.Fprintf(&b, "no ooda config.json in %s", d.Dir)
	} else {
		fmt.Fprintf(&b, "no ooda config.json in %s or above it up to %s", d.Dir, d.Top)
	}
	if d.Top != filepath.Dir(d.Top) {
		b.WriteString(", the repository root")
	}
	for _, s := range d.Skipped {
		fmt.Fprintf(&b, "; passed over %s", s)
	}
	b.WriteString("; run the command in the project, or name it with --project DIR")
	return b.String()
}

// projectNote is the line that says which project a command works on when
// it is not the working directory.
func projectNote(d discovery) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Project: %s (found from %s)", d.Dir, d.From)
	for _, s := range d.Skipped {
		fmt.Fprintf(&b, "; passed over %s: not an ooda configuration", s)
	}
	return b.String()
}

// repositoryRoot returns the nearest directory from dir upwards holding
// .git, or "" when dir is in no repository. dir is returned as given when
// it is the repository root itself, so that callers can compare.
func repositoryRoot(dir string) string {
	phys, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return ""
	}
	for d := phys; ; {
		if _, err := os.Lstat(filepath.Join(d, ".git")); err == nil {
			if d == phys {
				return dir
			}
			return d
		}
		parent := filepath.Dir(d)
		if parent == d {
			return ""
		}
		d = parent
	}
}
