package state

import (
	"bytes"
	"math"
	"reflect"
	"strconv"
	"unicode/utf8"
)

// The entries that grow with a project's age (outcomes.json's, one a
// cycle; state.json's decision log; episodes and reflections) are read,
// copied and compared by code written for their type instead of by
// reflection: the general path walks every member through the type's
// decodePlan, copies the value read field by field (copyDeep) and
// compares it back field by field (sameEntry), which cost more than
// reading the file's bytes. The fast decoders (outcomes here, decisions
// in decisionfast.go) read only what they are sure to read as the
// general path does (each key as the field's own tag spells it, each
// value of the field's JSON type, a string without escapes, a number the
// general path reads the same way) and give up on anything else, the
// entry then read again from scratch by the general path; the copies and comparisons do what copyDeep and
// sameEntry do, field for field. The general path stays the reference
// (entryfast_oracle_test.go).

// entryFastOff, set by the tests, sends every entry through the general
// path: the decoder, copy and comparison the fast path replaced.
var entryFastOff bool

// fastString reads val (a valid JSON value) into dst as decodeScalar
// does: a string without escapes, a null leaving dst as it is.
func fastString(val []byte, dst *string) bool {
	switch val[0] {
	case 'n':
		return true
	case '"':
		s := val[1 : len(val)-1]
		if bytes.IndexByte(s, '\\') >= 0 || !utf8.Valid(s) {
			return false
		}
		*dst = string(s)
		return true
	}
	return false
}

// fastInt reads val into dst as decodeScalar does: a plain integer, a
// null leaving dst as it is.
func fastInt(val []byte, dst *int) bool {
	if val[0] == 'n' {
		return true
	}
	n, ok := plainInt(val)
	if !ok || int64(int(n)) != n {
		return false
	}
	*dst = int(n)
	return true
}

// fastBool reads val into dst as decodeScalar does.
func fastBool(val []byte, dst *bool) bool {
	switch val[0] {
	case 'n':
		return true
	case 't':
		*dst = true
		return true
	case 'f':
		*dst = false
		return true
	}
	return false
}

// fastFloat reads val into dst as decodeScalar does for a float64.
func fastFloat(val []byte, dst *float64) bool {
	if val[0] == 'n' {
		return true
	}
	if val[0] != '-' && (val[0] < '0' || val[0] > '9') {
		return false
	}
	if n, ok := plainInt(val); ok && n > -1<<53 && n < 1<<53 {
		f := float64(n)
		if n == 0 && val[0] == '-' {
			f = math.Copysign(0, -1)
		}
		*dst = f
		return true
	}
	f, err := strconv.ParseFloat(string(val), 64)
	if err != nil {
		return false
	}
	*dst = f
	return true
}

// outcomeAlias is Outcome without its methods: what the general path
// decodes an outcome into, and the type of the copy its record keeps.
type outcomeAlias Outcome

// outcomeTargets is where an outcome's pointer fields point: one
// allocation for all of them instead of one each (a project's 200
// outcomes made 2,400 of them, read and copied).
type outcomeTargets struct {
	score, processFactor, artifactScore float64
	prNumber                            int
	hadOutput, onMission                bool
}

