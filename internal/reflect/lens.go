package reflect

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/ooda-loop/ooda/internal/state"
)

// The adaptive lens (5-E) keeps bounded files, so a loop that runs for
// months never grows them; these are the bounds and the rule constants.
const (
	// LensEvidenceCap is the number of evidence entries a lens keeps.
	LensEvidenceCap = 20
	// LensItemCap bounds focus items, learned thresholds and discovered
	// signals together.
	LensItemCap = 50
	// LensMetricsCap bounds the metrics one observation holds (the first
	// by name): the rules compare every metric with every item, and a
	// state file of a hundred thousand metrics must not make that quadratic
	// work, nor the evidence it is kept in grow with it.
	LensMetricsCap = 200
	// LensAlertsCap bounds the alerts one observation records (the
	// first, in the state file's order): evidence keeps LensEvidenceCap
	// observations, and a state file of 150,000 alerts must not make the
	// lens outgrow the read limit (and so be refused on every later read).
	LensAlertsCap = 50
	// LensTagMax is the longest alert id an evidence tag keeps, in
	// characters; a longer one is cut and ends with "…".
	LensTagMax = 200
	// LensChangelogCap is the number of lens_changelog.json entries kept.
	LensChangelogCap = 50
	// LensDeprecatedCap bounds deprecated_items, which the spec leaves
	// open: items are re-proposed and re-deprecated, so without a bound the
	// file would grow forever.
	LensDeprecatedCap = 50
	// LensWindow is the number of recent observations the rules look at.
	LensWindow = 5
	// LensActiveConfidence is the confidence from which an item is part of
	// the active lens passed to skills.
	LensActiveConfidence = 0.6
	// LensSource names this engine in the evidence it writes.
	LensSource = "ooda 5-E"

	lensProposed       = 0.3
	lensConfirmStep    = 0.1
	lensDecayStep      = 0.2
	lensDeprecateBelow = 0.1
	lensCVThreshold    = 0.25
	lensMinValues      = 3
	lensCoOccurMin     = 3
	lensReviewRecent   = 5
	lensReviewFirst    = 3
)

// Item name shapes: the rules find their own items again by name, so a
// lens reloaded from disk keeps evolving, and items written by anyone else
// (another tool, the original project) never match and are left alone.
const (
	lensFocusSuffix     = " variability"
	lensThresholdSuffix = " threshold"
	lensSignalSuffix    = " alerts co-occur"
)

// LensInput is what 5-E needs about the executed domain's cycle.
type LensInput struct {
	Cycle  int
	Now    time.Time
	Domain string
	// State is the domain state file after the skill ran. A state that
	// was not found and holds neither metrics nor alerts is not an
	// observation: its evidence entry carries no metrics, so the rules
	// skip it instead of reading "no alert" into a missing file.
	State state.DomainState
	// CoAlerts holds, oldest first, the set of domains (this one
	// included) that had a warning or critical alert in each recent
	// cycle; only the last LensWindow sets are read.
	CoAlerts [][]string
}

// LensResult reports what one UpdateLens call did.
type LensResult struct {
	// Changes are the changelog entries appended this cycle, in order
	// (before the changelog cap, so none is lost to it).
	Changes           []state.LensChange
	ItemsAdded        int
	ConfidenceChanges int
	Deprecated        int
	Observation       string
}

// Changed reports whether the lens items changed this cycle, for the
// Cycle Card's LEARN line.
func (r LensResult) Changed() bool { return len(r.Changes) > 0 }

// lensKind names the three item lists in deprecated_items and reasons.
type lensKind int

const (
	lensFocus lensKind = iota
	lensThreshold
	lensSignal
)

func (k lensKind) String() string {
	return [...]string{"focus_item", "learned_threshold", "discovered_signal"}[k]
}

// lensObs is one observation read back from the evidence.
type lensObs struct {
	cycle   int
	metrics map[string]float64
	urgent  bool
}

