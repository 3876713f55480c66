package reflect

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"path"
	"slices"
	"sort"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/ooda-loop/ooda/internal/act"
	"github.com/ooda-loop/ooda/internal/config"
	"github.com/ooda-loop/ooda/internal/state"
)

// PendingCap is the most items the pending list holds (5-C2, 6-C2); the
// lowest-priority overflow is superseded so the queue stays a short list
// of things worth doing rather than a backlog nobody reads.
const PendingCap = 20

// CompletedKeep is how many completed items the queue keeps (6-C2): enough
// for the scorecard's resolution rate and for dedup, without growing forever.
const CompletedKeep = 30

// DuplicateThreshold is the title similarity (Jaccard over significant
// words) at or above which a reported action repeats a queued one (5-C2).
const DuplicateThreshold = 0.8

// MaxReportActions is the most actions taken from one report (5-C2); the
// rest are dropped with one warning. The pending list keeps PendingCap
// items anyway, and a report of millions of actions must not hold the
// cycle (and its lock) while each is scored and compared.
const MaxReportActions = 200

// Bounds on the free text a report puts into action_queue.json. A report
// may be 16 MiB (safety.max_read_mib), and the queue keeps up to PendingCap
// pending and CompletedKeep completed items: without these, 25 titles of
// 600,000 characters grow the queue past the read limit, after which it
// is refused and set aside with every pending action in it.
const (
	// TitleMax is the most characters (runes) of an action title kept; a
	// longer title is cut at a rune boundary and ends with "…".
	TitleMax = 500
	// RelatedFilesMax is the most related_files entries kept per action.
	RelatedFilesMax = 50
	// RelatedFileMax is the longest related_files entry kept, in bytes
	// (PATH_MAX); a longer one names no file and is dropped, not cut,
	// since a cut path would name a different file.
	RelatedFileMax = 4096
)

// ClipText cuts s to at most n runes, at a rune boundary, the last being
// "…" when anything was cut; it reports whether it cut. Invalid UTF-8 is
// not repaired here; JSON encoding replaces it.
func ClipText(s string, n int) (string, bool) {
	if len(s) <= n {
		return s, false // n bytes hold at most n runes
	}
	count := 0
	for i := range s {
		if count == n-1 {
			if utf8.RuneCountInString(s[i:]) <= 1 {
				return s, false
			}
			return s[:i] + "…", true
		}
		count++
	}
	return s, false
}

// InProgressCap bounds the in-progress list (6-C2). Only the
// implementation skill moves items there, one or a few at a time; a list
// longer than this is a damaged file, and its overflow is superseded like
// pending's.
const InProgressCap = 100

// Action statuses the queue rules read or write.
const (
	actionPending    = "pending"
	actionInProgress = "in_progress"
	actionBlocked    = "blocked"
	actionSuperseded = "superseded"
)

// actionLastDecayKey is the item key recording the last decay, kept among
// the item's unknown keys so the shared file format needs no new field.
const actionLastDecayKey = "last_decay_at"

// actionStopWords carry no meaning in an action title: "Add tests for the
// parser" and "add tests to parser" must compare as the same action.
var actionStopWords = map[string]bool{
	"the": true, "a": true, "an": true, "is": true,
	"for": true, "in": true, "to": true, "of": true,
}

// ExtractInput is what 5-C2 needs beyond the queue and the reported actions.
type ExtractInput struct {
	// Cycle is the number of the cycle being run; it names the new items
	// ("A-<cycle>-<n>").
	Cycle int
	// Domain is the executed domain, recorded as each item's source_domain.
	Domain string
	// Skill is the skill that reported the actions.
	Skill string
	// ImplementationSkill is implementation.primary_skill: actions reported
	// by it are not extracted, because the implementation skill consumes the
	// queue and must not refill it with its own follow-ups.
	ImplementationSkill string
	// RiceExtensions is scoring.rice_extensions: extension label to weight.
	RiceExtensions map[string]float64
	// RiskRules is safety.risk_rules, raw (see ExtractActions for the format).
	RiskRules json.RawMessage
	// Now is the cycle's instant, recorded as extracted_at.
	Now time.Time
}

// Duplicate is a reported action dropped because a queued item already
// says the same thing.
type Duplicate struct {
	Title      string
	ExistingID string
	Similarity float64
}

