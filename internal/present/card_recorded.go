package present

import (
	"encoding/json"
	"math"

	"github.com/ooda-loop/ooda/internal/secret"
	"github.com/ooda-loop/ooda/internal/state"
)

// Recorded holds what a cycle has just written to the files the card
// reads, as the cycle held the values: the card printed at the end of
// `ooda cycle` takes them instead of reading and decoding state.json,
// confidence.json and memos.json again, which grow with the decision log
// and the number of domains. A nil field is read from its file; with
// every field set, the card reads none of them.
//
// A caller sets a field only when its file holds exactly that value's
// encoding: written by this cycle (after the write succeeded) and nothing
// written to it since. The card still reads, for each field, the file
// instead when it cannot be sure that reading the file back would give
// the same card: a text the known secrets would have masked in the file
// (secret.Redact changes it), or a number state.Load would have replaced
// (beyond ±state.MaxStateNumber or not finite; a cost or a ledger total
// out of the ledger's bounds).
type Recorded struct {
	// Entry is the decision-log entry the cycle appended to state.json
	// (the newest).
	Entry *state.DecisionEntry
	// Confidence is confidence.json as written.
	Confidence *state.Confidence
	// Memos is memos.json as written.
	Memos *state.Memos
	// CostLedger is cost_ledger.json as written.
	CostLedger *state.CostLedger
	// Lens, when set, holds the lens changelogs read ahead; Written are
	// the files (relative to the project) the cycle wrote, whose lens
	// changelogs the card reads again.
	Lens    *LensPrefetch
	Written []string
}

// usable returns the fields of r the card may take, nil for the others.
func (r Recorded) usable() (*state.DecisionEntry, *state.Confidence, *state.Memos, *state.CostLedger) {
	e, c, m, l := r.Entry, r.Confidence, r.Memos, r.CostLedger
	if e != nil && !entryReadsBack(e) {
		e = nil
	}
	// What the card needs of the others depends on the entry: the
	// recorded one when it is taken, else (unknown) everything.
	if c != nil && !confidenceReadsBack(c, e) {
		c = nil
	}
	if m != nil && !memosReadBack(m, e) {
		m = nil
	}
	if l != nil && !ledgerReadsBack(l) {
		l = nil
	}
	return e, c, m, l
}

// loadKeeps says whether state.Load keeps v as it is (it clamps a number
// beyond ±MaxStateNumber; a cycle writes no non-finite number).
func loadKeeps(v float64) bool { return math.Abs(v) <= state.MaxStateNumber }

func loadKeepsPtr(p *float64) bool { return p == nil || loadKeeps(*p) }

// unmasked says whether no known secret occurs in any of texts: the file
// then holds them as they are.
func unmasked(texts ...string) bool {
	for _, s := range texts {
		if s != "" && secret.Redact(s) != s {
			return false
		}
	}
	return true
}

func unmaskedRaw(raws ...json.RawMessage) bool {
	for _, r := range raws {
		if len(r) > 0 && secret.Redact(string(r)) != string(r) {
			return false
		}
	}
	return true
}

// entryReadsBack says whether every value of e the card shows reads back
// from state.json as it is.
func entryReadsBack(e *state.DecisionEntry) bool {
	if !unmasked(e.Timestamp, e.Action, e.Reason, e.SelectedDomain, e.SelectedSkill, e.OrientSummary, e.Result, e.Guidance, e.ResultType) {
		return false
	}
	for _, raw := range e.Extra {
		if !unmaskedRaw(raw) {
			return false
		}
	}
	if !unmaskedRaw(e.PROutcomes) {
		return false
	}
	if !loadKeepsPtr(e.Score) || !loadKeepsPtr(e.Confidence) || !loadKeepsPtr(e.ConfidenceAtDecision) ||
		!loadKeepsPtr(e.QualityMult) || !loadKeepsPtr(e.CostUSD) {
		return false
	}
	if v, ok := e.Scores[e.SelectedDomain]; ok && !loadKeeps(v) {
		return false
	}
	return true
}

// confidenceReadsBack says whether the confidences the card may show (one
// per PR outcome the entry counts) read back as they are: all of them,
// unless the entry is known to count none.
func confidenceReadsBack(c *state.Confidence, e *state.DecisionEntry) bool {
	if e != nil && len(e.PROutcomes) == 0 {
		return true
	}
	for d, v := range c.Scores {
		if !loadKeeps(v) || !unmasked(d) {
			return false
		}
	}
	return true
}

// memosReadBack says whether the interventions the card may show (those
// created in the entry's cycle) read back as they are; without the entry
// the cycle is not known, so every intervention counts.
func memosReadBack(m *state.Memos, e *state.DecisionEntry) bool {
	for _, iv := range m.Interventions {
		if e != nil && iv.CreatedAtCycle != e.Cycle {
			continue
		}
		if !loadKeeps(iv.Delta) || !unmasked(iv.Domain, iv.Type) {
			return false
		}
	}
	return true
}

// ledgerReadsBack says whether state.Load takes the ledger's date, costs
// and total as they are: each cost within [0, state.MaxCostUSD], and a
// total neither below the sum of the costs nor beyond MaxCostUSD a cost
// (the bounds past which it replaces a value; see its sanitize).
func ledgerReadsBack(l *state.CostLedger) bool {
	if !unmasked(l.Date) {
		return false
	}
	sum := 0.0
	for _, e := range l.Entries {
		v := e.EstimatedUSD
		if math.IsNaN(v) || v < 0 || v > state.MaxCostUSD {
			return false
		}
		sum += v
	}
	sum = math.Round(sum*1e6) / 1e6
	t := l.TotalEstimatedUSD
	return !math.IsNaN(t) && t >= 0 && t >= sum-0.005 && t <= state.MaxCostUSD*float64(max(1, len(l.Entries)))
}