// decodeOutcomeFast decodes b, one JSON object decodeFile checked, into
// o (zero) as the general path does, and says whether it could: false,
// with o to be zeroed again, when b holds a key that is not one of
// Outcome's as its tag spells it or a value it does not read.
func decodeOutcomeFast(b []byte, o *Outcome) bool {
	buf := memberBufs.Get().(*[]rawMember)
	defer putMembers(buf)
	*buf = splitObjectInto((*buf)[:0], b)
	t := new(outcomeTargets)
	for _, m := range *buf {
		k, v := m.quoted[1:len(m.quoted)-1], m.val
		var ok bool
		switch string(k) {
		case "cycle_id":
			ok = fastInt(v, &o.CycleID)
		case "timestamp":
			ok = fastString(v, &o.Timestamp)
		case "domain":
			ok = fastString(v, &o.Domain)
		case "skill":
			ok = fastString(v, &o.Skill)
		case "result":
			ok = fastString(v, &o.Result)
		case "result_type":
			ok = fastString(v, &o.ResultType)
		case "score":
			ok = fastPtrIn(v, &o.Score, &t.score, fastFloat)
		case "process_factor":
			ok = fastPtrIn(v, &o.ProcessFactor, &t.processFactor, fastFloat)
		case "quality_multiplier":
			ok = fastFloat(v, &o.QualityMult)
		case "pr_number":
			ok = fastPtrIn(v, &o.PRNumber, &t.prNumber, fastInt)
		case "had_output":
			ok = fastPtrIn(v, &o.HadOutput, &t.hadOutput, fastBool)
		case "on_mission":
			ok = fastPtrIn(v, &o.OnMission, &t.onMission, fastBool)
		case "artifact_score":
			ok = fastPtrIn(v, &o.ArtifactScore, &t.artifactScore, fastFloat)
		case "cycle_mode":
			ok = fastString(v, &o.CycleMode)
		}
		if !ok {
			return false
		}
	}
	return true
}

// fastPtrIn reads val into the pointer field dst as decodeKnown does,
// pointing it at at: null makes it nil, a value (read by read) points it
// at at holding the value. A key repeated reads into at again, as
// encoding/json decodes into the value already pointed to.
func fastPtrIn[T any](val []byte, dst **T, at *T, read func([]byte, *T) bool) bool {
	if val[0] == 'n' {
		*dst = nil
		return true
	}
	var v T
	if !read(val, &v) {
		return false
	}
	*at, *dst = v, at
	return true
}

// copyOutcome is copyDeep of o, an outcome without unknown keys (its
// pointers new ones to copies; its record of its bytes shared).
func copyOutcome(o *Outcome) *outcomeAlias {
	type copied struct {
		c outcomeAlias
		t outcomeTargets
	}
	n := new(copied) // one allocation for the copy and its pointers' targets
	n.c = outcomeAlias(*o)
	n.c.Score = copyPtrTo(o.Score, &n.t.score)
	n.c.ProcessFactor = copyPtrTo(o.ProcessFactor, &n.t.processFactor)
	n.c.PRNumber = copyPtrTo(o.PRNumber, &n.t.prNumber)
	n.c.HadOutput = copyPtrTo(o.HadOutput, &n.t.hadOutput)
	n.c.OnMission = copyPtrTo(o.OnMission, &n.t.onMission)
	n.c.ArtifactScore = copyPtrTo(o.ArtifactScore, &n.t.artifactScore)
	return &n.c
}

// copyPtrTo is at holding a copy of *p, or nil when p is.
func copyPtrTo[T any](p *T, at *T) *T {
	if p == nil {
		return nil
	}
	*at = *p
	return at
}

// copyPtr is a new pointer to a copy of *p, or nil.
func copyPtr[T any](p *T) *T {
	if p == nil {
		return nil
	}
	c := *p
	return &c
}

// sameOutcome is sameEntry for outcomes: every field but the record of
// the bytes read the same, floats by their bits, a nil map of unknown
// keys differing from an empty one.
func sameOutcome(a, b *outcomeAlias) bool {
	return a.CycleID == b.CycleID && a.Timestamp == b.Timestamp && a.Domain == b.Domain &&
		a.Skill == b.Skill && a.Result == b.Result && a.ResultType == b.ResultType &&
		samePtrFloat(a.Score, b.Score) && samePtrFloat(a.ProcessFactor, b.ProcessFactor) &&
		math.Float64bits(a.QualityMult) == math.Float64bits(b.QualityMult) &&
		samePtr(a.PRNumber, b.PRNumber) && samePtr(a.HadOutput, b.HadOutput) && samePtr(a.OnMission, b.OnMission) &&
		samePtrFloat(a.ArtifactScore, b.ArtifactScore) && a.CycleMode == b.CycleMode &&
		sameExtra(a.Extra, b.Extra)
}

// samePtr compares two pointers as sameValue does.
func samePtr[T comparable](a, b *T) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a == b || *a == *b
}