// Rejection is a reported action that could not become a queue item.
type Rejection struct {
	// Index is the action's position in the report.
	Index  int
	Title  string
	Reason string
}

// ExtractResult says what ExtractActions did.
type ExtractResult struct {
	// Skipped is true when the reporting skill is the implementation skill
	// and nothing was extracted.
	Skipped bool
	// Added are the ids of the new pending items, in report order.
	Added      []string
	Duplicates []Duplicate
	Rejected   []Rejection
	// Superseded are the ids moved to completed by the pending cap.
	Superseded []string
	// Warnings name configuration that was ignored (unusable risk rules).
	Warnings []string
}

// ExtractActions is 5-C2: it turns the actions a skill reported into
// pending queue items and returns the new queue; q and actions are not
// modified.
//
// Nothing is extracted when in.Skill is the implementation skill. Otherwise
// each action needs a non-empty title (missing numbers count as 0, so the
// item scores 0) and scores
//
//	rice_score = reach × impact × confidence / max(effort, 0.5) × 100
//	             × (1 + Σ extension_score × extension_weight)
//
// summed over the action's extensions that scoring.rice_extensions
// configures (other extension labels are ignored), rounded to 2 decimals.
// An action whose score is not a finite number is rejected.
//
// An action whose title matches an item already queued (pending,
// in_progress or completed) or one added earlier in the same call, with a
// Jaccard similarity of at least DuplicateThreshold over the lower-cased
// words of the titles minus the stop words (the, a, an, is, for, in, to,
// of), is a duplicate: the queued item stays as it is. Two titles with no
// significant word at all are duplicates of each other; queued items
// without a title are never matched.
//
// A new item gets id "A-<cycle>-<n>" (the first n from 1 not already used
// in the queue), status "pending", effective_rice = rice_score,
// decay_applied 0, extracted_at = in.Now, no pr_number, and the risk tier of
// the first safety.risk_rules entry that matches any of its related files
// (none when no rule matches).
//
// safety.risk_rules is a JSON array of objects
//
//	[{"pattern": "migrations/*", "tier": 3}, {"pattern": "*.md", "tier": 1}]
//
// where pattern is a shell glob (path.Match) on the slash-separated file
// path relative to the project root, a pattern ending in "/*" or "/**" also
// matches every file below that directory at any depth, and tier is an
// integer. Rules are tried in order. An absent, null or empty value means no
// rules; a value that is not such an array is ignored as a whole, and a rule
// without a valid pattern or an integer tier is skipped; both are reported
// in Warnings.
//
// Finally pending is capped at PendingCap: the items with the lowest
// effective_rice (ties: the most recently extracted, then the greater id)
// move to completed with status "superseded". Pending items without an
// effective_rice get it from their rice_score first, as 6-C2 does.
func ExtractActions(q state.ActionQueue, actions []act.ReportAction, in ExtractInput) (state.ActionQueue, ExtractResult) {
	out := cloneActionQueue(q)
	var res ExtractResult
	if impl := config.SkillKey(in.ImplementationSkill); impl != "" && config.SkillKey(in.Skill) == impl {
		res.Skipped = true
		return out, res
	}
	rules, warnings := parseRiskRules(in.RiskRules)
	res.Warnings = warnings
	if n := len(actions); n > MaxReportActions {
		res.Warnings = append(res.Warnings, fmt.Sprintf("the report lists %d actions; only the first %d are taken, %d dropped", n, MaxReportActions, n-MaxReportActions))
		actions = actions[:MaxReportActions]
	}

	// The dedup corpus is every queued item plus what this call adds, so a
	// report that repeats itself yields one item.
	used := map[string]bool{}
	var queued []dedupEntry
	for _, list := range [][]state.Action{out.Pending, out.InProgress, out.Completed} {
		for _, a := range list {
			used[a.ID] = true
			// A legacy item without a title says nothing an action could
			// repeat; one its skill resolved (the finding was fixed) must
			// not swallow the same finding when it comes back.
			if strings.TrimSpace(a.Title) != "" && !resolvedByItsSkill(a) {
				queued = append(queued, dedupEntry{a.ID, actionTitleTokens(a.Title)})
			}
		}
	}
	// Titles are cut before anything reads them, so de-duplication,
	// messages and the queue all see the stored title.
	titles := make([]string, len(actions))
	reported := make([]map[string]bool, len(actions))
	cut := 0
	for i, ra := range actions {
		t, clipped := ClipText(strings.TrimSpace(ra.Title), TitleMax)
		if clipped {
			cut++
		}
		titles[i] = t
		reported[i] = actionTitleTokens(t)
	}
	if cut > 0 {
		res.Warnings = append(res.Warnings, fmt.Sprintf("%d action title(s) longer than %d characters were cut (actions[].title)", cut, TitleMax))
	}
	filesDropped := 0
	corpus := newDedupIndex(queued, reported)
	n := 0
	nextID := func() string {
		for {
			n++
			id := fmt.Sprintf("A-%d-%d", in.Cycle, n)
			if !used[id] {
				used[id] = true
				return id
			}
		}
	}
	extractedAt := state.FormatTime(in.Now)

	for i, ra := range actions {
		title := titles[i]
		if title == "" {
			res.Rejected = append(res.Rejected, Rejection{Index: i, Title: title, Reason: "title is empty"})
			continue
		}
		rice, ok := actionRice(ra, in.RiceExtensions)
		if !ok {
			res.Rejected = append(res.Rejected, Rejection{Index: i, Title: title, Reason: "RICE score is not a finite number"})
			continue
		}
		tokens := reported[i]
		if k, s, ok := corpus.first(tokens); ok {
			res.Duplicates = append(res.Duplicates, Duplicate{Title: title, ExistingID: k, Similarity: s})
			continue
		}
		files, dropped := boundRelatedFiles(ra.RelatedFiles)
		filesDropped += dropped
		item := state.Action{
			ID:            nextID(),
			Title:         title,
			SourceDomain:  in.Domain,
			RiceScore:     actionFloat(rice),
			EffectiveRice: actionFloat(rice),
			RelatedFiles:  files,
			Status:        actionPending,
			ExtractedAt:   extractedAt,
			DecayApplied:  actionFloat(0),
			RiskTier:      riskTierFor(files, rules),
		}
		out.Pending = append(out.Pending, item)
		corpus.add(dedupEntry{item.ID, tokens})
		res.Added = append(res.Added, item.ID)
	}

	if filesDropped > 0 {
		res.Warnings = append(res.Warnings, fmt.Sprintf("%d related_files entr(ies) dropped: at most %d per action are kept, each at most %d bytes (actions[].related_files)", filesDropped, RelatedFilesMax, RelatedFileMax))
	}

	initEffectiveRice(out.Pending)
	out.Pending, out.Completed, res.Superseded = capPending(out.Pending, out.Completed, false)
	return out, res
}

