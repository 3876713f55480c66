package engine

import (
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ooda-loop/ooda/internal/clock"
	"github.com/ooda-loop/ooda/internal/skills"
)

// BenchmarkRunCycle_Noop is one complete cycle in-process — config
// validation, the lock, every state read, Decide, the built-in noop skill
// and every Step 6 write with its fsyncs — without the process start that
// the cmd/ooda benchmark adds. Profile it with -cpuprofile.
func BenchmarkRunCycle_Noop(b *testing.B) {
	dir := b.TempDir()
	if err := writeFileB(filepath.Join(dir, "config.json"), benchConfig); err != nil {
		b.Fatal(err)
	}
	now := t0
	for b.Loop() {
		now = now.Add(time.Hour)
		if _, err := RunCycle(context.Background(), Options{Project: dir, Clock: clock.NewFixed(now), Registry: skills.Registry(), Out: io.Discard}); err != nil {
			b.Fatal(err)
		}
	}
}

func writeFileB(p, body string) error { return os.WriteFile(p, []byte(body), 0o644) }

// benchConfig is the one-domain project of the cycle benchmarks.
const benchConfig = `{
  "mission": "Keep the example service healthy.",
  "domains": {
    "health": {"weight": 1.0, "primary_skill": "/noop", "fallback": true, "mission_alignment": 1.0}
  },
  "skills": {"/noop": {"builtin": "noop"}},
  "safety": {"skill_allowlist": ["/noop"]},
  "saturation": {"auto_halt": false}
}`

// BenchmarkRunCycle_Commit is BenchmarkRunCycle_Noop with
// git.commit_state on, in a repository: what a state commit adds to a
// cycle, in time and in allocations (-benchmem, -memprofile).
func BenchmarkRunCycle_Commit(b *testing.B) {
	dir := b.TempDir()
	cfg := strings.Replace(benchConfig, `"saturation"`, `"git": {"commit_state": true}, "saturation"`, 1)
	if err := writeFileB(filepath.Join(dir, "config.json"), cfg); err != nil {
		b.Fatal(err)
	}
	for k, v := range map[string]string{"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.invalid", "GIT_COMMITTER_NAME": "t",
		"GIT_COMMITTER_EMAIL": "t@example.invalid", "GIT_CONFIG_NOSYSTEM": "1", "HOME": dir} {
		b.Setenv(k, v)
	}
	for _, args := range [][]string{{"init", "--quiet", "-b", "main"}, {"add", "-A"}, {"commit", "--quiet", "-m", "initial"}} {
		if out, err := exec.Command("git", append([]string{"-C", dir}, args...)...).CombinedOutput(); err != nil {
			b.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	now := t0
	for b.Loop() {
		now = now.Add(time.Hour)
		res, err := RunCycle(context.Background(), Options{Project: dir, Clock: clock.NewFixed(now), Registry: skills.Registry(), Out: io.Discard})
		if err != nil {
			b.Fatal(err)
		}
		if !res.Committed && res.Cycle > 1 {
			b.Fatalf("cycle %d not committed", res.Cycle)
		}
	}
}