// samePtrFloat compares two float pointers as sameValue does (by bits).
func samePtrFloat(a, b *float64) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a == b || math.Float64bits(*a) == math.Float64bits(*b)
}

// sameExtra compares two sets of unknown keys as sameValue does.
func sameExtra(a, b Extra) bool {
	if (a == nil) != (b == nil) || len(a) != len(b) {
		return false
	}
	for k, av := range a {
		bv, ok := b[k]
		if !ok || (av == nil) != (bv == nil) || !bytes.Equal(av, bv) {
			return false
		}
	}
	return true
}

// unboxedOff, set by the tests, sends every entry to readEntry.encode,
// boxed: what the shortcuts below spare, kept as their oracle.
var unboxedOff bool

// The shortcuts below are sameEntryFast's first answer — an entry that
// is still the value read is its bytes as read — asked before the entry
// is boxed for readEntry.encode: a file's hundreds of entries, nearly all
// unchanged, each cost a heap copy of the entry to say so.

// One function per type, not one generic: through a generic helper the
// entry's pointer escapes, and every unchanged entry was a heap copy
// again (TestUnchangedEntriesWriteWithoutAllocating).

// unchangedOutcome is r's bytes when cur, with its unknown keys extra,
// is still the outcome read (see sameEntryFast).
func (r *readEntry) unchangedOutcome(cur *outcomeAlias, extra Extra) ([]byte, bool) {
	if r == nil || entryFastOff || unboxedOff {
		return nil, false
	}
	base, ok := r.base.(*outcomeAlias)
	if !ok || !sameOutcome(base, cur) || !sameExtra(r.baseExtra, extra) {
		return nil, false
	}
	return r.raw, true
}

// unchangedDecision is unchangedOutcome for a decision-log entry.
func (r *readEntry) unchangedDecision(cur *decisionAlias, extra Extra) ([]byte, bool) {
	if r == nil || entryFastOff || unboxedOff {
		return nil, false
	}
	base, ok := r.base.(*decisionAlias)
	if !ok || !sameDecision(base, cur) || !sameExtra(r.baseExtra, extra) {
		return nil, false
	}
	return r.raw, true
}

// unchangedEpisode is unchangedOutcome for an episode.
func (r *readEntry) unchangedEpisode(cur *episodeAlias, extra Extra) ([]byte, bool) {
	if r == nil || entryFastOff || unboxedOff {
		return nil, false
	}
	base, ok := r.base.(*episodeAlias)
	if !ok || !sameEpisode(base, cur) || !sameExtra(r.baseExtra, extra) {
		return nil, false
	}
	return r.raw, true
}

// unchangedReflection is unchangedOutcome for a reflection.
func (r *readEntry) unchangedReflection(cur *reflectionAlias, extra Extra) ([]byte, bool) {
	if r == nil || entryFastOff || unboxedOff {
		return nil, false
	}
	base, ok := r.base.(*reflectionAlias)
	if !ok || !sameReflection(base, cur) || !sameExtra(r.baseExtra, extra) {
		return nil, false
	}
	return r.raw, true
}

// sameEntryFast is the test encodeReadLazily makes of an entry whose
// type has its own comparison (sameEntry and sameValue for it): known
// is false for any other, left to the general one.
func sameEntryFast(r *readEntry, v any, extra Extra) (same, known bool) {
	if entryFastOff || r.base == nil {
		return false, false
	}
	switch base := r.base.(type) {
	case *outcomeAlias:
		cur, ok := v.(outcomeAlias)
		if !ok {
			return false, false
		}
		return sameOutcome(base, &cur) && sameExtra(r.baseExtra, extra), true
	case *episodeAlias:
		cur, ok := v.(episodeAlias)
		if !ok {
			return false, false
		}
		return sameEpisode(base, &cur) && sameExtra(r.baseExtra, extra), true
	case *reflectionAlias:
		cur, ok := v.(reflectionAlias)
		if !ok {
			return false, false
		}
		return sameReflection(base, &cur) && sameExtra(r.baseExtra, extra), true
	case *decisionAlias:
		cur, ok := v.(decisionAlias)
		if !ok {
			return false, false
		}
		return sameDecision(base, &cur) && sameExtra(r.baseExtra, extra), true
	}
	return false, false
}

