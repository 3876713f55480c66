package state

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// The original project's two gap shapes, as its 5-A and its state design
// write them, with a resolved one and an unknown key.
const originalGaps = `{
  "schema_version": "1.0.0",
  "gaps": [
    {"id": "gap-001", "description": "No skill to analyze funnel drop-off", "detected_at": "2026-01-15T14:30:00Z",
     "detected_in_cycle": 5, "ooda_phase": "observe", "frequency": 3, "last_seen_cycle": 12,
     "related_domain": "ux_evolution", "proposed_skill": "scan-funnel", "resolved": false, "resolved_at": null, "resolution": null},
    {"name": "execution_error_scan", "type": "execution_failure", "detail": "exit status 1",
     "frequency": 2, "first_seen": "2026-04-01T00:00:00Z", "last_seen": "2026-04-02T00:00:00Z", "resolved": false, "owner": "ops"},
    {"id": "gap-002", "description": "No load test", "frequency": 1.0, "resolved": true,
     "resolved_at": "2026-04-05T00:00:00Z", "resolution": "skill_added"}
  ]
}`

func decodeGaps(t *testing.T, s string) SkillGaps {
	t.Helper()
	var g SkillGaps
	if err := json.Unmarshal([]byte(s), &g); err != nil {
		t.Fatal(err)
	}
	return g
}

func gapEntries(t *testing.T, g SkillGaps) []map[string]json.RawMessage {
	t.Helper()
	b, err := json.Marshal(g)
	if err != nil {
		t.Fatal(err)
	}
	var out struct {
		Gaps []map[string]json.RawMessage `json:"gaps"`
	}
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out.Gaps
}

func rawEntries(t *testing.T, s string) []json.RawMessage {
	t.Helper()
	var out struct {
		Gaps []json.RawMessage `json:"gaps"`
	}
	if err := json.Unmarshal([]byte(s), &out); err != nil {
		t.Fatal(err)
	}
	return out.Gaps
}

func TestSkillGaps_OriginalShapesReadAndKeptAsWritten(t *testing.T) {
	g := decodeGaps(t, originalGaps)
	if len(g.Gaps) != 3 {
		t.Fatalf("gaps = %d, want 3", len(g.Gaps))
	}
	if k := g.Gaps[0].Key(); k != "gap-001" {
		t.Errorf("key of an id-only gap = %q", k)
	}
	if k := g.Gaps[1].Key(); k != "execution_error_scan" {
		t.Errorf("key of a named gap = %q", k)
	}
	if g.Gaps[0].Text() != "No skill to analyze funnel drop-off" || g.Gaps[0].FirstSeenAt() != "2026-01-15T14:30:00Z" {
		t.Errorf("state-design gap read as %+v", g.Gaps[0])
	}
	if g.Gaps[2].Frequency != 1 || !g.Gaps[2].Resolved {
		t.Errorf("resolved gap read as %+v", g.Gaps[2])
	}
	b, err := json.Marshal(g)
	if err != nil {
		t.Fatal(err)
	}
	before, after := rawEntries(t, originalGaps), rawEntries(t, string(b))
	for i := range before {
		if squeezeFixture(t, before[i]) != string(after[i]) {
			t.Errorf("gaps[%d] rewritten:\n got %s\nwant %s", i, after[i], squeezeFixture(t, before[i]))
		}
	}
}

func squeezeFixture(t *testing.T, b []byte) string {
	t.Helper()
	var sb strings.Builder
	for _, line := range strings.Split(string(b), "\n") {
		sb.WriteString(strings.TrimSpace(line))
	}
	s := sb.String()
	// The fixtures put one space after ':' and ','; the encoder writes none.
	s = strings.ReplaceAll(s, `": `, `":`)
	return strings.ReplaceAll(s, `, "`, `,"`)
}

