package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// t0 is the first cycle's --now. Each cycle of a project runs one hour
// after the previous one, far beyond min_cycle_interval_minutes (30), so
// no cycle is skipped as too soon.
var t0 = time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)

// configJSON is the fixture projects' configuration: n domains, each
// running the command `true` (a real child process, as a skill is, that
// does nothing), every domain scored (level 2), the saturation HALT off
// (a skill that never produces output would otherwise stop the loop after
// 15 cycles) and state commits on or off.
func configJSON(n int, commit bool) []byte {
	domains := map[string]any{}
	for i := 0; i < n; i++ {
		d := map[string]any{"weight": 1.0, "primary_skill": "/true", "mission_alignment": 1.0}
		if i == 0 {
			d["fallback"] = true
		}
		domains[fmt.Sprintf("d%d", i)] = d
	}
	cfg := map[string]any{
		"mission": "Keep the benchmark project healthy.",
		"domains": domains,
		"skills":  map[string]any{"/true": map[string]any{"command": []string{"true"}}},
		"safety": map[string]any{
			"skill_allowlist":            []string{"/true"},
			"min_cycle_interval_minutes": 30,
		},
		"saturation":             map[string]any{"auto_halt": false},
		"progressive_complexity": map[string]any{"current_level": 2},
		"git":                    map[string]any{"commit_state": commit, "push": false},
	}
	b, err := json.MarshalIndent(cfg, "", "  ")
	if err != nil {
		panic(err)
	}
	return append(b, '\n')
}

// gitIn runs git in dir. The identity is the repository's own (set by
// newRepo), so nothing depends on the user's global configuration.
func gitIn(ctx context.Context, dir string, stdin io.Reader, args ...string) error {
	cmd := exec.CommandContext(ctx, "git", append([]string{"-C", dir}, args...)...)
	cmd.Stdin = stdin
	cmd.Env = benchEnv()
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("git %s in %s: %v\n%s", strings.Join(args, " "), dir, err, tail(out.Bytes()))
	}
	return nil
}

// benchEnv is the environment of every process the benchmark starts: its
// own, without the git identity variables, which would override the
// fixture repositories' own identity (an empty GIT_AUTHOR_NAME makes
// every commit fail).
func benchEnv(extra ...string) []string {
	var env []string
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		switch name {
		case "GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL", "GIT_COMMITTER_NAME", "GIT_COMMITTER_EMAIL":
			continue
		}
		env = append(env, kv)
	}
	return append(env, extra...)
}

// newRepo creates a git repository on branch main with its own identity.
func newRepo(ctx context.Context, dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for _, args := range [][]string{
		{"init", "-q", "-b", "main"},
		{"config", "user.name", "ooda bench"},
		{"config", "user.email", "ooda-bench@example.invalid"},
		{"config", "commit.gpgsign", "false"},
	} {
		if err := gitIn(ctx, dir, nil, args...); err != nil {
			return err
		}
	}
	return nil
}

// newProject creates a project: a repository whose history is `history`
// small commits made with git fast-import (0: none), then the same two
// commits every project has, a README and config.json.
func newProject(ctx context.Context, dir string, history, domains int, commit bool) error {
	if err := newRepo(ctx, dir); err != nil {
		return err
	}
	if history > 0 {
		if err := gitIn(ctx, dir, historyStream(history), "fast-import", "--quiet"); err != nil {
			return err
		}
		// fast-import moves the branch only: bring the work tree to it.
		if err := gitIn(ctx, dir, nil, "reset", "-q", "--hard", "main"); err != nil {
			return err
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "README.md"), []byte("A benchmark project.\n"), 0o644); err != nil {
		return err
	}
	if err := gitIn(ctx, dir, nil, "add", "README.md"); err != nil {
		return err
	}
	if err := gitIn(ctx, dir, nil, "commit", "-q", "-m", "readme"); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "config.json"), configJSON(domains, commit), 0o644); err != nil {
		return err
	}
	if err := gitIn(ctx, dir, nil, "add", "config.json"); err != nil {
		return err
	}
	return gitIn(ctx, dir, nil, "commit", "-q", "-m", "ooda configuration")
}

// historyStream is a git fast-import stream of n commits on main, each
// rewriting one small file, a minute apart — a long-lived project's
// history in a second or two.
func historyStream(n int) io.Reader {
	pr, pw := io.Pipe()
	go func() {
		w := bufio.NewWriter(pw)
		start := t0.Add(-time.Duration(n) * time.Minute).Unix()
		for i := 1; i <= n; i++ {
			msg := fmt.Sprintf("change %d\n", i)
			body := fmt.Sprintf("line %d\n", i)
			fmt.Fprintf(w, "commit refs/heads/main\nmark :%d\ncommitter ooda bench <ooda-bench@example.invalid> %d +0000\ndata %d\n%s",
				i, start+int64(i)*60, len(msg), msg)
			if i > 1 {
				fmt.Fprintf(w, "from :%d\n", i-1)
			}
			fmt.Fprintf(w, "M 644 inline history.txt\ndata %d\n%s\n", len(body), body)
		}
		pw.CloseWithError(w.Flush())
	}()
	return pr
}

// copyTree copies a directory tree (regular files, directories, symlinks)
// to a new path dst, keeping permission bits.
func copyTree(src, dst string) error {
	return filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, p)
		if err != nil {
			return err
		}
		to := filepath.Join(dst, rel)
		info, err := d.Info()
		if err != nil {
			return err
		}
		switch {
		case d.IsDir():
			return os.MkdirAll(to, info.Mode().Perm()|0o700)
		case info.Mode()&fs.ModeSymlink != 0:
			target, err := os.Readlink(p)
			if err != nil {
				return err
			}
			return os.Symlink(target, to)
		case info.Mode().IsRegular():
			return copyFile(p, to, info.Mode().Perm())
		default:
			return fmt.Errorf("copy %s: not a regular file, directory or symlink", p)
		}
	})
}

func copyFile(src, dst string, perm fs.FileMode) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// fresh is a new copy of p's snapshot for one run, flushed to disk so the
// cycle measured next does not pay, in its own fsyncs, for the journal of
// the copy. Each run gets a directory of its own and none is deleted
// until the benchmark ends: deleting the previous copy right before a run
// leaves the file system's inode allocator stepping over that many
// recently freed inodes at every file the cycle creates, which charged
// the larger project of a pair (figure e's cycle 2000) for the harness's
// own deletions.
func (p *project) fresh() (string, error) {
	p.runs++
	dir := fmt.Sprintf("%s.run%d", p.dir, p.runs)
	if err := copyTree(p.snapshot, dir); err != nil {
		return "", err
	}
	syscall.Sync()
	return dir, nil
}

// tail returns the end of a command's output for an error message.
func tail(b []byte) string {
	const max = 2000
	if len(b) > max {
		b = b[len(b)-max:]
	}
	return strings.TrimSpace(string(b))
}

// treeSizes maps each regular file under root (relative path) to its size.
func treeSizes(root string) (map[string]int64, error) {
	out := map[string]int64{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.Type().IsRegular() {
			info, err := d.Info()
			if err != nil {
				return err
			}
			rel, _ := filepath.Rel(root, p)
			out[rel] = info.Size()
		}
		return nil
	})
	return out, err
}