// copyDecision is copyDeep of d, a decision-log entry as read (its
// record of its bytes, nil then, shared as copyDeep shares it).
func copyDecision(d *decisionAlias) *decisionAlias {
	c := *d
	c.Score, c.RawScore, c.Confidence = copyPtr(d.Score), copyPtr(d.RawScore), copyPtr(d.Confidence)
	c.ScoreVerified, c.MemoWritten, c.HadOutput = copyPtr(d.ScoreVerified), copyPtr(d.MemoWritten), copyPtr(d.HadOutput)
	c.PRNumber, c.RiskTier = copyPtr(d.PRNumber), copyPtr(d.RiskTier)
	c.QualityMult, c.ElapsedSeconds, c.CostUSD = copyPtr(d.QualityMult), copyPtr(d.ElapsedSeconds), copyPtr(d.CostUSD)
	c.ChainExecuted = copySlice(d.ChainExecuted)
	c.PROutcomes, c.PRsProcessed = copySlice(d.PROutcomes), copySlice(d.PRsProcessed)
	c.Extra = copyExtra(d.Extra)
	c.Scores = copyMap(d.Scores)
	c.ConfidenceAtDecision = copyPtr(d.ConfidenceAtDecision)
	c.ChainStoppedAt, c.StopReason = copyPtr(d.ChainStoppedAt), copyPtr(d.StopReason)
	if d.PRsCreated != nil {
		c.PRsCreated = make([]CreatedPR, len(d.PRsCreated))
		for i, p := range d.PRsCreated {
			c.PRsCreated[i] = CreatedPR{Number: p.Number, Title: copyPtr(p.Title), Branch: copyPtr(p.Branch)}
		}
	}
	c.SkillGapsDetected = copySlice(d.SkillGapsDetected)
	c.ProposedSkillsGenerated = copySlice(d.ProposedSkillsGenerated)
	if d.ContrarianCheck != nil {
		cc := *d.ContrarianCheck
		cc.AdjustmentApplied = copyMap(cc.AdjustmentApplied)
		c.ContrarianCheck = &cc
	}
	return &c
}

// copySlice is a new list holding s's elements (nil for nil, empty for
// empty), for elements that hold no reference.
func copySlice[S ~[]E, E any](s S) S {
	if s == nil {
		return nil
	}
	c := make(S, len(s))
	copy(c, s)
	return c
}

// copyMap is a new map holding m's pairs (nil for nil), for values that
// hold no reference.
func copyMap[M ~map[K]V, K comparable, V any](m M) M {
	if m == nil {
		return nil
	}
	c := make(M, len(m))
	for k, v := range m {
		c[k] = v
	}
	return c
}

// copyExtra is copyDeep of unknown keys: a new map of new byte slices.
func copyExtra(x Extra) Extra {
	if x == nil {
		return nil
	}
	c := make(Extra, len(x))
	for k, v := range x {
		c[k] = copySlice(v)
	}
	return c
}

