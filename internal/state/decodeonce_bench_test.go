package state

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
)

// stateOf1000Domains is the state files of a project with 1,000 domains
// after a few cycles, shaped as ooda writes them: a memo intervention and
// a lens per domain, the decision log, gaps, outcomes and costs.
func stateOf1000Domains() map[string][]byte {
	const domains = 1000
	var iv, lenses []string
	for i := range domains {
		iv = append(iv, fmt.Sprintf(`{"domain": "d%04d", "delta": 1, "type": "starvation", "reason": "No executions in last 10 cycles",
      "created_at_cycle": 10, "expires_after_cycles": 3, "applied_count": 0}`, i))
		lenses = append(lenses, fmt.Sprintf(`{"schema_version": "1.0.0", "domain": "d%04d", "last_updated": "2026-03-01T02:00:00Z",
  "focus_items": [{"item": "latency", "confidence": 0.6}], "learned_thresholds": [], "discovered_signals": [],
  "evidence": [{"timestamp": "2026-03-01T02:00:00Z", "cycle": 3, "source": "ooda 5-E", "observation": "no domain state file",
    "alerts": [], "items_added": 0, "confidence_changes": 0}], "deprecated_items": []}`, i))
	}
	var hist, decisions, outcomes, costs, gaps []string
	for c := 1; c <= 20; c++ {
		hist = append(hist, fmt.Sprintf(`{"timestamp": "2026-03-01T%02d:00:00Z", "cycle": %d, "type": "saturation", "message": "Observation saturation"}`, c%24, c))
		decisions = append(decisions, fmt.Sprintf(`{"cycle": %d, "timestamp": "2026-03-01T%02d:00:00Z", "selected_domain": "d%04d", "score": 21.5,
      "action": "execute", "chain_executed": ["/noop"], "chain_count": 1, "pr_number": null}`, c, c%24, c))
		outcomes = append(outcomes, fmt.Sprintf(`{"cycle_id": %d, "timestamp": "2026-03-01T%02d:00:00Z", "domain": "d%04d", "skill": "/noop",
      "result": "futile", "result_type": "futile", "score": 21.5, "quality_multiplier": 0, "pr_number": null, "had_output": false}`, c, c%24, c))
		costs = append(costs, fmt.Sprintf(`{"cycle_id": %d, "timestamp": "2026-03-01T%02d:00:00Z", "skill": "/noop", "chain": ["/noop"], "estimated_usd": 0.02}`, c, c%24))
	}
	for g := range 50 {
		gaps = append(gaps, fmt.Sprintf(`{"name": "gap_%d", "type": "coverage_gap", "domain": "d%04d", "frequency": 2, "first_seen_cycle": 1, "last_seen_cycle": 9, "resolved": false}`, g, g))
	}
	files := map[string][]byte{
		MemosFile: []byte(`{"schema_version": "1.1.0", "score_adjustments": {}, "interventions": [` + strings.Join(iv, ",\n") +
			`], "history": [` + strings.Join(hist, ",\n") + `], "last_memo": "Observation saturation"}`),
		StateFile: []byte(`{"cycle_count": 20, "last_cycle": "2026-03-01T20:00:00Z", "cycle_in_progress": false,
  "domain_last_run": {"d0001": "2026-03-01T01:00:00Z"}, "decision_log": [` + strings.Join(decisions, ",\n") + `]}`),
		OutcomesFile:   []byte(`{"schema_version": "1.0.0", "entries": [` + strings.Join(outcomes, ",\n") + `]}`),
		CostLedgerFile: []byte(`{"schema_version": "1.0.0", "date": "2026-03-01", "entries": [` + strings.Join(costs, ",\n") + `], "total_estimated_usd": 0.4}`),
		SkillGapsFile:  []byte(`{"schema_version": "1.0.0", "gaps": [` + strings.Join(gaps, ",\n") + `]}`),
	}
	for i, l := range lenses {
		files[fmt.Sprintf("d%04d/lens.json", i)] = []byte(l)
	}
	return files
}

// decodeAll decodes every file of files through its model.
func decodeAll(b *testing.B, files map[string][]byte) {
	for name, data := range files {
		dec, ok := fileModels[filepath.Base(name)]
		if !ok {
			continue
		}
		if _, err := dec(data); err != nil && json.Valid(data) && filepath.Base(filepath.Dir(name)) != "fuzz" {
			b.Fatalf("%s: %v", name, err)
		}
	}
}

// benchDecoders runs the benchmark of files with the decoder that reads
// each object once and with the one it replaced (the oracle), side by side.
func benchDecoders(b *testing.B, files map[string][]byte) {
	size := 0
	for _, d := range files {
		size += len(d)
	}
	for _, mode := range []string{"once", "twice"} {
		b.Run(mode, func(b *testing.B) {
			if mode == "twice" {
				saved := unmarshalKeep
				unmarshalKeep = unmarshalKeepTwice
				defer func() { unmarshalKeep = saved }()
			}
			b.SetBytes(int64(size))
			b.ReportAllocs()
			for b.Loop() {
				decodeAll(b, files)
			}
		})
	}
}

// BenchmarkDecodeOnce_1000Domains decodes the state files of a
// 1,000-domain project once per iteration.
func BenchmarkDecodeOnce_1000Domains(b *testing.B) { benchDecoders(b, stateOf1000Domains()) }

// BenchmarkDecodeOnce_Compat decodes every state file of the original
// project's fixtures once per iteration.
func BenchmarkDecodeOnce_Compat(b *testing.B) { benchDecoders(b, decodeOnceCorpus(b)) }
