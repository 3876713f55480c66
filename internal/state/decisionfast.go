package state

import (
	"encoding/json"
	"reflect"
)

// decisionAliasType is the type the general path decodes an entry into:
// the fast decoder asks its plan whether a key it does not spell is one
// of the entry's fields in another spelling (a case variant, an escape),
// which only the general path reads. The plan is built on first use, not
// when the package starts: every process starts, few read a decision.
var decisionAliasType = reflect.TypeFor[decisionAlias]()

// decodeDecisionFast decodes b, one JSON object decodeFile checked, into
// e (zero) as the general path (unmarshalKeepChecked) does, unknown keys
// kept as written, and says whether it could: false, with e to be zeroed
// again, when b holds a key of the entry's in another spelling than its
// tag's, a key twice, or a value the general path would not read as the
// typed readers below do (a mistyped value, a string with escapes, a
// number out of range). See entryfast.go.
func decodeDecisionFast(b []byte, e *DecisionEntry) bool {
	buf := memberBufs.Get().(*[]rawMember)
	defer putMembers(buf)
	*buf = splitObjectInto((*buf)[:0], b)
	var unknown []objectMember
	// A key read twice is the general path's to read: encoding/json
	// decodes a second list or map into the first, a second pointer's
	// value into the one pointed to.
	var seen uint64
	for _, m := range *buf {
		k, v := m.quoted[1:len(m.quoted)-1], m.val
		var ok bool
		var bit uint
		switch string(k) {
		case "cycle":
			bit, ok = 0, fastInt(v, &e.Cycle)
		case "timestamp":
			bit, ok = 1, fastString(v, &e.Timestamp)
		case "action":
			bit, ok = 2, fastString(v, &e.Action)
		case "reason":
			bit, ok = 3, fastString(v, &e.Reason)
		case "selected_domain":
			bit, ok = 4, fastString(v, &e.SelectedDomain)
		case "selected_skill":
			bit, ok = 5, fastString(v, &e.SelectedSkill)
		case "score":
			bit, ok = 6, fastPtrNew(v, &e.Score, fastFloat)
		case "raw_score":
			bit, ok = 7, fastPtrNew(v, &e.RawScore, fastFloat)
		case "confidence":
			bit, ok = 8, fastPtrNew(v, &e.Confidence, fastFloat)
		case "orient_summary":
			bit, ok = 9, fastString(v, &e.OrientSummary)
		case "result":
			bit, ok = 10, fastString(v, &e.Result)
		case "score_verified":
			bit, ok = 11, fastPtrNew(v, &e.ScoreVerified, fastBool)
		case "memo_written":
			bit, ok = 12, fastPtrNew(v, &e.MemoWritten, fastBool)
		case "pr_number":
			bit, ok = 13, fastPtrNew(v, &e.PRNumber, fastInt)
		case "risk_tier":
			bit, ok = 14, fastPtrNew(v, &e.RiskTier, fastInt)
		case "had_output":
			bit, ok = 15, fastPtrNew(v, &e.HadOutput, fastBool)
		case "selected_by_alert":
			bit, ok = 16, fastBool(v, &e.SelectedByAlert)
		case "guidance":
			bit, ok = 17, fastString(v, &e.Guidance)
		case "gated":
			bit, ok = 18, fastBool(v, &e.Gated)
		case "result_type":
			bit, ok = 19, fastString(v, &e.ResultType)
		case "quality_multiplier":
			bit, ok = 20, fastPtrNew(v, &e.QualityMult, fastFloat)
		case "cycle_mode":
			bit, ok = 21, fastString(v, &e.CycleMode)
		case "chain_executed":
			bit, ok = 22, fastList(v, &e.ChainExecuted)
		case "chain_count":
			bit, ok = 23, fastInt(v, &e.ChainCount)
		case "elapsed_seconds":
			bit, ok = 24, fastPtrNew(v, &e.ElapsedSeconds, fastFloat)
		case "cost_usd":
			bit, ok = 25, fastPtrNew(v, &e.CostUSD, fastFloat)
		case "pr_outcomes":
			bit, ok = 26, fastRaw(v, &e.PROutcomes)
		case "error":
			bit, ok = 27, fastString(v, &e.Error)
		case "prs_processed":
			bit, ok = 28, fastRaw(v, &e.PRsProcessed)
		case "scores":
			bit = 29
			if ok = v[0] == 'n'; !ok {
				ok = typedMap(v, &e.Scores, fastFloat)
			}
		case "confidence_at_decision":
			bit, ok = 30, fastPtrNew(v, &e.ConfidenceAtDecision, fastFloat)
		case "chain_stopped_at":
			bit, ok = 31, fastPtrNew(v, &e.ChainStoppedAt, fastString)
		case "stop_reason":
			bit, ok = 32, fastPtrNew(v, &e.StopReason, fastString)
		case "prs_created":
			bit = 33
			if isEmptyArray(v) {
				e.PRsCreated, ok = []CreatedPR{}, true
			} else {
				// As decodeKnown: encoding/json reads the field.
				ok = json.Unmarshal(v, &e.PRsCreated) == nil
			}
		case "skill_gaps_detected":
			bit, ok = 34, fastList(v, &e.SkillGapsDetected)
		case "proposed_skills_generated":
			bit, ok = 35, fastList(v, &e.ProposedSkillsGenerated)
		case "contrarian_check":
			bit, ok = 36, v[0] == 'n' || json.Unmarshal(v, &e.ContrarianCheck) == nil
		default:
			plan := planFor(decisionAliasType)
			if plan == nil {
				return false
			}
			if _, known := plan.lookupQuoted(m.quoted); known {
				return false
			}
			unknown = append(unknown, objectMember{key: m.key(), val: m.val})
			continue
		}
		if !ok || seen&(1<<bit) != 0 {
			return false
		}
		seen |= 1 << bit
	}
	e.Extra = keepMembers(unknown)
	return true
}

// fastPtrNew reads val into the pointer field dst (nil) as decodeKnown
// does: null leaves it nil, a value (read by read) points it at a new
// variable holding the value.
func fastPtrNew[T any](val []byte, dst **T, read func([]byte, *T) bool) bool {
	if val[0] == 'n' {
		return true
	}
	p := new(T)
	if !read(val, p) {
		return false
	}
	*dst = p
	return true
}

// fastList reads val into the list of strings dst (nil) as decodeKnown
// does: null leaves it nil, a list of strings without escapes (a null
// element an empty string) is read, anything else is not.
func fastList(val []byte, dst *[]string) bool {
	if val[0] == 'n' {
		return true
	}
	return typedList(val, dst, fastString)
}

// fastRaw reads val into the raw field dst as decodeKnown does: a copy
// of its bytes, a null included.
func fastRaw(val []byte, dst *json.RawMessage) bool {
	*dst = append(json.RawMessage(nil), val...)
	return true
}

// isEmptyArray says whether val, a valid JSON value, is an empty array.
func isEmptyArray(val []byte) bool {
	return val[0] == '[' && skipSpace(val, 1) == len(val)-1
}