// lensEvidence is the evidence entry this engine writes; the field order
// is the original project's, with metrics and alerts added so the rules
// can read the observation back next cycle.
type lensEvidence struct {
	Timestamp         string          `json:"timestamp"`
	Cycle             int             `json:"cycle"`
	Source            string          `json:"source"`
	Observation       string          `json:"observation"`
	Metrics           json.RawMessage `json:"metrics,omitempty"`
	Alerts            []string        `json:"alerts"`
	ItemsAdded        int             `json:"items_added"`
	ConfidenceChanges int             `json:"confidence_changes"`
}

// lensDeprecated is a deprecated_items entry.
type lensDeprecated struct {
	Item         string   `json:"item"`
	Kind         string   `json:"kind"`
	Confidence   float64  `json:"confidence"`
	Value        *float64 `json:"value,omitempty"`
	DeprecatedAt string   `json:"deprecated_at"`
	Reason       string   `json:"reason"`
}

// lensUpdate carries one UpdateLens call's working state.
type lensUpdate struct {
	lens   state.Lens
	domain string
	cycle  int
	ts     string
	res    LensResult
}

// UpdateLens is 5-E for the executed domain: it records this cycle's
// observation as evidence, applies the focus, threshold and signal rules
// over the last LensWindow observations, deprecates weak items, enforces
// the caps and logs every confidence change. The inputs are not modified.
func UpdateLens(l state.Lens, cl state.LensChangelog, in LensInput) (state.Lens, state.LensChangelog, LensResult) {
	u := &lensUpdate{lens: lensClone(l), domain: in.Domain, cycle: in.Cycle, ts: state.FormatTime(in.Now)}
	if u.domain == "" {
		u.domain = l.Domain
	}
	// A zero lens is a missing one: initialise it the way 1-A does.
	if u.lens.SchemaVersion == "" {
		u.lens.SchemaVersion = "1.0.0"
	}
	if u.lens.Domain == "" {
		u.lens.Domain = u.domain
	}

	cur, observed := lensCurrent(in.State)
	cur.cycle = in.Cycle
	if observed {
		// The rules read the last LensWindow observations, this one the
		// newest: only the evidence they need is decoded.
		obs := append(lensRecentObs(u.lens.Evidence, LensWindow-1), cur)
		u.focusRules(obs)
		u.thresholdRules(obs)
	}
	u.signalRules(in.CoAlerts)
	u.deprecateWeak()
	u.enforceItemCap()

	u.res.Observation = lensObservationText(observed, cur, in.State, u.res)
	tags, _ := lensAlertTags(in.State.Alerts)
	ev := lensEvidence{
		Timestamp: u.ts, Cycle: in.Cycle, Source: LensSource, Observation: u.res.Observation,
		Alerts: tags, ItemsAdded: u.res.ItemsAdded, ConfidenceChanges: u.res.ConfidenceChanges,
	}
	if observed {
		// An empty object, not an absent key: an observation without
		// metrics still tells the threshold rule whether an alert fired.
		m := cur.metrics
		if m == nil {
			m = map[string]float64{}
		}
		ev.Metrics, _ = json.Marshal(m)
	}
	b, _ := json.Marshal(ev)
	u.lens.Evidence = lensTail(append(u.lens.Evidence, json.RawMessage(b)), LensEvidenceCap)
	u.lens.LastUpdated = u.ts

	out := lensCloneChangelog(cl)
	if out.Domain == "" {
		out.Domain = u.domain
	}
	if out.SchemaVersion == "" {
		out.SchemaVersion = "1.0.0"
	}
	out.Entries = lensTail(append(out.Entries, u.res.Changes...), LensChangelogCap)
	return u.lens, out, u.res
}

// ActiveLens is the lens passed to skills: items at confidence >= 0.6.
// state.Lens.Active follows 1-A and passes every discovered signal; 5-E
// says only confident items are active, and signals start at 0.3
// unconfirmed, so they are filtered here too.
func ActiveLens(l state.Lens) state.Lens {
	out := lensClone(l.Active())
	out.DiscoveredSignals = nil
	for _, it := range l.DiscoveredSignals {
		if it.Confidence >= LensActiveConfidence {
			out.DiscoveredSignals = append(out.DiscoveredSignals, lensCloneItem(it))
		}
	}
	return out
}