// sameDecision is sameEntry for decision-log entries (see sameOutcome).
func sameDecision(a, b *decisionAlias) bool {
	if a.Cycle != b.Cycle || a.Timestamp != b.Timestamp || a.Action != b.Action || a.Reason != b.Reason ||
		a.SelectedDomain != b.SelectedDomain || a.SelectedSkill != b.SelectedSkill ||
		a.OrientSummary != b.OrientSummary || a.Result != b.Result || a.SelectedByAlert != b.SelectedByAlert ||
		a.Guidance != b.Guidance || a.Gated != b.Gated || a.ResultType != b.ResultType ||
		a.CycleMode != b.CycleMode || a.ChainCount != b.ChainCount || a.Error != b.Error {
		return false
	}
	if !samePtrFloat(a.Score, b.Score) || !samePtrFloat(a.RawScore, b.RawScore) || !samePtrFloat(a.Confidence, b.Confidence) ||
		!samePtr(a.ScoreVerified, b.ScoreVerified) || !samePtr(a.MemoWritten, b.MemoWritten) ||
		!samePtr(a.PRNumber, b.PRNumber) || !samePtr(a.RiskTier, b.RiskTier) || !samePtr(a.HadOutput, b.HadOutput) ||
		!samePtrFloat(a.QualityMult, b.QualityMult) || !samePtrFloat(a.ElapsedSeconds, b.ElapsedSeconds) ||
		!samePtrFloat(a.CostUSD, b.CostUSD) || !samePtrFloat(a.ConfidenceAtDecision, b.ConfidenceAtDecision) ||
		!samePtr(a.ChainStoppedAt, b.ChainStoppedAt) || !samePtr(a.StopReason, b.StopReason) {
		return false
	}
	if !sameList(a.ChainExecuted, b.ChainExecuted) || !sameBytes(a.PROutcomes, b.PROutcomes) ||
		!sameBytes(a.PRsProcessed, b.PRsProcessed) || !sameExtra(a.Extra, b.Extra) ||
		!sameFloatMap(a.Scores, b.Scores) || !sameList(a.SkillGapsDetected, b.SkillGapsDetected) ||
		!sameList(a.ProposedSkillsGenerated, b.ProposedSkillsGenerated) {
		return false
	}
	if (a.PRsCreated == nil) != (b.PRsCreated == nil) || len(a.PRsCreated) != len(b.PRsCreated) {
		return false
	}
	for i := range a.PRsCreated {
		p, q := &a.PRsCreated[i], &b.PRsCreated[i]
		if p.Number != q.Number || !samePtr(p.Title, q.Title) || !samePtr(p.Branch, q.Branch) {
			return false
		}
	}
	if a.ContrarianCheck == nil || b.ContrarianCheck == nil {
		return a.ContrarianCheck == b.ContrarianCheck
	}
	p, q := a.ContrarianCheck, b.ContrarianCheck
	return p == q || (p.Argument == q.Argument && p.AffectedDomain == q.AffectedDomain &&
		math.Float64bits(p.ScoreAdjustment) == math.Float64bits(q.ScoreAdjustment) &&
		p.DominantDomain == q.DominantDomain && p.DominantFrequency == q.DominantFrequency &&
		p.CounterDomain == q.CounterDomain && p.Validity == q.Validity &&
		sameFloatMap(p.AdjustmentApplied, q.AdjustmentApplied))
}

