package state

import (
	"strings"
	"testing"
)

// keptCase is one list of one state file: a document holding an entry the
// program leaves alone and one it changes, how to read, change and write
// it, and what the changed entry must become.
type keptCase struct {
	name      string
	path      func(s *Store) string
	key       string // the list's key in the file
	unchanged string // written back as it is
	changed   string // as read
	want      string // after the change
	edit      func(t *testing.T, s *Store)
}

// Entries of goals.json, cost_ledger.json, outcomes.json, reflections.json, cascades.json and
// a domain's lens.json and lens_changelog.json that the program did not
// change are written back as the file held them — key order, 1.0, 0.70,
// nulls (also where the field is left out when empty) and unknown keys —
// and an entry it changed keeps all of that but the keys it changed
// (rewritten in place) and the keys it added (at the end).
func TestKeptMore_EntriesOfEveryFile(t *testing.T) {
	cases := []keptCase{{
		name: "goals", key: "goals",
		path:      func(s *Store) string { return s.EvolvePath(GoalsFile) },
		unchanged: `{"status":"achieved","id":"G0","name":"Ship","target":1.0,"current":1,"direction":"increase","initial_value":null,"progress":1.0,"title":null,"metric_command":null,"related_domains":["backlog"],"created_at":"2026-01-01T00:00:00Z","updated_at":null}`,
		changed:   `{"status":"active","id":"G1","name":"Reduce cost","description":"Hosting below $20 & falling","target":20.0,"current":65,"unit":"USD/month","direction":"decrease","initial_value":65.0,"progress":0.0,"current_value":null,"related_domains":["service_health"],"created_at":"2026-01-01T00:00:00Z","updated_at":"2026-01-01T00:00:00Z"}`,
		want:      `{"status":"active","id":"G1","name":"Reduce cost","description":"Hosting below $20 & falling","target":20.0,"current":65,"unit":"USD/month","direction":"decrease","initial_value":65.0,"progress":0.25,"current_value":5,"related_domains":["service_health"],"created_at":"2026-01-01T00:00:00Z","updated_at":"2026-01-01T00:00:00Z","last_activity":"2026-04-14T09:00:00Z"}`,
		edit: func(t *testing.T, s *Store) {
			g := loadClean(t, s).Goals
			v, p := 5.0, 0.25
			g.Goals[1].CurrentValue, g.Goals[1].Progress, g.Goals[1].LastActivity = &v, &p, "2026-04-14T09:00:00Z"
			if err := s.SaveGoals(g); err != nil {
				t.Fatal(err)
			}
		},
	}, {
		name: "outcomes", key: "entries",
		path:      func(s *Store) string { return s.EvolvePath(OutcomesFile) },
		unchanged: `{"cycle_id":6,"timestamp":"2026-04-13T06:00:00Z","domain":"service_health","skill":"/scan-health","declared_goal":null,"result_type":"observation","artifact_score":null,"weakest_dimension":null,"dimension_scores":null,"quality_multiplier":1.0,"on_mission":null,"cycle_mode":"feature","pr_number":null,"verifier_verdict":null}`,
		changed:   `{"cycle_id":7,"timestamp":"2026-04-13T07:00:00Z","domain":"backlog","skill":"/plan-backlog","declared_goal":"G1","result_type":"pr_created","artifact_score":null,"quality_multiplier":0.50,"on_mission":true,"pr_number":12,"score":null}`,
		want:      `{"cycle_id":7,"timestamp":"2026-04-13T07:00:00Z","domain":"backlog","skill":"/plan-backlog","declared_goal":"G1","result_type":"pr_merged","artifact_score":null,"quality_multiplier":0.8,"on_mission":true,"pr_number":12,"score":null}`,
		edit: func(t *testing.T, s *Store) {
			o := loadClean(t, s).Outcomes
			o.Entries[1].ResultType, o.Entries[1].QualityMult = "pr_merged", 0.8
			if err := s.SaveOutcomes(o); err != nil {
				t.Fatal(err)
			}
		},
	}, {
		name: "cost ledger", key: "entries",
		path:      func(s *Store) string { return s.EvolvePath(CostLedgerFile) },
		unchanged: `{"timestamp":"2026-04-14T04:00:00Z","cycle_id":11,"skill":"/plan-backlog","chain":["/plan-backlog"],"estimated_usd":0.030,"model":null,"synthetic":false}`,
		changed:   `{"cycle_id":"#12","timestamp":"2026-04-14T06:00:00Z","skill":"/scan-health","chain":null,"estimated_usd":0.04,"synthetic":false}`,
		want:      `{"cycle_id":"#12","timestamp":"2026-04-14T06:00:00Z","skill":"/scan-health","chain":null,"estimated_usd":0.05,"synthetic":false}`,
		edit: func(t *testing.T, s *Store) {
			l := loadClean(t, s).CostLedger
			l.Entries[1].EstimatedUSD = 0.05
			if err := s.SaveCostLedger(*l); err != nil {
				t.Fatal(err)
			}
		},
	}, {
		name: "reflections", key: "reflections",
		path:      func(s *Store) string { return s.EvolvePath(ReflectionsFile) },
		unchanged: `{"lesson":"Skip backlog after two no_remote results.","cycle":3,"timestamp":"2026-04-13T03:00:00Z","domain":"backlog","skill":"/plan-backlog","result":"success","verdict":"miss","critique":"Chose backlog; no remote.","status":"applied","weight":1.0}`,
		changed:   `{"cycle":4,"timestamp":"2026-04-13T04:00:00Z","domain":"service_health","skill":"/scan-health","result":null,"verdict":"hit","critique":"As expected.","lesson":"Keep health first.","status":"open","confidence":0.90}`,
		want:      `{"cycle":4,"timestamp":"2026-04-13T04:00:00Z","domain":"service_health","skill":"/scan-health","result":null,"verdict":"hit","critique":"As expected.","lesson":"Keep health first.","status":"applied","confidence":0.90}`,
		edit: func(t *testing.T, s *Store) {
			snap := loadClean(t, s)
			r := snap.Reflections
			r.Reflections[1].Status = "applied"
			if err := s.SaveReflections(r); err != nil {
				t.Fatal(err)
			}
		},
	}, {
		name: "cascades", key: "cascades",
		path:      func(s *Store) string { return s.EvolvePath(CascadesFile) },
		unchanged: `{"id":"C-2026-04-12-001","status":"resolved","event_type":"schema_change","source_domain":"backlog","affected_domains":["test_coverage"],"details":null,"created_at":"2026-04-12T00:00:00Z","resolved_at":"2026-04-12T06:00:00Z","bonus_applied_to":[]}`,
		changed:   `{"id":"C-2026-04-13-001","event_type":"entity_rename","source_domain":"service_health","affected_domains":["backlog"],"details":"Agency renamed: X -> Y","status":"pending","created_at":"2026-04-13T00:00:00Z","resolved_at":null,"weight":3.0}`,
		want:      `{"id":"C-2026-04-13-001","event_type":"entity_rename","source_domain":"service_health","affected_domains":["backlog"],"details":"Agency renamed: X -> Y","status":"resolved","created_at":"2026-04-13T00:00:00Z","resolved_at":"2026-04-14T09:00:00Z","weight":3.0,"bonus_applied_to":["backlog"]}`,
		edit: func(t *testing.T, s *Store) {
			c := loadClean(t, s).Cascades
			c.Cascades[1].Status, c.Cascades[1].ResolvedAt = "resolved", "2026-04-14T09:00:00Z"
			c.Cascades[1].BonusAppliedTo = []string{"backlog"}
			if err := s.SaveCascades(c); err != nil {
				t.Fatal(err)
			}
		},
	}, {
		name: "lens", key: "focus_items",
		path:      func(s *Store) string { return s.LensPath("service_health") },
		unchanged: `{"confidence":0.70,"item":"p95 latency","value":null,"source":"operator"}`,
		changed:   `{"item":"error rate","confidence":0.30,"value":null,"first_seen_cycle":4}`,
		want:      `{"item":"error rate","confidence":0.4,"value":null,"first_seen_cycle":4}`,
		edit: func(t *testing.T, s *Store) {
			l, found, err := s.ReadLens("service_health")
			if err != nil || !found {
				t.Fatalf("lens: found %v, %v", found, err)
			}
			l.FocusItems[1].Confidence = 0.4
			if err := s.SaveLens("service_health", l); err != nil {
				t.Fatal(err)
			}
		},
	}, {
		name: "lens changelog", key: "entries",
		path:      func(s *Store) string { return s.LensChangelogPath("service_health") },
		unchanged: `{"cycle":4,"timestamp":"2026-04-13T04:00:00Z","domain":"service_health","item":"error rate","change_type":"added","before":null,"after":0.30,"delta":0.30,"reason":"high variance"}`,
		changed:   `{"item":"p95 latency","cycle":5,"timestamp":"2026-04-13T05:00:00Z","domain":"service_health","change_type":"promoted","before":0.50,"after":0.60,"delta":0.10,"reason":"3 confirmations","by":"operator"}`,
		want:      `{"item":"p95 latency","cycle":5,"timestamp":"2026-04-13T05:00:00Z","domain":"service_health","change_type":"promoted","before":0.50,"after":0.60,"delta":0.10,"reason":"3 confirmations (reviewed)","by":"operator"}`,
		edit: func(t *testing.T, s *Store) {
			l, err := s.ReadLensChangelog("service_health")
			if err != nil {
				t.Fatal(err)
			}
			l.Entries[1].Reason += " (reviewed)"
			if err := s.SaveLensChangelog("service_health", l); err != nil {
				t.Fatal(err)
			}
		},
	}}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := New(t.TempDir())
			// Each file as the original writes it, with the list's
			// entries spread over lines as a person would indent them.
			writeFile(t, c.path(s), `{"schema_version": "1.0.0", "domain": "service_health", "`+c.key+`": [
			  `+c.unchanged+`,
			  `+c.changed+`
			], "note": "kept"}`)

			// Read and written back unchanged: both entries as read.
			rewrite := func() {
				switch c.name {
				case "goals":
					mustOK(t, s.SaveGoals(loadClean(t, s).Goals))
				case "cost ledger":
					mustOK(t, s.SaveCostLedger(*loadClean(t, s).CostLedger))
				case "outcomes":
					mustOK(t, s.SaveOutcomes(loadClean(t, s).Outcomes))
				case "reflections":
					mustOK(t, s.SaveReflections(loadClean(t, s).Reflections))
				case "cascades":
					mustOK(t, s.SaveCascades(loadClean(t, s).Cascades))
				case "lens":
					l, _, e := s.ReadLens("service_health")
					mustOK(t, e)
					mustOK(t, s.SaveLens("service_health", l))
				case "lens changelog":
					l, e := s.ReadLensChangelog("service_health")
					mustOK(t, e)
					mustOK(t, s.SaveLensChangelog("service_health", l))
				}
			}
			rewrite()
			saved := []byte(readString(t, c.path(s)))
			keptLists(t, "written back unread", keptElems(t, saved, c.key),
				[]string{keptCompact(t, []byte(c.unchanged)), keptCompact(t, []byte(c.changed))})

			c.edit(t, s)
			saved = []byte(readString(t, c.path(s)))
			keptLists(t, "after the change", keptElems(t, saved, c.key),
				[]string{keptCompact(t, []byte(c.unchanged)), keptCompact(t, []byte(c.want))})
			if !strings.Contains(string(saved), `"note": "kept"`) {
				t.Errorf("the file's unknown key is gone:\n%s", saved)
			}

			// And once more: what the change wrote is now as read.
			rewrite()
			again := []byte(readString(t, c.path(s)))
			keptLists(t, "read and written again", keptElems(t, again, c.key), keptElems(t, saved, c.key))
		})
	}
}

func mustOK(t *testing.T, e error) {
	t.Helper()
	if e != nil {
		t.Fatal(e)
	}
}