// focusRules: a metric whose coefficient of variation over the window
// exceeds 0.25 deserves attention; once it settles the attention decays.
func (u *lensUpdate) focusRules(obs []lensObs) {
	names := map[string]bool{}
	for _, o := range obs {
		for m := range o.metrics {
			names[m] = true
		}
	}
	for _, m := range lensSorted(names) {
		var vals []float64
		for _, o := range obs {
			if v, ok := o.metrics[m]; ok {
				vals = append(vals, v)
			}
		}
		cv, ok := lensCV(vals)
		if !ok {
			continue
		}
		item := m + lensFocusSuffix
		i := lensFind(u.lens.FocusItems, item)
		high := cv > lensCVThreshold
		cmp := "<="
		if high {
			cmp = ">"
		}
		why := fmt.Sprintf("%s coefficient of variation %.2f %s 0.25 over %d observations", m, cv, cmp, len(vals))
		switch {
		case i >= 0 && high:
			u.confirm(&u.lens.FocusItems[i], why)
		case i >= 0:
			u.decay(&u.lens.FocusItems[i], why)
		case high:
			u.lens.FocusItems = append(u.lens.FocusItems, u.add(item, nil, why))
		}
	}
}

// thresholdRules read the step from the previous observation to this one.
// A metric is a leading indicator at value v when, with no alert at v, an
// alert followed: the item predicts "at or beyond v, an alert follows".
// Existing thresholds are judged on that prediction, so a recurrence
// confirms and a quiet observation after reaching v disconfirms.
func (u *lensUpdate) thresholdRules(obs []lensObs) {
	if len(obs) < 2 {
		return
	}
	prev, cur := obs[len(obs)-2], obs[len(obs)-1]
	if prev.urgent {
		// An alert already firing says nothing about where it starts.
		return
	}
	for _, m := range lensSorted(lensKeys(prev.metrics)) {
		p := prev.metrics[m]
		item := m + lensThresholdSuffix
		if i := lensFind(u.lens.LearnedThresholds, item); i >= 0 {
			it := &u.lens.LearnedThresholds[i]
			if it.Value == nil || !lensReached(p, *it.Value, lensDirection(*it)) {
				continue
			}
			if cur.urgent {
				u.confirm(it, fmt.Sprintf("%s was %s at cycle %d with no alert, and an alert followed at cycle %d", m, lensNum(p), prev.cycle, cur.cycle))
			} else {
				u.decay(it, fmt.Sprintf("%s was %s at cycle %d and no alert followed at cycle %d", m, lensNum(p), prev.cycle, cur.cycle))
			}
			continue
		}
		c, ok := cur.metrics[m]
		// A metric that did not move cannot have crossed anything, and
		// without a move there is no side for "beyond".
		if !cur.urgent || !ok || c == p {
			continue
		}
		dir := "above"
		if c < p {
			dir = "below"
		}
		it := u.add(item, &p, fmt.Sprintf("%s moved %s -> %s: no alert at cycle %d, alert at cycle %d", m, lensNum(p), lensNum(c), prev.cycle, cur.cycle))
		it.Extra = state.Extra{"direction": json.RawMessage(`"` + dir + `"`)}
		u.lens.LearnedThresholds = append(u.lens.LearnedThresholds, it)
	}
}

