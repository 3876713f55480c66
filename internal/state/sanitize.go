package state

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unsafe"

	"github.com/ooda-loop/ooda/internal/config"
)

// MaxCostUSD bounds one cost as read from cost_ledger.json. A real cycle
// costs dollars; a larger value is a broken or hostile file, and clamping
// keeps every sum finite (1e308 + 1e308 is +Inf, which no JSON encoder
// accepts, and a ledger that cannot be written loses the cycle).
const MaxCostUSD = 1e9

// MaxStateNumber bounds every other number Load reads from an evolve file
// (scores, deltas, progress, multipliers, confidences): far beyond any
// real value, small enough that sums and products of a few stay finite.
const MaxStateNumber = 1e15

// maxDuplicateWarnings bounds the duplicated-key warnings of one file.
const maxDuplicateWarnings = 5

// sanitize applies the safe reading of values that would stall or skip
// the rails, recording a warning for each. The files themselves are not
// touched here; the corrected values are written by the cycle's saves.
func (s *Store) sanitize(snap *Snapshot) {
	// At most maxLooseWarnings a file, as its decoding tells, then one
	// line counting the rest: a file of a hundred thousand bad entries
	// told them all, every cycle.
	told, untold := map[string]int{}, map[string]int{}
	defer func() {
		for _, name := range slices.Sorted(maps.Keys(untold)) {
			snap.Warnings = append(snap.Warnings, fmt.Sprintf("%s: %d more values not taken as written", s.display(s.EvolvePath(name)), untold[name]))
		}
	}()
	warn := func(name, ptr, format string, args ...any) {
		if told[name] >= maxLooseWarnings {
			untold[name]++
			return
		}
		told[name]++
		snap.Warnings = append(snap.Warnings, fmt.Sprintf("%s: %s: %s", s.display(s.EvolvePath(name)), ptr, fmt.Sprintf(format, args...)))
	}
	clampTree := func(name string, v any) {
		clampFloats(reflect.ValueOf(v).Elem(), "", func(ptr string, was, now float64) {
			warn(name, ptr, "%s is out of range (beyond ±%g); using %g", num(was), MaxStateNumber, now)
		})
	}

	// Numbers out of range, everywhere but the ledger's costs.
	clampTree(StateFile, &snap.State)
	clampTree(GoalsFile, &snap.Goals)
	clampTree(MemosFile, &snap.Memos)
	clampTree(ActionQueueFile, &snap.ActionQueue)
	clampTree(MetricsFile, &snap.Metrics)
	clampTree(OutcomesFile, &snap.Outcomes)
	clampTree(CheckpointsFile, &snap.Checkpoints)
	clampTree(EpisodesFile, &snap.Episodes)
	clampTree(PrinciplesFile, &snap.Principles)
	clampTree(ReflectionsFile, &snap.Reflections)
	clampTree(CascadesFile, &snap.Cascades)
	for d, v := range snap.Confidence.Scores {
		if c, ok := clampNumber(v, MaxStateNumber); ok {
			ptr := config.Pointer(d)
			if snap.Confidence.Nested() {
				ptr = "/domains/" + escapePointer(d) + "/score"
			}
			warn(ConfidenceFile, ptr, "%s is out of range (beyond ±%g); using %g", num(v), MaxStateNumber, c)
			snap.Confidence.Scores[d] = c
		}
	}

	// The cost ledger: each cost within [0, MaxCostUSD], and a total that
	// is never below what its entries add up to, so no value in the file
	// can let cycles run past the daily cap.
	if l := snap.CostLedger; l != nil {
		sum := 0.0
		for i := range l.Entries {
			e := &l.Entries[i]
			ptr := "/entries/" + strconv.Itoa(i) + "/estimated_usd"
			switch v := e.EstimatedUSD; {
			case math.IsNaN(v) || math.IsInf(v, 0) || v < 0:
				warn(CostLedgerFile, ptr, "%s is not a cost (negative or not finite); counted as 0", num(v))
				e.EstimatedUSD = 0
			case v > MaxCostUSD:
				warn(CostLedgerFile, ptr, "%s is out of range (above %g); counted as %g", num(v), MaxCostUSD, MaxCostUSD)
				e.EstimatedUSD = MaxCostUSD
			}
			sum += e.EstimatedUSD
		}
		sum = math.Round(sum*1e6) / 1e6
		switch t := l.TotalEstimatedUSD; {
		case math.IsNaN(t) || math.IsInf(t, 0) || t < 0:
			warn(CostLedgerFile, "/total_estimated_usd", "%s is not a total (negative or not finite); using %g, the sum of its entries", num(t), sum)
			l.TotalEstimatedUSD = sum
		case t < sum-0.005:
			// Rounding keeps the two within a fraction of a cent; a total
			// below its entries would hide spend from the cap.
			warn(CostLedgerFile, "/total_estimated_usd", "%s is less than the sum of its entries; using %g", num(t), sum)
			l.TotalEstimatedUSD = sum
		case t > MaxCostUSD*float64(max(1, len(l.Entries))):
			warn(CostLedgerFile, "/total_estimated_usd", "%s is out of range; using %g", num(t), max(sum, MaxCostUSD))
			l.TotalEstimatedUSD = max(sum, MaxCostUSD)
		}
	}

	// Counters that only ever count up from 0: a negative value would keep
	// a breaker (silent failures, observe-only saturation) from ever
	// tripping, and a huge one would overflow when incremented.
	counter := func(name, ptr string, v *int) {
		switch {
		case *v < 0:
			warn(name, ptr, "%d is negative; using 0", *v)
			*v = 0
		case *v > MaxCounter:
			warn(name, ptr, "%d is out of range (above %d); using %d", *v, MaxCounter, MaxCounter)
			*v = MaxCounter
		}
	}
	st := &snap.State
	counter(StateFile, "/consecutive_observe_only_cycles", &st.ConsecutiveObserveOnlyCycles)
	counter(StateFile, "/consecutive_silent_failures", &st.ConsecutiveSilentFailures)
	counter(StateFile, "/saturation_evaluated_cycle", &st.SaturationEvaluated)
	for _, d := range slices.Sorted(maps.Keys(st.AlertStreaks)) {
		v := st.AlertStreaks[d]
		counter(StateFile, "/alert_streaks/"+escapePointer(d), &v)
		st.AlertStreaks[d] = v
	}
	mc := &snap.Metrics.Counters
	// The state design's layout keeps the domain counts at the top level
	// and the streak in a streaks block: a warning names the key the file
	// has.
	where := func(key string) string {
		switch {
		case key == "domain_executions" && !mc.hasDomains && snap.Metrics.DomainExecutions != nil:
			return "/domain_executions"
		case (key == "current_streak" || key == "longest_streak") && !mc.hasStreak && snap.Metrics.Streaks != nil:
			return "/streaks/" + key
		}
		return "/counters/" + key
	}
	if mc.TotalChainExecutions != nil {
		counter(MetricsFile, where("total_chain_executions"), mc.TotalChainExecutions)
	}
	for _, c := range []struct {
		key string
		v   *int
	}{
		{"total_cycles", &mc.TotalCycles},
		{"total_skill_executions", &mc.TotalSkillExecutions},
		{"total_prs_created", &mc.TotalPRsCreated},
		{"total_prs_merged", &mc.TotalPRsMerged},
		{"total_prs_rejected", &mc.TotalPRsRejected},
		{"total_futile_cycles", &mc.TotalFutileCycles},
		{"actions_added", &mc.ActionsAdded},
		{"actions_resolved", &mc.ActionsResolved},
		{"current_streak", &mc.CurrentStreak},
		{"longest_streak", &mc.LongestStreak},
	} {
		counter(MetricsFile, where(c.key), c.v)
	}
	for _, d := range slices.Sorted(maps.Keys(mc.DomainExecutions)) {
		v := mc.DomainExecutions[d]
		counter(MetricsFile, where("domain_executions")+"/"+escapePointer(d), &v)
		mc.DomainExecutions[d] = v
	}

	// A cycle counter that is negative, absurd, or lost with a state.json
	// that was set aside would number the next cycles 1, 2, … again and
	// overwrite their run logs: resume after the highest cycle any file
	// recorded.
	const sources = "the decision log, outcomes, cost ledger, checkpoints, reflections, the end of cycle_log.jsonl and the newest entries of CHANGELOG.md"
	s.recoveredCycle = -1
	switch c := st.CycleCount; {
	case c < 0:
		high := s.highestCycle(snap)
		warn(StateFile, "/cycle_count", "%d is negative; using %d, the highest cycle recorded in %s", c, high, sources)
		st.CycleCount = high
		s.recoveredCycle = high
	case c > MaxCounter:
		high := s.highestCycle(snap)
		warn(StateFile, "/cycle_count", "%d is out of range (above %d); using %d, the highest cycle recorded in %s", c, MaxCounter, high, sources)
		st.CycleCount = high
		s.recoveredCycle = high
	case c == 0 && cycleCountUnread(st):
		// A cycle_count of the wrong type ("twelve") is no count: the
		// next cycle must not run as a first one.
		high := s.highestCycle(snap)
		warn(StateFile, "/cycle_count", "the value is not a count; using %d, the highest cycle recorded in %s", high, sources)
		st.CycleCount = high
		s.recoveredCycle = high
	case stateSetAside(snap):
		if high := s.highestCycle(snap); high > 0 {
			warn(StateFile, "/cycle_count", "the file is set aside; using %d, the highest cycle recorded in %s", high, sources)
			st.CycleCount = high
			s.recoveredCycle = high
		}
	case c == 0:
		// Missing, null or 0 with a history elsewhere (a hand edit, a
		// tool that dropped the key): the next cycle is not a first one.
		if high := completedBelow(st, s.highestCycle(snap)); high > 0 {
			warn(StateFile, "/cycle_count", "is missing or 0, but cycle %d is recorded; using %d, the highest cycle recorded in %s", high, high, sources)
			st.CycleCount = high
			s.recoveredCycle = high
		}
	default:
		// Never lowered below a cycle the loaded files record: numbering
		// the next cycle below it would reuse that cycle's id.
		if high := completedBelow(st, loadedHighestCycle(snap)); high > c {
			warn(StateFile, "/cycle_count", "%d is below cycle %d, which the decision log, outcomes, cost ledger, checkpoints or reflections record; using %d", c, high, high)
			st.CycleCount = high
			s.recoveredCycle = high
		}
	}
}

