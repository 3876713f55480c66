package engine

import (
	"context"
	"io"
	"os"
	"path/filepath"
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
	cfg := `{
  "mission": "Keep the example service healthy.",
  "domains": {
    "health": {"weight": 1.0, "primary_skill": "/noop", "fallback": true, "mission_alignment": 1.0}
  },
  "skills": {"/noop": {"builtin": "noop"}},
  "safety": {"skill_allowlist": ["/noop"]},
  "saturation": {"auto_halt": false}
}`
	if err := writeFileB(filepath.Join(dir, "config.json"), cfg); err != nil {
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