// boundRelatedFiles keeps the first RelatedFilesMax entries of files no
// longer than RelatedFileMax bytes, and says how many it dropped.
func boundRelatedFiles(files []string) ([]string, int) {
	var kept []string
	for _, f := range files {
		if len(f) <= RelatedFileMax && len(kept) < RelatedFilesMax {
			kept = append(kept, f)
		}
	}
	return kept, len(files) - len(kept)
}

// PersistQueue is 6-C2: pending and in_progress items without an
// effective_rice get their rice_score (0 when both are missing), pending is
// sorted by effective_rice, highest first (ties: the earlier extracted_at,
// then the smaller id; items without a readable extracted_at go after
// those with one), pending is capped at PendingCap with the overflow moved
// to completed as "superseded", in_progress keeps its first InProgressCap
// items with the rest superseded the same way, and completed keeps its last
// CompletedKeep items. q is not modified.
func PersistQueue(q state.ActionQueue) state.ActionQueue {
	out := cloneActionQueue(q)
	initEffectiveRice(out.Pending)
	initEffectiveRice(out.InProgress)
	out.Pending, out.Completed, _ = capPending(out.Pending, out.Completed, true)
	if len(out.InProgress) > InProgressCap {
		for _, a := range out.InProgress[InProgressCap:] {
			a.Status = actionSuperseded
			out.Completed = append(out.Completed, a)
		}
		out.InProgress = out.InProgress[:InProgressCap]
	}
	if len(out.Completed) > CompletedKeep {
		out.Completed = slices.Clone(out.Completed[len(out.Completed)-CompletedKeep:])
	}
	return out
}