// completedBelow is the count the highest recorded cycle high implies.
// A cycle killed in Step 6 has written some of its records, state.json
// last, and is numbered again by crash recovery (0-C): with the crash flag
// set, the newest cycle the other files record may be that one, not a
// completed one. A cycle in state.json's own decision log did complete.
func completedBelow(st *State, high int) int {
	if !st.CycleInProgress || high <= 0 {
		return high
	}
	logged := 0
	for _, e := range st.DecisionLog {
		if e.Cycle > logged && e.Cycle <= MaxCounter {
			logged = e.Cycle
		}
	}
	return max(logged, high-1)
}

// MaxCounter bounds cycle_count and every counter of state.json and
// metrics.json: a billion cycles is centuries of hourly runs, and the
// bound keeps every increment far from overflowing.
const MaxCounter = 1_000_000_000

// stateSetAside reports whether state.json is corrupt or refused, so that
// the cycle starts from an empty state.
func stateSetAside(snap *Snapshot) bool {
	for _, c := range snap.Corrupt {
		if c.File == StateFile {
			return true
		}
	}
	return false
}

// cycleCountUnread reports whether state.json holds a cycle_count that
// could not be read as a number (kept in Extra, see decodeFields).
func cycleCountUnread(st *State) bool {
	for k := range st.Extra {
		if foldKey(k) == foldKey("cycle_count") {
			return true
		}
	}
	return false
}