func TestSkillGaps_RecordUpdatesAnOriginalGapInItsOwnShape(t *testing.T) {
	g := decodeGaps(t, originalGaps)
	g.Record(GapEvent{Name: "gap-001", Type: "coverage_gap", Detail: "still no funnel skill", Cycle: 20}, testNow)
	g.Record(GapEvent{Name: "execution_error_scan", Type: "execution_failure", Detail: "exit status 2", Cycle: 20}, testNow)
	if len(g.Gaps) != 3 {
		t.Fatalf("a recurring gap was added again: %d gaps", len(g.Gaps))
	}
	e := gapEntries(t, g)
	// gap-001 has last_seen_cycle and description, not last_seen or detail.
	if string(e[0]["frequency"]) != "4" || string(e[0]["last_seen_cycle"]) != "20" || string(e[0]["description"]) != `"still no funnel skill"` {
		t.Errorf("gap-001 = %v", e[0])
	}
	for _, k := range []string{"last_seen", "detail", "name", "first_seen", "type"} {
		if _, ok := e[0][k]; ok {
			t.Errorf("gap-001 got %q, a key it did not have", k)
		}
	}
	// The 5-A gap has last_seen and detail, not the state design's keys.
	if string(e[1]["frequency"]) != "3" || string(e[1]["last_seen"]) != `"`+FormatTime(testNow)+`"` || string(e[1]["detail"]) != `"exit status 2"` {
		t.Errorf("execution_error_scan = %v", e[1])
	}
	for _, k := range []string{"last_seen_cycle", "description", "id", "related_domain", "resolved_at"} {
		if _, ok := e[1][k]; ok {
			t.Errorf("execution_error_scan got %q, a key it did not have", k)
		}
	}
	if string(e[1]["owner"]) != `"ops"` {
		t.Errorf("unknown key lost: %v", e[1])
	}
}

func TestSkillGaps_RecurringResolvedGapIsOpenedAgain(t *testing.T) {
	g := decodeGaps(t, originalGaps)
	g.Record(GapEvent{Name: "gap-002", Detail: "No load test again", Cycle: 30}, testNow)
	e := gapEntries(t, g)[2]
	if string(e["resolved"]) != "false" || string(e["resolved_at"]) != "null" || string(e["resolution"]) != "null" || string(e["frequency"]) != "2" {
		t.Errorf("reopened gap = %v", e)
	}
}

func TestSkillGaps_NewGapCarriesBothShapes(t *testing.T) {
	var g SkillGaps
	g.Record(GapEvent{Name: "domain_starvation_backlog", Type: "coverage_gap", Detail: "Domain not executed in 10 cycles", Domain: "backlog", Cycle: 12}, testNow)
	e := gapEntries(t, g)[0]
	want := map[string]string{
		"id": `"gap-domain_starvation_backlog"`, "name": `"domain_starvation_backlog"`, "type": `"coverage_gap"`,
		"description": `"Domain not executed in 10 cycles"`, "detail": `"Domain not executed in 10 cycles"`,
		"detected_at": `"` + FormatTime(testNow) + `"`, "detected_in_cycle": "12", "ooda_phase": `"strategize"`,
		"frequency": "1", "first_seen": `"` + FormatTime(testNow) + `"`, "last_seen": `"` + FormatTime(testNow) + `"`,
		"last_seen_cycle": "12", "related_domain": `"backlog"`, "proposed_skill": "null", "resolved": "false",
		"resolved_at": "null", "resolution": "null",
	}
	for k, v := range want {
		if string(e[k]) != v {
			t.Errorf("%s = %s, want %s", k, e[k], v)
		}
	}
	if len(e) != len(want) {
		t.Errorf("entry has %d keys, want %d: %v", len(e), len(want), e)
	}
}

func TestSkillGaps_LoopBreakIsTheOriginals6C8Gap(t *testing.T) {
	var g SkillGaps
	g.Record(GapEvent{Name: "x", Cycle: 1}, testNow)
	g.RecordLoopBreak(14, []int{11, 12, 13}, false, testNow)
	if len(g.Gaps) != 2 {
		t.Fatalf("gaps = %d", len(g.Gaps))
	}
	lb := g.Gaps[1]
	if lb.ID != "gap-cost-ledger-autopatch-14" || lb.Type != GapLoopBreak || !lb.IsLoopBreak() || lb.Frequency != 3 || lb.OODAPhase != "meta" ||
		*lb.DetectedInCycle != 14 || *lb.LastSeenCycle != 14 || lb.RelatedDomain != nil || lb.ProposedSkill != nil {
		t.Errorf("loop-break gap = %+v", lb)
	}
	if lb.Description != "cost_ledger missing 3 entries in range 11..13 — backfilled with synthetic entries" {
		t.Errorf("description = %q", lb.Description)
	}
	// The same cycle backfilling again updates its entry; another cycle
	// adds its own, as the original does.
	g.RecordLoopBreak(14, []int{13}, true, testNow)
	g.RecordLoopBreak(15, []int{15}, false, testNow.Add(time.Hour))
	if len(g.Gaps) != 3 || g.Gaps[1].Frequency != 1 || !strings.HasSuffix(g.Gaps[1].Description, "were not backfilled") ||
		g.Gaps[2].ID != "gap-cost-ledger-autopatch-15" || !strings.Contains(g.Gaps[2].Description, "1 entry in range 15..15") {
		t.Errorf("after a second backfill: %+v", g.Gaps)
	}
}