// signalRules: alerts of two domains that keep firing together are likely
// one cause seen twice.
func (u *lensUpdate) signalRules(co [][]string) {
	co = lensTail(co, LensWindow)
	sets := make([]map[string]bool, len(co))
	others := map[string]bool{}
	for i, c := range co {
		sets[i] = map[string]bool{}
		for _, d := range c {
			sets[i][d] = true
			if d != u.domain {
				others[d] = true
			}
		}
	}
	prefix := u.domain + " + "
	for _, it := range u.lens.DiscoveredSignals {
		if o, ok := strings.CutPrefix(it.Item, prefix); ok {
			if o, ok = strings.CutSuffix(o, lensSignalSuffix); ok && o != "" && o != u.domain {
				others[o] = true
			}
		}
	}
	for _, o := range lensSorted(others) {
		n := 0
		for _, s := range sets {
			if s[u.domain] && s[o] {
				n++
			}
		}
		item := prefix + o + lensSignalSuffix
		i := lensFind(u.lens.DiscoveredSignals, item)
		why := fmt.Sprintf("%s and %s alerted together in %d of the last %d cycles", u.domain, o, n, len(sets))
		switch {
		case i >= 0 && n >= lensCoOccurMin:
			u.confirm(&u.lens.DiscoveredSignals[i], why)
		case i >= 0 && len(sets) >= lensCoOccurMin:
			u.decay(&u.lens.DiscoveredSignals[i], why)
		case i < 0 && n >= lensCoOccurMin:
			u.lens.DiscoveredSignals = append(u.lens.DiscoveredSignals, u.add(item, nil, why))
		}
	}
}

// add returns a new item at the proposal confidence and logs it.
func (u *lensUpdate) add(item string, value *float64, why string) state.LensItem {
	after := lensProposed
	u.log(item, "added", nil, after, why)
	u.res.ItemsAdded++
	return state.LensItem{Item: item, Confidence: after, Value: value}
}

func (u *lensUpdate) confirm(it *state.LensItem, why string) {
	before := it.Confidence
	after := math.Min(1, lensRound(before+lensConfirmStep))
	if after <= before {
		// Already at the cap: logging a no-op every cycle would push
		// real history out of the 50-entry changelog.
		return
	}
	kind := "confirmed"
	if before < LensActiveConfidence && after >= LensActiveConfidence {
		kind = "promoted"
	}
	it.Confidence = after
	u.log(it.Item, kind, &before, after, why)
	u.res.ConfidenceChanges++
}

func (u *lensUpdate) decay(it *state.LensItem, why string) {
	before := it.Confidence
	after := math.Max(0, lensRound(before-lensDecayStep))
	if after >= before {
		return
	}
	it.Confidence = after
	u.log(it.Item, "decayed", &before, after, why)
	u.res.ConfidenceChanges++
}

func (u *lensUpdate) log(item, kind string, before *float64, after float64, why string) {
	delta := after
	if before != nil {
		b := *before
		before = &b
		delta = lensRound(after - b)
	}
	u.res.Changes = append(u.res.Changes, state.LensChange{
		Cycle: u.cycle, Timestamp: u.ts, Domain: u.domain, Item: item, ChangeType: kind,
		Before: before, After: &after, Delta: delta, Reason: why,
	})
}

// deprecateWeak moves every item below 0.1 to deprecated_items, including
// weak items the lens arrived with.
func (u *lensUpdate) deprecateWeak() {
	for k, list := range u.lists() {
		kept := (*list)[:0:0]
		for _, it := range *list {
			if it.Confidence < lensDeprecateBelow {
				u.deprecate(it, lensKind(k), fmt.Sprintf("confidence %s below 0.1", lensNum(it.Confidence)))
				continue
			}
			kept = append(kept, it)
		}
		*list = kept
	}
}

// enforceItemCap deprecates the lowest-confidence items beyond 50; among
// equal confidences the item later in the lens goes first, so long-held
// items outlive fresh proposals.
func (u *lensUpdate) enforceItemCap() {
	type ref struct {
		kind lensKind
		pos  int
		conf float64
	}
	var refs []ref
	for k, list := range u.lists() {
		for i, it := range *list {
			refs = append(refs, ref{lensKind(k), i, it.Confidence})
		}
	}
	if len(refs) <= LensItemCap {
		return
	}
	order := slices.Clone(refs)
	sort.SliceStable(order, func(a, b int) bool {
		if order[a].conf != order[b].conf {
			return order[a].conf < order[b].conf
		}
		if order[a].kind != order[b].kind {
			return order[a].kind > order[b].kind
		}
		return order[a].pos > order[b].pos
	})
	drop := map[ref]bool{}
	for _, r := range order[:len(refs)-LensItemCap] {
		drop[r] = true
	}
	for k, list := range u.lists() {
		kept := (*list)[:0:0]
		for i, it := range *list {
			if drop[ref{lensKind(k), i, it.Confidence}] {
				u.deprecate(it, lensKind(k), fmt.Sprintf("item cap %d: lowest confidence dropped", LensItemCap))
				continue
			}
			kept = append(kept, it)
		}
		*list = kept
	}
}