// DecayInput is what 6-C6 needs beyond the queue.
type DecayInput struct {
	// Now is the cycle's instant; ages are measured up to it.
	Now time.Time
	// DecayDays is memory.action_queue_decay_days (D); D ≤ 0 disables decay.
	DecayDays float64
	// DecayAmount is memory.action_queue_decay_amount, the factor added per
	// D days of age.
	DecayAmount float64
	// InProgressAtStart holds the ids of the items that were in progress
	// when the cycle started: only those can have stalled, an item picked up
	// this cycle has not had its chance yet.
	InProgressAtStart map[string]bool
	// OpenPRs holds the numbers of the pull requests open on the forge.
	OpenPRs map[int]bool
}

// DecayedAction is one pending item whose priority decayed.
type DecayedAction struct {
	ID            string
	Factor        float64
	EffectiveRice float64
}

// RequeuedAction is an in-progress item sent back to pending, with the
// memo the engine records for it.
type RequeuedAction struct {
	ID   string
	Memo string
}

// DecayResult says what DecayQueue changed.
type DecayResult struct {
	Decayed []DecayedAction
	// Superseded are the decayed items whose effective_rice reached 0.
	Superseded []string
	Requeued   []RequeuedAction
	// CompletedBlocked are the blocked items moved to completed.
	CompletedBlocked []string
	// Warnings name items whose timestamps could not be read.
	Warnings []string
}

// DecayQueue is 6-C6, queue hygiene; q is not modified.
//
// Blocked items (status "blocked", in pending or in_progress) move to
// completed, keeping their status, since nothing will pick them up again.
//
// Each pending item aged age ≥ D days since extracted_at (D =
// in.DecayDays, decay off when D ≤ 0) decays by
//
//	factor = min((⌊(age − D) / D⌋ + 1) × amount, 1)
//	effective_rice = rice_score × (1 − factor), decay_applied = factor
//
// unless it already decayed less than D days ago (its "last_decay_at" key,
// written here as RFC 3339 UTC). The factor is measured from rice_score,
// never from the previous effective_rice, so decays do not compound; an
// item without a rice_score takes its effective_rice as rice_score first.
// An item whose effective_rice falls to 0 or below (rounded to 2 decimals)
// moves to completed as "superseded". Items without a readable
// extracted_at are left alone and reported in Warnings.
//
// Then in_progress items that were already in progress at cycle start
// (in.InProgressAtStart) and have no open pull request (no pr_number, or
// one not in in.OpenPRs) return to pending with status "pending", each with
// a memo; they are not decayed in the cycle they return. A pending item
// with status "in_progress" counts as in progress: it is not decayed, and
// it returns to pending the same way or else moves to in_progress. The
// result is not re-sorted: PersistQueue orders and caps pending.
func DecayQueue(q state.ActionQueue, in DecayInput) (state.ActionQueue, DecayResult) {
	out := cloneActionQueue(q)
	var res DecayResult

	// Blocked first, so a blocked item is neither decayed nor requeued.
	var pending, inProgress []state.Action
	var markedInProgress []state.Action
	for _, a := range out.Pending {
		if a.Status == actionBlocked {
			out.Completed = append(out.Completed, a)
			res.CompletedBlocked = append(res.CompletedBlocked, a.ID)
			continue
		}
		if a.Status == actionInProgress {
			// Marked in progress where it stands (the original project's
			// implementation skill does so): it is in progress, so it is
			// not decayed, and it stalls like any other.
			markedInProgress = append(markedInProgress, a)
			continue
		}
		pending = append(pending, a)
	}
	for _, a := range slices.Concat(out.InProgress, markedInProgress) {
		if a.Status == actionBlocked {
			out.Completed = append(out.Completed, a)
			res.CompletedBlocked = append(res.CompletedBlocked, a.ID)
			continue
		}
		inProgress = append(inProgress, a)
	}

	if in.DecayDays > 0 && in.DecayAmount > 0 {
		kept := pending[:0:0]
		for _, a := range pending {
			d, superseded, warn := decayAction(&a, in)
			if warn != "" {
				res.Warnings = append(res.Warnings, warn)
			}
			if d != nil {
				res.Decayed = append(res.Decayed, *d)
			}
			if superseded {
				a.Status = actionSuperseded
				out.Completed = append(out.Completed, a)
				res.Superseded = append(res.Superseded, a.ID)
				continue
			}
			kept = append(kept, a)
		}
		pending = kept
	}

	var stillInProgress []state.Action
	for _, a := range inProgress {
		open := a.PRNumber != nil && in.OpenPRs[*a.PRNumber]
		if !in.InProgressAtStart[a.ID] || open {
			stillInProgress = append(stillInProgress, a)
			continue
		}
		a.Status = actionPending
		pending = append(pending, a)
		detail := ""
		if a.PRNumber != nil {
			detail = fmt.Sprintf(" (PR #%d is not open)", *a.PRNumber)
		}
		res.Requeued = append(res.Requeued, RequeuedAction{
			ID:   a.ID,
			Memo: fmt.Sprintf("Action %s %q returned to pending: in progress since before this cycle with no open pull request%s.", a.ID, a.Title, detail),
		})
	}

	out.Pending, out.InProgress = pending, stillInProgress
	return out, res
}