// highestCycle is the highest cycle id recorded in the snapshot or at the
// end of the cycle log, or 0. Ids beyond MaxCounter are not cycles.
func (s *Store) highestCycle(snap *Snapshot) int {
	return max(s.cycleLogTailHigh(), s.changelogHigh(), loadedHighestCycle(snap))
}

// loadedHighestCycle is the highest cycle id the loaded files record (the
// decision log, outcomes, the cost ledger, checkpoints, reflections), or
// 0: what every cycle can check without reading more.
func loadedHighestCycle(snap *Snapshot) int {
	high := 0
	take := func(c int) {
		if c > high && c <= MaxCounter {
			high = c
		}
	}
	for _, e := range snap.State.DecisionLog {
		take(e.Cycle)
	}
	for _, o := range snap.Outcomes.Entries {
		take(o.CycleID)
	}
	if snap.CostLedger != nil {
		for _, e := range snap.CostLedger.Entries {
			take(e.CycleID)
		}
	}
	for _, c := range snap.Checkpoints.Checkpoints {
		take(c.Cycle)
	}
	for _, r := range snap.Reflections.Reflections {
		take(r.Cycle)
	}
	return high
}

// clampNumber returns v limited to ±limit (NaN as 0) and whether it changed.
func clampNumber(v, limit float64) (float64, bool) {
	switch {
	case math.IsNaN(v):
		return 0, true
	case v > limit:
		return limit, true
	case v < -limit:
		return -limit, true
	}
	return v, false
}

