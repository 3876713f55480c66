package reflect

import (
	"testing"
	"time"

	"github.com/ooda-loop/ooda/internal/state"
)

// TestStep6C4_EpisodeDueIsWhatWriteEpisodeChecks: EpisodeDue is false
// exactly when WriteEpisode finds the previous week's episode kept, across
// week and year boundaries, so a cycle that skips WriteEpisode on its word
// never misses an episode.
func TestStep6C4_EpisodeDueIsWhatWriteEpisodeChecks(t *testing.T) {
	start := time.Date(2026, 12, 20, 0, 0, 0, 0, time.UTC)
	for h := 0; h < 24*30; h += 7 {
		now := start.Add(time.Duration(h) * time.Hour)
		// A record in the previous week, so an episode is written when due.
		from, _ := memPreviousWeek(now)
		log := []CycleRecord{{Cycle: 1, Timestamp: from.Add(time.Hour), Domain: "a", ResultType: "futile"}}
		none := state.Episodes{}
		if !EpisodeDue(none, now) {
			t.Fatalf("%s: due with no episodes", now)
		}
		eps, ep := WriteEpisode(EpisodeInput{Now: now, Episodes: none, Log: log})
		if ep == nil {
			t.Fatalf("%s: no episode written", now)
		}
		if EpisodeDue(eps, now) {
			t.Fatalf("%s: still due after %s was written", now, ep.ID)
		}
		if _, again := WriteEpisode(EpisodeInput{Now: now, Episodes: eps, Log: log}); again != nil {
			t.Fatalf("%s: written twice", now)
		}
	}
}