// decayAction applies one decay to a pending item in place. It returns the
// decay (nil when none was due), whether the item is now worthless, and a
// warning when its timestamps could not be read.
func decayAction(a *state.Action, in DecayInput) (*DecayedAction, bool, string) {
	extracted, ok := state.ParseTime(a.ExtractedAt)
	if !ok {
		return nil, false, fmt.Sprintf("action %s: extracted_at %q is not a time; not decayed", a.ID, a.ExtractedAt)
	}
	age := in.Now.Sub(extracted).Hours() / 24
	if age < in.DecayDays {
		return nil, false, ""
	}
	warn := ""
	if raw, ok := a.Extra[actionLastDecayKey]; ok {
		if last, ok := actionParseTimeJSON(raw); ok {
			if in.Now.Sub(last).Hours()/24 < in.DecayDays {
				return nil, false, ""
			}
		} else {
			// An unreadable record cannot hold the decay back; the factor is
			// absolute, so decaying again costs the item nothing extra.
			warn = fmt.Sprintf("action %s: last_decay_at %s is not a time; ignored", a.ID, string(raw))
		}
	}
	steps := math.Floor((age-in.DecayDays)/in.DecayDays) + 1
	factor := math.Min(steps*in.DecayAmount, 1)
	// 3 × 0.05 is 0.15000000000000002 in binary; the file should say 0.15.
	factor = math.Round(factor*1e6) / 1e6

	if a.RiceScore == nil {
		a.RiceScore = actionFloat(a.Rice())
	}
	eff := actionRound2(*a.RiceScore * (1 - factor))
	a.EffectiveRice = actionFloat(eff)
	a.DecayApplied = actionFloat(factor)
	extra := maps.Clone(a.Extra)
	if extra == nil {
		extra = state.Extra{}
	}
	stamp, _ := json.Marshal(state.FormatTime(in.Now))
	extra[actionLastDecayKey] = stamp
	a.Extra = extra
	return &DecayedAction{ID: a.ID, Factor: factor, EffectiveRice: eff}, eff <= 0, warn
}

// actionParseTimeJSON reads a JSON string holding a timestamp.
func actionParseTimeJSON(raw json.RawMessage) (time.Time, bool) {
	var s string
	if json.Unmarshal(raw, &s) != nil {
		return time.Time{}, false
	}
	return state.ParseTime(s)
}

// actionRice scores one reported action; ok is false when the score is
// not a finite number (a NaN or an overflow must never reach the file).
func actionRice(ra act.ReportAction, weights map[string]float64) (float64, bool) {
	rice := ra.Reach * ra.Impact * ra.Confidence / math.Max(ra.Effort, 0.5) * 100
	// Sorted labels: float addition is not associative, and the same
	// report must score the same on every run. The configured labels are
	// walked, not the report's: a report naming a million extensions costs
	// nothing more.
	labels := slices.Sorted(maps.Keys(weights))
	sum := 0.0
	for _, l := range labels {
		if v, ok := ra.Extensions[l]; ok {
			sum += v * weights[l]
		}
	}
	rice *= 1 + sum
	if math.IsNaN(rice) || math.IsInf(rice, 0) {
		return 0, false
	}
	rice = actionRound2(rice)
	if math.IsNaN(rice) || math.IsInf(rice, 0) {
		return 0, false
	}
	return rice, true
}