func TestGap_ProposalNameIsNeverEmptyAndNeverShared(t *testing.T) {
	gaps := []Gap{
		{Name: "execution_error_scan"},
		{Name: "a/b"},
		{Name: "a_b"},
		{ID: "gap-001"},
		{ID: "../../etc/passwd"},
		{Name: ".hidden"},
		{Description: "no name and no id", DetectedAt: "2026-01-01T00:00:00Z"},
		{Description: "another without name or id", DetectedAt: "2026-01-01T00:00:00Z"},
		{Name: strings.Repeat("x", 300)},
		{Name: strings.Repeat("x", 300) + "y"},
	}
	seen := map[string]string{}
	for _, g := range gaps {
		n := g.ProposalName()
		if n == "" || n != safeName(n) || strings.HasPrefix(n, ".") || len(n) > 100 {
			t.Errorf("proposal name of %q = %q: empty, not plain, hidden or too long", g.Key(), n)
		}
		if other, ok := seen[n]; ok {
			t.Errorf("gaps %q and %q share the proposal %q", other, g.Key()+g.Description, n)
		}
		seen[n] = g.Key() + g.Description
	}
	if n := (Gap{Name: "execution_error_scan"}).ProposalName(); n != "execution_error_scan" {
		t.Errorf("a plain name is changed: %q", n)
	}
	if n := (Gap{ID: "gap-001"}).ProposalName(); n != "gap-001" {
		t.Errorf("an id-only gap's proposal = %q, want its id", n)
	}
}

// A recurring gap whose related_domain was null learns it from the event;
// one that names a domain keeps it, and one without the key gets none.
func TestSkillGaps_RecurrenceFillsANullRelatedDomain(t *testing.T) {
	g := decodeGaps(t, `{"gaps": [
	  {"id": "gap-a", "frequency": 1, "related_domain": null},
	  {"id": "gap-b", "frequency": 1, "related_domain": "ux"},
	  {"name": "c", "frequency": 1}]}`)
	for _, k := range []string{"gap-a", "gap-b", "c"} {
		g.Record(GapEvent{Name: k, Domain: "api", Cycle: 3}, testNow)
	}
	e := gapEntries(t, g)
	if string(e[0]["related_domain"]) != `"api"` || string(e[1]["related_domain"]) != `"ux"` {
		t.Errorf("related_domain: %s, %s", e[0]["related_domain"], e[1]["related_domain"])
	}
	if _, ok := e[2]["related_domain"]; ok {
		t.Errorf("a 5-A gap got related_domain: %v", e[2])
	}
}

// A null among the gaps was read as an empty gap, counted among the
// unresolved ones and never reported: it is a value that is not an entry,
// reported and kept as written.
func TestSkillGaps_NullElementIsReportedAndKept(t *testing.T) {
	s := New(t.TempDir())
	writeFile(t, s.EvolvePath(SkillGapsFile), `{"gaps": [null, {"id": "gap-1", "frequency": 1, "resolved": false}]}`)
	snap, err := s.Load()
	if err != nil {
		t.Fatal(err)
	}
	if len(snap.SkillGaps.Gaps) != 1 || snap.SkillGaps.Gaps[0].ID != "gap-1" {
		t.Fatalf("gaps = %+v", snap.SkillGaps.Gaps)
	}
	if all := strings.Join(snap.Warnings, "\n"); !strings.Contains(all, "/gaps/0: null is not an object") {
		t.Errorf("no warning for the null:\n%s", all)
	}
	snap.SkillGaps.Record(GapEvent{Name: "x", Cycle: 2}, testNow)
	b, _ := json.Marshal(snap.SkillGaps)
	if !strings.Contains(string(b), `"gaps":[null,`) {
		t.Errorf("the null was not kept in place: %s", b)
	}
}