var (
	extraType = reflect.TypeOf(Extra(nil))
	rawType   = reflect.TypeOf(json.RawMessage(nil))
)

// clampFloats limits every float64 reachable from v (structs by their JSON
// names, slices, pointers, maps of numbers or slices) to ±MaxStateNumber,
// reporting each change with its JSON pointer. Unknown keys (Extra) and
// raw JSON are kept as written: ooda does not compute with them.
func clampFloats(v reflect.Value, ptr string, report func(ptr string, was, now float64)) {
	var root *ptrPath
	if ptr != "" {
		root = &ptrPath{kind: pathRaw, tok: ptr}
	}
	a := getPathArena()
	defer putPathArena(a)
	clampAt(v, root, a, report)
}

// clampField is a field clampFloats descends into: its index and the key
// it is written under.
type clampField struct {
	index int
	name  string
}

var clampFieldsCache sync.Map // reflect.Type -> []clampField

// clampFields are the fields of the struct type t that clampFloats
// visits and that can hold a float64, in field order.
func clampFields(t reflect.Type) []clampField {
	if v, ok := clampFieldsCache.Load(t); ok {
		return v.([]clampField)
	}
	var out []clampField
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if !f.IsExported() || f.Type == extraType || f.Type == rawType {
			continue
		}
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "-" {
			continue
		}
		if name == "" {
			name = f.Name
		}
		if mayHoldFloat(f.Type) {
			out = append(out, clampField{index: i, name: name})
		}
	}
	clampFieldsCache.Store(t, out)
	return out
}

var floatReach sync.Map // reflect.Type -> bool

// mayHoldFloat says whether a value of type t can hold a float64 that
// clampFloats visits.
func mayHoldFloat(t reflect.Type) bool {
	return reachesType(&floatReach, t, map[reflect.Type]bool{}, func(t reflect.Type) (bool, []reflect.Type) {
		switch t.Kind() {
		case reflect.Float64:
			return true, nil
		case reflect.Pointer:
			return false, []reflect.Type{t.Elem()}
		case reflect.Slice:
			if t == rawType || t == extraType {
				return false, nil
			}
			return false, []reflect.Type{t.Elem()}
		case reflect.Map:
			if t == extraType {
				return false, nil
			}
			switch t.Elem().Kind() {
			case reflect.Float64:
				return true, nil
			case reflect.Slice, reflect.Pointer:
				return false, []reflect.Type{t.Elem()}
			}
		case reflect.Struct:
			var next []reflect.Type
			for i := 0; i < t.NumField(); i++ {
				f := t.Field(i)
				if f.IsExported() && f.Type != extraType && f.Type != rawType && f.Tag.Get("json") != "-" {
					next = append(next, f.Type)
				}
			}
			return false, next
		}
		return false, nil
	})
}