// actionRound2 rounds to 2 decimals, the precision RICE scores are stored at.
func actionRound2(x float64) float64 {
	r := math.Round(x*100) / 100
	if math.IsInf(r, 0) {
		// x*100 overflowed although x is finite: x has no decimals to round.
		return x
	}
	if r == 0 {
		return 0 // no negative zero in the file
	}
	return r
}

// actionTitleTokens is the set of significant words of a title: lower-cased,
// split at anything that is not a letter or a digit, stop words dropped.
func actionTitleTokens(title string) map[string]bool {
	set := map[string]bool{}
	words := strings.FieldsFunc(strings.ToLower(title), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	})
	for _, w := range words {
		if !actionStopWords[w] {
			set[w] = true
		}
	}
	return set
}

// dedupEntry is one title of the dedup corpus: its item id and its
// significant words.
type dedupEntry struct {
	id     string
	tokens map[string]bool
}

// dedupIndex finds, for a title, the first corpus entry (in insertion
// order) whose similarity reaches DuplicateThreshold, without comparing the
// title with every entry: a prefix-filtered inverted index.
//
// Words are ranked once, rarest first, over every title the call can see.
// Two sets with Jaccard similarity ≥ t share at least ⌈t·|A|⌉ words, so,
// sorted by that rank, the first |A| − ⌈t·|A|⌉ + 1 words of one and the
// first |B| − ⌈t·|B|⌉ + 1 of the other have a word in common. Each entry is
// indexed under its prefix words only and a title probes with its own;
// every candidate found is then compared exactly, with actionJaccard's
// formula, so the answer is the linear scan's, at the cost of the entries
// that share a rare word.
type dedupIndex struct {
	ids []string
	// sets are the entries' words as ranks, ascending.
	sets    [][]int
	rank    map[string]int
	posting map[int][]int
	// empty is the first entry without any significant word (-1: none):
	// two empty sets are identical, and no word leads to them.
	empty int
	// seen marks candidates already compared in the current probe.
	seen  []int
	probe int
}

// newDedupIndex indexes queued and ranks the words of queued and reported
// (the titles that may be added later; a word outside both is ranked when
// first met).
func newDedupIndex(queued []dedupEntry, reported []map[string]bool) *dedupIndex {
	freq := map[string]int{}
	for _, e := range queued {
		for w := range e.tokens {
			freq[w]++
		}
	}
	for _, t := range reported {
		for w := range t {
			freq[w]++
		}
	}
	type counted struct {
		word string
		n    int
	}
	words := make([]counted, 0, len(freq))
	for w, n := range freq {
		words = append(words, counted{w, n})
	}
	slices.SortFunc(words, func(a, b counted) int {
		if a.n != b.n {
			return a.n - b.n
		}
		return strings.Compare(a.word, b.word)
	})
	x := &dedupIndex{rank: make(map[string]int, len(words)), posting: map[int][]int{}, empty: -1}
	for i, w := range words {
		x.rank[w.word] = i
	}
	for _, e := range queued {
		x.add(e)
	}
	return x
}

// ranks is t as ascending word ranks.
func (x *dedupIndex) ranks(t map[string]bool) []int {
	out := make([]int, 0, len(t))
	for w := range t {
		r, ok := x.rank[w]
		if !ok {
			r = len(x.rank)
			x.rank[w] = r
		}
		out = append(out, r)
	}
	slices.Sort(out)
	return out
}

// prefixLen is how many of a set's rarest words it is indexed under (or
// probes with).
func prefixLen(n int) int {
	// The margin keeps ⌈t·n⌉ from coming out one too high when t·n is an
	// integer that floating point overshoots (0.8 × 5).
	need := max(1, int(math.Ceil(DuplicateThreshold*float64(n)-1e-9)))
	return n - need + 1
}