func (u *lensUpdate) lists() []*[]state.LensItem {
	return []*[]state.LensItem{&u.lens.FocusItems, &u.lens.LearnedThresholds, &u.lens.DiscoveredSignals}
}

// deprecate records the item in deprecated_items (keeping its unknown
// keys) and logs it. The changelog entry keeps before = after: the
// confidence did not change, the item left the lens (the decay that caused
// it has its own entry).
func (u *lensUpdate) deprecate(it state.LensItem, k lensKind, why string) {
	b, _ := json.Marshal(lensDeprecated{Item: it.Item, Kind: k.String(), Confidence: it.Confidence, Value: it.Value, DeprecatedAt: u.ts, Reason: why})
	b = lensWithExtra(b, it.Extra)
	u.lens.DeprecatedItems = lensTail(append(u.lens.DeprecatedItems, json.RawMessage(b)), LensDeprecatedCap)
	c := it.Confidence
	u.log(it.Item, "deprecated", &c, c, why)
	u.res.Deprecated++
}

// lensWithExtra appends the keys of extra that b does not already have,
// sorted, so a deprecated item keeps what other tools stored on it.
func lensWithExtra(b []byte, extra state.Extra) []byte {
	var known map[string]json.RawMessage
	_ = json.Unmarshal(b, &known)
	var keys []string
	for k := range extra {
		if _, ok := known[k]; !ok {
			keys = append(keys, k)
		}
	}
	if len(keys) == 0 {
		return b
	}
	sort.Strings(keys)
	var buf bytes.Buffer
	buf.Write(b[:len(b)-1])
	for _, k := range keys {
		kb, _ := json.Marshal(k)
		buf.WriteByte(',')
		buf.Write(kb)
		buf.WriteByte(':')
		buf.Write(extra[k])
	}
	buf.WriteByte('}')
	return buf.Bytes()
}

// lensCurrent turns this cycle's domain state into an observation.
func lensCurrent(ds state.DomainState) (lensObs, bool) {
	observed := ds.Found || ds.Metrics != nil || ds.Alerts != nil
	o := lensObs{}
	for _, k := range lensFirstKeys(ds.Metrics) {
		v := ds.Metrics[k]
		// JSON has no NaN or infinity; such a value cannot be stored.
		if math.IsNaN(v) || math.IsInf(v, 0) {
			continue
		}
		if o.metrics == nil {
			o.metrics = map[string]float64{}
		}
		o.metrics[k] = v
	}
	for _, a := range ds.Alerts {
		if a.Urgent() {
			o.urgent = true
		}
	}
	return o, observed
}

// lensRecentObs is the last n observations the evidence holds, oldest
// first: the entries are read back from the newest until n are found.
func lensRecentObs(evidence []json.RawMessage, n int) []lensObs {
	var obs []lensObs
	for i := len(evidence) - 1; i >= 0 && len(obs) < n; i-- {
		if o, ok := lensReadObs(evidence[i]); ok {
			obs = append(obs, o)
		}
	}
	slices.Reverse(obs)
	return obs
}