// clampAt is clampFloats below path, the pointer of v.
func clampAt(v reflect.Value, path *ptrPath, a *pathArena, report func(ptr string, was, now float64)) {
	switch v.Kind() {
	case reflect.Pointer:
		if !v.IsNil() {
			clampAt(v.Elem(), path, a, report)
		}
	case reflect.Struct:
		for _, f := range clampFields(v.Type()) {
			step := a.push(path, pathKey, f.name, 0)
			clampAt(v.Field(f.index), step, a, report)
			a.pop(step)
		}
	case reflect.Slice:
		if v.Type() == rawType || v.Type() == extraType || !mayHoldFloat(v.Type().Elem()) {
			return
		}
		for i := 0; i < v.Len(); i++ {
			if inRangeEntry(v.Index(i)) {
				continue
			}
			step := a.push(path, pathIndex, "", i)
			clampAt(v.Index(i), step, a, report)
			a.pop(step)
		}
	case reflect.Map:
		if v.Type() == extraType {
			return
		}
		switch v.Type().Elem().Kind() {
		case reflect.Float64:
			iter := v.MapRange()
			type change struct {
				k   reflect.Value
				was float64
				now float64
			}
			var changes []change
			for iter.Next() {
				f := iter.Value().Float()
				if c, ok := clampNumber(f, MaxStateNumber); ok {
					changes = append(changes, change{iter.Key(), f, c})
				}
			}
			for _, c := range changes {
				v.SetMapIndex(c.k, reflect.ValueOf(c.now).Convert(v.Type().Elem()))
				report((&ptrPath{up: path, kind: pathKey, tok: fmt.Sprint(c.k.Interface())}).String(), c.was, c.now)
			}
		case reflect.Slice, reflect.Pointer:
			if !mayHoldFloat(v.Type().Elem()) {
				return
			}
			// The elements of a slice or the target of a pointer held in
			// a map are addressable through the copy.
			iter := v.MapRange()
			for iter.Next() {
				step := a.push(path, pathKey, fmt.Sprint(iter.Key().Interface()), 0)
				clampAt(iter.Value(), step, a, report)
				a.pop(step)
			}
		}
	case reflect.Float64:
		if c, ok := clampNumber(v.Float(), MaxStateNumber); ok && v.CanSet() {
			was := v.Float()
			v.SetFloat(c)
			report(path.String(), was, c)
		}
	}
}

// escapePointer escapes one JSON pointer token (RFC 6901).
func escapePointer(s string) string { return strings.TrimPrefix(config.Pointer(s), "/") }

// num renders a number as it would appear in a file.
func num(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }

// duplicateKeyWarnings reports the keys that appear more than once in one
// object of a state file. encoding/json keeps the last value silently; the
// value kept is the same, but the file's author learns that an edit or a
// merge left two values behind.
func duplicateKeyWarnings(display string, b []byte) []string {
	// Every state file is read on every cycle and duplicates are rare:
	// one allocation-free pass decides whether the precise walk, which
	// builds a pointer for every key, is needed at all.
	if !hasDuplicateKeys(b) {
		return nil
	}
	return duplicateKeyWalk(display, b)
}

// duplicateKeyWalk is the precise walk of duplicateKeyWarnings.
func duplicateKeyWalk(display string, b []byte) []string {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var out []string
	more := 0
	var walk func(ptr string) error
	walk = func(ptr string) error {
		tok, err := dec.Token()
		if err != nil {
			return err
		}
		switch tok {
		case json.Delim('{'):
			seen := map[string]bool{}
			for dec.More() {
				kt, err := dec.Token()
				if err != nil {
					return err
				}
				k, _ := kt.(string)
				kp := ptr + config.Pointer(k)
				if seen[k] {
					if len(out) < maxDuplicateWarnings {
						out = append(out, fmt.Sprintf("%s: %s: the key appears more than once in one object; the last value is used", display, kp))
					} else {
						more++
					}
				}
				seen[k] = true
				if err := walk(kp); err != nil {
					return err
				}
			}
			_, err = dec.Token()
			return err
		case json.Delim('['):
			for i := 0; dec.More(); i++ {
				if err := walk(ptr + "/" + strconv.Itoa(i)); err != nil {
					return err
				}
			}
			_, err = dec.Token()
			return err
		}
		return nil
	}
	if walk("") != nil {
		return nil
	}
	if more > 0 {
		out = append(out, fmt.Sprintf("%s: %d more duplicated keys", display, more))
	}
	return out
}

// dupKeyStop marks the bytes hasDuplicateKeys acts on.
var dupKeyStop = [256]bool{'{': true, '}': true, '[': true, ']': true, ',': true, ':': true, '"': true}

// bytesKey is k as a string without a copy, for a k that nothing changes
// while the string lives.
func bytesKey(k []byte) string {
	if len(k) == 0 {
		return ""
	}
	return unsafe.String(&k[0], len(k))
}