func (x *dedupIndex) add(e dedupEntry) {
	i := len(x.ids)
	set := x.ranks(e.tokens)
	x.ids = append(x.ids, e.id)
	x.sets = append(x.sets, set)
	x.seen = append(x.seen, 0)
	if len(set) == 0 {
		if x.empty < 0 {
			x.empty = i
		}
		return
	}
	for _, r := range set[:prefixLen(len(set))] {
		x.posting[r] = append(x.posting[r], i)
	}
}

// first returns the id and similarity of the first entry t duplicates.
func (x *dedupIndex) first(t map[string]bool) (string, float64, bool) {
	if len(t) == 0 {
		if x.empty < 0 {
			return "", 0, false
		}
		return x.ids[x.empty], 1, true
	}
	set := x.ranks(t)
	x.probe++
	best, bestSim := -1, 0.0
	for _, r := range set[:prefixLen(len(set))] {
		for _, i := range x.posting[r] {
			if x.seen[i] == x.probe || (best >= 0 && i >= best) {
				continue
			}
			x.seen[i] = x.probe
			if s := rankJaccard(set, x.sets[i]); s >= DuplicateThreshold {
				best, bestSim = i, s
			}
		}
	}
	if best < 0 {
		return "", 0, false
	}
	return x.ids[best], bestSim, true
}

// rankJaccard is actionJaccard on two ascending rank sets, neither empty:
// the same formula, so the same float.
func rankJaccard(a, b []int) float64 {
	inter := 0
	for i, j := 0, 0; i < len(a) && j < len(b); {
		switch {
		case a[i] < b[j]:
			i++
		case a[i] > b[j]:
			j++
		default:
			inter++
			i++
			j++
		}
	}
	return float64(inter) / float64(len(a)+len(b)-inter)
}

// actionJaccard is |a ∩ b| / |a ∪ b|; two empty sets are identical (1).
func actionJaccard(a, b map[string]bool) float64 {
	if len(a) == 0 && len(b) == 0 {
		return 1
	}
	inter := 0
	for w := range a {
		if b[w] {
			inter++
		}
	}
	return float64(inter) / float64(len(a)+len(b)-inter)
}

// riskRule is one safety.risk_rules entry.
type riskRule struct {
	pattern string
	tier    int
}

// parseRiskRules reads safety.risk_rules, keeping the usable rules and
// describing what it ignored.
func parseRiskRules(raw json.RawMessage) ([]riskRule, []string) {
	trimmed := bytes.TrimSpace(raw)
	if len(trimmed) == 0 || string(trimmed) == "null" {
		return nil, nil
	}
	var entries []json.RawMessage
	if err := json.Unmarshal(trimmed, &entries); err != nil {
		return nil, []string{"safety.risk_rules is not an array of {\"pattern\", \"tier\"} rules; ignored"}
	}
	var rules []riskRule
	var warnings []string
	for i, e := range entries {
		var r struct {
			Pattern *string          `json:"pattern"`
			Tier    *json.RawMessage `json:"tier"`
		}
		if err := json.Unmarshal(e, &r); err != nil || r.Pattern == nil || strings.TrimSpace(*r.Pattern) == "" {
			warnings = append(warnings, fmt.Sprintf("safety.risk_rules[%d] has no pattern; ignored", i))
			continue
		}
		p := strings.TrimPrefix(strings.TrimSpace(*r.Pattern), "./")
		if _, err := path.Match(p, ""); err != nil {
			warnings = append(warnings, fmt.Sprintf("safety.risk_rules[%d] pattern %q is not a valid glob; ignored", i, p))
			continue
		}
		tier, ok := riskTierValue(r.Tier)
		if !ok {
			warnings = append(warnings, fmt.Sprintf("safety.risk_rules[%d] tier is not an integer; ignored", i))
			continue
		}
		rules = append(rules, riskRule{pattern: p, tier: tier})
	}
	return rules, warnings
}

// riskTierValue reads a tier: an integral JSON number (3 or 3.0).
func riskTierValue(raw *json.RawMessage) (int, bool) {
	if raw == nil {
		return 0, false
	}
	var f float64
	if json.Unmarshal(*raw, &f) != nil || f != math.Trunc(f) || math.Abs(f) > 1e9 {
		return 0, false
	}
	return int(f), true
}

