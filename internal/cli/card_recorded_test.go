package cli

import (
	"context"
	"io"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/ooda-loop/ooda/internal/clock"
	"github.com/ooda-loop/ooda/internal/config"
	"github.com/ooda-loop/ooda/internal/engine"
	"github.com/ooda-loop/ooda/internal/present"
	"github.com/ooda-loop/ooda/internal/skills"
	"github.com/ooda-loop/ooda/internal/state"
)

// Real cycles of both examples, each followed by its card built from the
// values the cycle handed over and from the files it wrote: the same
// card, the same corrupt files, every value handed over.
func TestCycleCardFromRecordedIsTheFilesCard(t *testing.T) {
	kinds := map[string]int{}
	for _, ex := range []string{exampleQuickstart, exampleService} {
		dir := filepath.Join(t.TempDir(), ex)
		var out, errb strings.Builder
		if code := Main([]string{"demo", "--example", ex, "--dir", dir, "--cycles", "3"}, strings.NewReader(""), &out, &errb); code != 0 {
			t.Fatalf("%s: exit %d\n%s\n%s", ex, code, out.String(), errb.String())
		}
		cfgPath := filepath.Join(dir, "config.json")
		st := state.New(dir)
		snap, err := st.LoadFiles(state.StateFile)
		if err != nil || snap.State.LastCycle == nil {
			t.Fatalf("%s: no last cycle: %v", ex, err)
		}
		now, _ := state.ParseTime(*snap.State.LastCycle)
		completed := 0
		for i := 0; i < 12; i++ {
			now = now.Add(7 * time.Hour)
			cfg, err := config.LoadProject(cfgPath, dir)
			if err != nil {
				t.Fatal(err)
			}
			// The lens changelogs read ahead, as `ooda cycle` reads them
			// for many domains.
			var lens *present.LensPrefetch
			after := func() { lens = present.PrefetchLensChangelogs(cfg, state.ForConfig(dir, cfg)) }
			res, err := engine.RunCycle(context.Background(), engine.Options{Project: dir, ConfigPath: cfgPath, Config: cfg, Clock: clock.NewFixed(now), Registry: skills.Registry(), Out: io.Discard, AfterAct: after})
			if err != nil || res.Status != engine.StatusCompleted {
				if lens != nil {
					present.WaitLensPrefetch(lens)
				}
				continue
			}
			if lens == nil {
				t.Fatalf("%s cycle %d: completed without AfterAct", ex, res.Cycle)
			}
			completed++
			rec := recordedOf(res)
			if rec.Entry == nil || rec.Confidence == nil || rec.Memos == nil || rec.CostLedger == nil {
				t.Fatalf("%s cycle %d: values not handed over: %+v", ex, res.Cycle, res.Recorded)
			}
			st := state.ForConfig(dir, cfg)
			want := present.BuildCard(cfg, st)
			got := present.BuildCardFrom(cfg, st, rec)
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("%s cycle %d: card from the recorded values:\n%+v\n%q\nfrom the files:\n%+v\n%q", ex, res.Cycle, got.Card, got.Corrupt, want.Card, want.Corrupt)
			}
			rec.Lens, rec.Written = lens, res.Written
			if got := present.BuildCardFrom(cfg, st, rec); !reflect.DeepEqual(got, want) {
				t.Fatalf("%s cycle %d: card with the lens changelogs read ahead:\n%+v\n%q\nfrom the files:\n%+v\n%q", ex, res.Cycle, got.Card, got.Corrupt, want.Card, want.Corrupt)
			}
			for _, l := range got.Card.Learn {
				kinds[l.Kind]++
			}
		}
		if completed == 0 {
			t.Fatalf("%s: no cycle completed", ex)
		}
	}
	t.Logf("LEARN lines compared: %v", kinds)
}