// hasDuplicateKeys reports whether some object in the JSON document b
// may name a key twice: keys are compared as written, and a key with an
// escape answers true (the precise walk decodes it). It expects valid
// JSON and answers false for anything else.
func hasDuplicateKeys(b []byte) bool {
	// One list of the keys of every open object, innermost last, rather
	// than a list per object: no allocation per object. opens holds, for
	// each open container, where its keys start in keys (-1: an array).
	// Up to dupKeysLinear keys an object's keys are compared as they
	// come; past that, the rest are only gathered, and sorted and compared
	// when the object closes (sortedHasEqual, as scanDocument does).
	var keys [][]byte
	var opens []int
	expectKey := false
	for i := 0; i < len(b); i++ {
		// Blanks, digits and literals change nothing here: an indented
		// file is mostly blanks, skipped without the switch.
		for i < len(b) && !dupKeyStop[b[i]] {
			i++
		}
		if i == len(b) {
			break
		}
		switch c := b[i]; c {
		case '{':
			opens = append(opens, len(keys))
			expectKey = true
		case '[':
			opens = append(opens, -1)
			expectKey = false
		case '}', ']':
			if len(opens) == 0 {
				return false
			}
			d := len(opens) - 1
			if o := opens[d]; o >= 0 {
				if len(keys)-o > dupKeysLinear && sortedHasEqual(keys[o:]) {
					return true
				}
				keys = keys[:o]
			}
			opens = opens[:d]
			expectKey = false
		case ',':
			expectKey = len(opens) > 0 && opens[len(opens)-1] >= 0
		case ':':
			expectKey = false
		case '"':
			start := i + 1
			end := stringEnd(b, i)
			if end < 0 {
				// Cut short: the keys gathered so far still count.
				return openHaveEqual(keys, opens)
			}
			i = end - 1
			if !expectKey || len(opens) == 0 || opens[len(opens)-1] < 0 {
				continue
			}
			o, key := opens[len(opens)-1], b[start:i]
			if bytes.IndexByte(key, '\\') >= 0 {
				// An escaped key may equal another spelled differently:
				// leave it to the precise walk.
				return true
			}
			if len(keys)-o <= dupKeysLinear {
				for _, k := range keys[o:] {
					if bytes.Equal(k, key) {
						return true
					}
				}
			}
			keys = append(keys, key)
		}
	}
	return openHaveEqual(keys, opens)
}

// openHaveEqual reports whether an object still open at the end of
// hasDuplicateKeys's walk (a document cut short) gathered a key twice
// past the ones compared as they came: each open object's keys run from
// its start in keys to the next open object's.
func openHaveEqual(keys [][]byte, opens []int) bool {
	end := len(keys)
	for d := len(opens) - 1; d >= 0; d-- {
		o := opens[d]
		if o < 0 {
			continue
		}
		if end-o > dupKeysLinear && sortedHasEqual(keys[o:end]) {
			return true
		}
		end = o
	}
	return false
}

// inRangeEntryOff, set by the tests, walks every entry by reflection:
// the walk inRangeEntry spares.
var inRangeEntryOff bool

// inRangeEntry says whether v is an entry of a type the state files hold
// by the hundred (outcomes, decisions, episodes) every float of which is
// a number within ±MaxStateNumber: clampAt would change nothing in it.
// It reads the entry's floats directly; false (walk it) for any other
// value, and for an entry with a float to clamp, which the walk then
// clamps and names.
func inRangeEntry(v reflect.Value) bool {
	if inRangeEntryOff || !v.CanAddr() {
		return false
	}
	switch e := v.Addr().Interface().(type) {
	case *Outcome:
		return inRangePtrs(e.Score, e.ProcessFactor, e.ArtifactScore) && inRange(e.QualityMult)
	case *DecisionEntry:
		if !inRangePtrs(e.Score, e.RawScore, e.Confidence, e.QualityMult, e.ElapsedSeconds, e.CostUSD, e.ConfidenceAtDecision) ||
			!inRangeMap(e.Scores) {
			return false
		}
		c := e.ContrarianCheck
		return c == nil || inRange(c.ScoreAdjustment) && inRangeMap(c.AdjustmentApplied)
	case *Episode:
		return inRangeMap(e.ConfidenceSnapshot)
	}
	return false
}

// inRange says whether clampNumber leaves f as it is (false for NaN).
func inRange(f float64) bool { return f >= -MaxStateNumber && f <= MaxStateNumber }

// inRangePtrs says whether every float the pointers point to is in range.
func inRangePtrs(ps ...*float64) bool {
	for _, p := range ps {
		if p != nil && !inRange(*p) {
			return false
		}
	}
	return true
}

// inRangeMap says whether every value of m is in range.
func inRangeMap(m map[string]float64) bool {
	for _, f := range m {
		if !inRange(f) {
			return false
		}
	}
	return true
}