// riskTierFor is the tier of the first rule matching any of files.
func riskTierFor(files []string, rules []riskRule) *int {
	for _, r := range rules {
		for _, f := range files {
			if config.MatchPath(r.pattern, f) {
				t := r.tier
				return &t
			}
		}
	}
	return nil
}

// initEffectiveRice gives every item without an effective_rice its
// rice_score (0 when that is missing too), so ordering and decay have a
// value to work with.
func initEffectiveRice(items []state.Action) {
	for i := range items {
		if items[i].EffectiveRice == nil {
			items[i].EffectiveRice = actionFloat(items[i].Rice())
		}
	}
}

// actionBefore orders pending items by priority: effective_rice descending,
// then the earlier extracted_at (it has waited longer), then the smaller id.
func actionBefore(a, b state.Action) bool {
	if ra, rb := a.Rice(), b.Rice(); ra != rb {
		return ra > rb
	}
	ta, oka := state.ParseTime(a.ExtractedAt)
	tb, okb := state.ParseTime(b.ExtractedAt)
	switch {
	case oka && okb && !ta.Equal(tb):
		return ta.Before(tb)
	case oka != okb:
		return oka
	}
	return a.ID < b.ID
}

// capPending keeps the PendingCap best pending items and moves the rest to
// completed as superseded. With sorted, pending comes back in priority
// order; otherwise the survivors keep their order.
func capPending(pending, completed []state.Action, sorted bool) ([]state.Action, []state.Action, []string) {
	order := make([]int, len(pending))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(i, j int) bool { return actionBefore(pending[order[i]], pending[order[j]]) })
	if len(pending) <= PendingCap {
		if sorted {
			out := make([]state.Action, 0, len(pending))
			for _, i := range order {
				out = append(out, pending[i])
			}
			return out, completed, nil
		}
		return pending, completed, nil
	}
	drop := map[int]bool{}
	for _, i := range order[PendingCap:] {
		drop[i] = true
	}
	var kept []state.Action
	var ids []string
	if sorted {
		for _, i := range order[:PendingCap] {
			kept = append(kept, pending[i])
		}
	} else {
		for i, a := range pending {
			if !drop[i] {
				kept = append(kept, a)
			}
		}
	}
	// Victims go to completed lowest-priority last, in a fixed order.
	for _, i := range order[PendingCap:] {
		a := pending[i]
		a.Status = actionSuperseded
		completed = append(completed, a)
		ids = append(ids, a.ID)
	}
	return kept, completed, ids
}

// actionFloat returns a pointer to a copy of v.
func actionFloat(v float64) *float64 { return &v }

// cloneActionQueue deep-copies a queue, so the rules can change items
// without touching the caller's values (pointers, slices and maps included).
func cloneActionQueue(q state.ActionQueue) state.ActionQueue {
	out := q
	out.Extra = actionCloneExtra(q.Extra)
	out.Pending = cloneActionList(q.Pending)
	out.InProgress = cloneActionList(q.InProgress)
	out.Completed = cloneActionList(q.Completed)
	return out
}

// cloneActionList deep-copies items, nil staying nil so an absent list
// stays absent.
func cloneActionList(in []state.Action) []state.Action {
	if in == nil {
		return nil
	}
	out := make([]state.Action, len(in))
	for i, a := range in {
		c := a
		c.RiceScore = actionClonePtr(a.RiceScore)
		c.EffectiveRice = actionClonePtr(a.EffectiveRice)
		c.DecayApplied = actionClonePtr(a.DecayApplied)
		c.PRNumber = actionClonePtr(a.PRNumber)
		c.RiskTier = actionClonePtr(a.RiskTier)
		c.RelatedFiles = slices.Clone(a.RelatedFiles)
		c.Extra = actionCloneExtra(a.Extra)
		out[i] = c
	}
	return out
}

// actionClonePtr copies the value behind p.
func actionClonePtr[T any](p *T) *T {
	if p == nil {
		return nil
	}
	v := *p
	return &v
}

// actionCloneExtra copies an item's unknown keys and their bytes.
func actionCloneExtra(e state.Extra) state.Extra {
	if e == nil {
		return nil
	}
	out := make(state.Extra, len(e))
	for k, v := range e {
		out[k] = slices.Clone(v)
	}
	return out
}