// lensReadObs reads an evidence entry back as an observation; entries
// without a metrics object (older evidence, the original project's, or a
// cycle without a state file) are not observations.
func lensReadObs(raw json.RawMessage) (lensObs, bool) {
	var m map[string]json.RawMessage
	if json.Unmarshal(raw, &m) != nil {
		return lensObs{}, false
	}
	var metrics map[string]json.RawMessage
	if mr, ok := m["metrics"]; !ok || json.Unmarshal(mr, &metrics) != nil || metrics == nil {
		return lensObs{}, false
	}
	o := lensObs{metrics: map[string]float64{}}
	for _, k := range lensFirstKeys(metrics) {
		var f float64
		if json.Unmarshal(metrics[k], &f) == nil {
			o.metrics[k] = f
		}
	}
	_ = json.Unmarshal(m["cycle"], &o.cycle)
	var alerts []json.RawMessage
	_ = json.Unmarshal(m["alerts"], &alerts)
	o.urgent = len(alerts) > 0
	return o, true
}

// lensAlertTags lists the first LensAlertsCap warning and critical alerts
// as "severity:id" (or the severity alone when the alert has no id, the id
// cut at LensTagMax characters), and how many urgent alerts there were.
func lensAlertTags(alerts []state.Alert) ([]string, int) {
	tags := []string{}
	n := 0
	for _, a := range alerts {
		if !a.Urgent() {
			continue
		}
		n++
		if len(tags) == LensAlertsCap {
			continue
		}
		t := a.Severity
		if a.ID != "" {
			id, _ := ClipText(a.ID, LensTagMax)
			t += ":" + id
		}
		tags = append(tags, t)
	}
	return tags, n
}

func lensObservationText(observed bool, cur lensObs, ds state.DomainState, r LensResult) string {
	if !observed {
		return fmt.Sprintf("no domain state file; lens: %d added, %d changed, %d deprecated", r.ItemsAdded, r.ConfidenceChanges, r.Deprecated)
	}
	_, urgent := lensAlertTags(ds.Alerts)
	return fmt.Sprintf("%d metrics, %d urgent alerts; lens: %d added, %d changed, %d deprecated",
		len(cur.metrics), urgent, r.ItemsAdded, r.ConfidenceChanges, r.Deprecated)
}

// lensCV is the population coefficient of variation; it is undefined
// with fewer than 3 values or a zero mean.
func lensCV(vals []float64) (float64, bool) {
	if len(vals) < lensMinValues {
		return 0, false
	}
	var sum float64
	for _, v := range vals {
		sum += v
	}
	mean := sum / float64(len(vals))
	if mean == 0 {
		return 0, false
	}
	var ss float64
	for _, v := range vals {
		ss += (v - mean) * (v - mean)
	}
	return math.Sqrt(ss/float64(len(vals))) / math.Abs(mean), true
}

// lensDirection is the side of a learned threshold where alerts follow;
// a threshold written without one is an upper limit, the common case
// (latency, error rate).
func lensDirection(it state.LensItem) string {
	var d string
	_ = json.Unmarshal(it.Extra["direction"], &d)
	if d == "below" {
		return d
	}
	return "above"
}

func lensReached(x, v float64, dir string) bool {
	if dir == "below" {
		return x <= v
	}
	return x >= v
}

func lensFind(list []state.LensItem, item string) int {
	for i, it := range list {
		if it.Item == item {
			return i
		}
	}
	return -1
}

// lensRound keeps confidences at 3 places so 0.3 + 0.1 + 0.1 + 0.1 is
// exactly 0.6 and crosses the activation line.
func lensRound(x float64) float64 { return math.Round(x*1000) / 1000 }

func lensNum(x float64) string { return fmt.Sprintf("%g", lensRound(x)) }

func lensKeys[V any](m map[string]V) map[string]bool {
	out := make(map[string]bool, len(m))
	for k := range m {
		out[k] = true
	}
	return out
}