// sameList compares two lists of strings as sameValue does (a nil list
// differing from an empty one).
func sameList(a, b []string) bool {
	if (a == nil) != (b == nil) || len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// sameBytes compares two byte lists as sameValue does.
func sameBytes(a, b []byte) bool {
	return (a == nil) == (b == nil) && bytes.Equal(a, b)
}

// sameFloatMap compares two maps of numbers as sameValue does (floats by
// their bits).
func sameFloatMap(a, b map[string]float64) bool {
	if (a == nil) != (b == nil) || len(a) != len(b) {
		return false
	}
	for k, av := range a {
		bv, ok := b[k]
		if !ok || math.Float64bits(av) != math.Float64bits(bv) {
			return false
		}
	}
	return true
}

// copyEpisode is copyDeep of e, an episode as read (see copyDecision).
func copyEpisode(e *episodeAlias) *episodeAlias {
	c := *e
	c.CycleRange = copySlice(e.CycleRange)
	c.DomainsSelected = copyMap(e.DomainsSelected)
	c.KeyDecisions, c.Lessons = copySlice(e.KeyDecisions), copySlice(e.Lessons)
	c.ConfidenceSnapshot = copyMap(e.ConfidenceSnapshot)
	c.PatternsDetected = copySlice(e.PatternsDetected)
	c.Extra = copyExtra(e.Extra)
	return &c
}

// sameEpisode is sameEntry for episodes (see sameOutcome).
func sameEpisode(a, b *episodeAlias) bool {
	if a.ID != b.ID || a.WeekStart != b.WeekStart || a.WeekEnd != b.WeekEnd || a.TotalCycles != b.TotalCycles ||
		a.Summary != b.Summary || a.PRsCreated != b.PRsCreated || a.PRsMerged != b.PRsMerged ||
		a.PRsRejected != b.PRsRejected || a.SkillGapsFound != b.SkillGapsFound ||
		a.ContrarianChecks != b.ContrarianChecks || a.CreatedAt != b.CreatedAt {
		return false
	}
	if (a.CycleRange == nil) != (b.CycleRange == nil) || len(a.CycleRange) != len(b.CycleRange) {
		return false
	}
	for i := range a.CycleRange {
		if a.CycleRange[i] != b.CycleRange[i] {
			return false
		}
	}
	if (a.DomainsSelected == nil) != (b.DomainsSelected == nil) || len(a.DomainsSelected) != len(b.DomainsSelected) {
		return false
	}
	for k, av := range a.DomainsSelected {
		if bv, ok := b.DomainsSelected[k]; !ok || av != bv {
			return false
		}
	}
	return sameList(a.KeyDecisions, b.KeyDecisions) && sameList(a.Lessons, b.Lessons) &&
		sameFloatMap(a.ConfidenceSnapshot, b.ConfidenceSnapshot) &&
		sameList(a.PatternsDetected, b.PatternsDetected) && sameExtra(a.Extra, b.Extra)
}

// copyReflection is copyDeep of r, a reflection as read.
func copyReflection(r *reflectionAlias) *reflectionAlias {
	c := *r
	c.Extra = copyExtra(r.Extra)
	return &c
}

// sameReflection is sameEntry for reflections (see sameOutcome).
func sameReflection(a, b *reflectionAlias) bool {
	return a.Cycle == b.Cycle && a.Timestamp == b.Timestamp && a.Domain == b.Domain && a.Skill == b.Skill &&
		a.Result == b.Result && a.Verdict == b.Verdict && a.Critique == b.Critique && a.Lesson == b.Lesson &&
		a.Status == b.Status && sameExtra(a.Extra, b.Extra)
}

// decodeScalarsTyped is decodeScalars for the lists and maps the state
// files hold most ([]string, []int, map[string]float64, map[string]int),
// read element by element without reflection; typed is false for any
// other type, left to decodeScalars.
func decodeScalarsTyped(val []byte, dst reflect.Value) (ok, typed bool) {
	if entryFastOff || !dst.CanAddr() {
		return false, false
	}
	switch p := dst.Addr().Interface().(type) {
	case *[]string:
		return typedList(val, p, fastString), true
	case *[]int:
		return typedList(val, p, fastInt), true
	case *map[string]float64:
		return typedMap(val, p, fastFloat), true
	case *map[string]int:
		return typedMap(val, p, fastInt), true
	}
	return false, false
}

// typedList is decodeScalars for a list of T: val a JSON array whose
// elements read (a null leaves one zero), else false and dst unchanged.
func typedList[T any](val []byte, dst *[]T, read func([]byte, *T) bool) bool {
	if val[0] != '[' {
		return false
	}
	buf := elemBufs.Get().(*[][]byte)
	defer putElems(buf)
	*buf = splitArrayInto((*buf)[:0], val)
	elems := *buf
	out := make([]T, len(elems))
	for i, e := range elems {
		if !read(e, &out[i]) {
			return false
		}
	}
	*dst = out
	return true
}

// typedMap is decodeScalars for a map of T: val a JSON object whose
// values read, else false and dst unchanged.
func typedMap[T any](val []byte, dst *map[string]T, read func([]byte, *T) bool) bool {
	if val[0] != '{' {
		return false
	}
	buf := memberBufs.Get().(*[]rawMember)
	defer putMembers(buf)
	*buf = splitObjectInto((*buf)[:0], val)
	out := make(map[string]T, len(*buf))
	for _, m := range *buf {
		var v T
		if !read(m.val, &v) {
			return false
		}
		out[m.key()] = v
	}
	*dst = out
	return true
}