// lensFirstKeys is m's keys in order, at most LensMetricsCap of them;
// a name longer than LensTagMax bytes is left out, since the evidence
// and the items named after it would carry it for LensEvidenceCap cycles.
func lensFirstKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, min(len(m), 4*LensMetricsCap))
	for k := range m {
		if len(k) <= LensTagMax {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	return keys[:min(len(keys), LensMetricsCap)]
}

func lensSorted(set map[string]bool) []string {
	out := make([]string, 0, len(set))
	for k := range set {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func lensTail[T any](s []T, n int) []T {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}

func lensCloneItem(it state.LensItem) state.LensItem {
	if it.Value != nil {
		v := *it.Value
		it.Value = &v
	}
	it.Extra = maps.Clone(it.Extra)
	return it
}

func lensCloneItems(list []state.LensItem) []state.LensItem {
	if list == nil {
		return nil
	}
	out := make([]state.LensItem, len(list))
	for i, it := range list {
		out[i] = lensCloneItem(it)
	}
	return out
}

func lensCloneRaw(list []json.RawMessage) []json.RawMessage {
	if list == nil {
		return nil
	}
	out := make([]json.RawMessage, len(list))
	for i, r := range list {
		out[i] = bytes.Clone(r)
	}
	return out
}

// lensClone deep-copies a lens so the caller's value is never modified.
func lensClone(l state.Lens) state.Lens {
	l.FocusItems = lensCloneItems(l.FocusItems)
	l.LearnedThresholds = lensCloneItems(l.LearnedThresholds)
	l.DiscoveredSignals = lensCloneItems(l.DiscoveredSignals)
	l.Evidence = lensCloneRaw(l.Evidence)
	l.DeprecatedItems = lensCloneRaw(l.DeprecatedItems)
	l.Extra = maps.Clone(l.Extra)
	return l
}

func lensCloneChangelog(cl state.LensChangelog) state.LensChangelog {
	cl.Extra = maps.Clone(cl.Extra)
	if cl.Entries == nil {
		return cl
	}
	entries := make([]state.LensChange, len(cl.Entries))
	for i, e := range cl.Entries {
		if e.Before != nil {
			b := *e.Before
			e.Before = &b
		}
		if e.After != nil {
			a := *e.After
			e.After = &a
		}
		e.Extra = maps.Clone(e.Extra)
		entries[i] = e
	}
	cl.Entries = entries
	return cl
}

// ReviewInput is what the contrarian lens review needs.
type ReviewInput struct {
	Cycle int
	// Interval is memory.contrarian_check_interval; below 1 there is no
	// review.
	Interval int
	Domain   string
	// Outputs holds had_output of the domain's executed cycles, oldest
	// first, over the longest history the caller has (LensOutputs derives
	// it from decision-log entries).
	Outputs []bool
}

// LensReview is the contrarian lens review: every Interval cycles it
// compares the domain's had_output rate over its last 5 executed cycles
// with its first 3, and asks for a lens review memo when it fell, because
// a lens that narrows attention can also blind the domain. It needs at
// least 4 executions so the recent window is not just the first one.
func LensReview(in ReviewInput) (bool, string) {
	if in.Interval < 1 || in.Cycle < 1 || in.Cycle%in.Interval != 0 || len(in.Outputs) <= lensReviewFirst {
		return false, ""
	}
	count := func(bs []bool) int {
		n := 0
		for _, b := range bs {
			if b {
				n++
			}
		}
		return n
	}
	first := in.Outputs[:lensReviewFirst]
	recent := lensTail(in.Outputs, lensReviewRecent)
	f, r := count(first), count(recent)
	// Compare the fractions exactly: r/len(recent) < f/len(first).
	if r*len(first) >= f*len(recent) {
		return false, ""
	}
	pct := func(n, d int) string { return fmt.Sprintf("%.0f%%", 100*float64(n)/float64(d)) }
	return true, fmt.Sprintf("lens review: %s output rate fell from %s to %s", in.Domain, pct(f, len(first)), pct(r, len(recent)))
}

// LensOutputs lists had_output of the domain's executed cycles in log
// order: skips, blocked and observe-only entries did not run the domain,
// and entries without had_output (older logs) say nothing about it.
func LensOutputs(log []state.DecisionEntry, domain string) []bool {
	var out []bool
	for _, e := range log {
		if e.SelectedDomain != domain || e.HadOutput == nil {
			continue
		}
		switch e.Action {
		case "skip", "observe_only", "blocked":
			continue
		}
		out = append(out, *e.HadOutput)
	}
	return out
}
