package reflect

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/ooda-loop/ooda/internal/act"
	"github.com/ooda-loop/ooda/internal/safetext"
	"github.com/ooda-loop/ooda/internal/state"
)

// MaxReportResolved is the most "resolved" entries taken from one report;
// the rest are dropped with one warning. A skill names only what it
// reported itself, far fewer than this, and a report of millions of
// entries must not hold the cycle while each is matched.
const MaxReportResolved = 200

// ResolveReasonMax bounds, in runes, the reason recorded for a resolved
// action (its status_history entry).
const ResolveReasonMax = 300

// actionCompleted is the status of an action that no longer needs doing,
// as the original's queue names it.
const actionCompleted = "completed"

// actionStatusHistoryKey is the item key holding the original's audit
// trail of status changes: [{"status", "at", "reason"}].
const actionStatusHistoryKey = "status_history"

// actionResolutionKey and resolutionNoLongerRelevant mark an item
// completed because its source said it no longer applies, in the
// vocabulary the original uses for a resolved gap: a later finding with the
// same title is a new problem, not the old one done.
const (
	actionResolutionKey        = "resolution"
	resolutionNoLongerRelevant = "no_longer_relevant"
)

// ResolveInput is what ResolveActions needs beyond the queue and the
// report's entries.
type ResolveInput struct {
	// Cycle is the number of the cycle being run.
	Cycle int
	// Domain is the executed domain: only its own items can be resolved.
	Domain string
	// Skill is the skill that reported the entries.
	Skill string
	// Now is the cycle's instant, recorded in the status history.
	Now time.Time
}

// ResolvedItem is one queue item ResolveActions completed.
type ResolvedItem struct {
	ID    string
	Title string
	// Index is the position in the report of the entry that named it.
	Index  int
	Reason string
}

// ResolveResult says what ResolveActions did.
type ResolveResult struct {
	// Resolved are the items moved to completed, in the order of the
	// report's entries.
	Resolved []ResolvedItem
	// Unmatched counts the entries that named no pending item of the
	// domain: one already completed, dropped as a duplicate when it was
	// reported, superseded, or never queued. That is normal, not an error.
	Unmatched int
	// Warnings name entries that were dropped or could not be used, by
	// their JSON path in the report.
	Warnings []string
}

// ResolveActions completes the pending actions a skill says no longer
// apply (the report's "resolved", ooda's addition to SPEC-NOTES §3); q and
// resolved are not modified.
//
// An entry matches a pending item when their titles are the same after
// the normalisation 5-C2's de-duplication applies (ExtractActions): the
// title is trimmed and cut to TitleMax runes, then compared as its set of
// significant words — lower-cased, split at anything that is not a letter
// or a digit, stop words dropped. Where de-duplication calls titles alike
// at a Jaccard similarity of DuplicateThreshold, resolution asks for the
// same set: closing an item is final, and a near miss must not close a
// neighbour. A title without any significant word matches nothing.
//
// Only items in the pending list whose status is "pending" (or absent)
// and whose source_domain is in.Domain are resolved: an item another
// domain reported, one a person wrote into the file (no source_domain, or
// their own), one in progress (a change may be under way for it, and the
// PR outcome decides its fate) or blocked is never touched. Every such
// item an entry matches is resolved.
//
// A resolved item moves to completed with status "completed",
// "resolution": "no_longer_relevant" and a status_history entry
// {"status": "completed", "at": in.Now, "reason"} appended — the
// original's audit trail — where reason names the skill, the domain and
// the cycle, followed by the entry's reason (on one line, without terminal
// control characters, cut to ResolveReasonMax runes). An item whose
// status_history is not an array keeps it as it is, with a warning.
//
// At most MaxReportResolved entries are read; the rest are dropped with
// one warning.
func ResolveActions(q state.ActionQueue, resolved []act.ResolvedAction, in ResolveInput) (state.ActionQueue, ResolveResult) {
	out := cloneActionQueue(q)
	var res ResolveResult
	if n := len(resolved); n > MaxReportResolved {
		res.Warnings = append(res.Warnings, fmt.Sprintf("the report lists %d resolved actions; only the first %d are taken, %d dropped (resolved)", n, MaxReportResolved, n-MaxReportResolved))
		resolved = resolved[:MaxReportResolved]
	}
	if in.Domain == "" || len(resolved) == 0 {
		res.Unmatched = len(resolved)
		return out, res
	}

	// The domain's pending items by their title's word set.
	byKey := map[string][]int{}
	for i, a := range out.Pending {
		// An item without a status is pending by its place in the list.
		if a.SourceDomain != in.Domain || (a.Status != actionPending && a.Status != "") {
			continue
		}
		if k := resolveKey(a.Title); k != "" {
			byKey[k] = append(byKey[k], i)
		}
	}

	done := map[int]bool{}
	var order []int
	items := map[int]ResolvedItem{}
	for i, r := range resolved {
		k := resolveKey(r.Title)
		if k == "" {
			if strings.TrimSpace(r.Title) == "" {
				res.Warnings = append(res.Warnings, fmt.Sprintf("resolved[%d].title is empty; ignored", i))
			} else {
				res.Warnings = append(res.Warnings, fmt.Sprintf("resolved[%d].title has no word to match an action by; ignored", i))
			}
			res.Unmatched++
			continue
		}
		matched := false
		for _, idx := range byKey[k] {
			if done[idx] {
				matched = true
				continue
			}
			done[idx] = true
			matched = true
			order = append(order, idx)
			items[idx] = ResolvedItem{ID: out.Pending[idx].ID, Title: out.Pending[idx].Title, Index: i, Reason: resolveReason(r.Reason)}
		}
		if !matched {
			res.Unmatched++
		}
	}
	if len(order) == 0 {
		return out, res
	}

	at := state.FormatTime(in.Now)
	for _, idx := range order {
		a := out.Pending[idx]
		item := items[idx]
		by := in.Domain
		if in.Skill != "" {
			by = in.Skill + " (" + in.Domain + ")"
		}
		reason := fmt.Sprintf("resolved by %s in cycle %d", by, in.Cycle)
		if item.Reason != "" {
			reason += ": " + item.Reason
		}
		a.Status = actionCompleted
		a.Extra = actionCloneExtra(a.Extra)
		if a.Extra == nil {
			a.Extra = state.Extra{}
		}
		a.Extra[actionResolutionKey] = json.RawMessage(`"` + resolutionNoLongerRelevant + `"`)
		if warn := appendStatusHistory(&a, actionCompleted, at, reason); warn != "" {
			res.Warnings = append(res.Warnings, warn)
		}
		out.Completed = append(out.Completed, a)
		res.Resolved = append(res.Resolved, item)
	}
	kept := make([]state.Action, 0, len(out.Pending)-len(order))
	for i, a := range out.Pending {
		if !done[i] {
			kept = append(kept, a)
		}
	}
	out.Pending = kept
	return out, res
}

// resolveKey is the normalised title: trimmed and cut as ExtractActions
// stores it, then its significant words, sorted and joined. "" when the
// title has none.
func resolveKey(title string) string {
	t, _ := ClipText(strings.TrimSpace(title), TitleMax)
	words := actionTitleTokens(t)
	if len(words) == 0 {
		return ""
	}
	list := make([]string, 0, len(words))
	for w := range words {
		list = append(list, w)
	}
	slices.Sort(list)
	// Words hold only letters and digits: a space cannot be part of one.
	return strings.Join(list, " ")
}

// resolveReason is a report's reason as the queue records it: on one
// line, without the characters that could drive a terminal, bounded.
func resolveReason(s string) string {
	if len(s) > 4*ResolveReasonMax+4 {
		// Only the start is kept; cutting first bounds the work.
		s = s[:4*ResolveReasonMax+4]
	}
	s = strings.Map(func(c rune) rune {
		if c == utf8.RuneError || safetext.Unsafe(c) {
			return ' '
		}
		return c
	}, s)
	s = strings.Join(strings.Fields(s), " ")
	s, _ = ClipText(s, ResolveReasonMax)
	return s
}

// appendStatusHistory adds {"status", "at", "reason"} to the item's
// status_history (a.Extra is the item's own copy), creating it when
// absent. A status_history that is not
// an array is left alone: it is not this program's to repair.
func appendStatusHistory(a *state.Action, status, at, reason string) string {
	var hist []json.RawMessage
	if raw, ok := a.Extra[actionStatusHistoryKey]; ok && string(raw) != "null" {
		if json.Unmarshal(raw, &hist) != nil {
			return fmt.Sprintf("action %s: status_history is not an array; the resolution is not recorded in it", a.ID)
		}
	}
	entry, _ := json.Marshal(struct {
		Status string `json:"status"`
		At     string `json:"at"`
		Reason string `json:"reason"`
	}{status, at, reason})
	hist = append(hist, entry)
	b, err := json.Marshal(hist)
	if err != nil {
		return fmt.Sprintf("action %s: status_history: %v", a.ID, err)
	}
	a.Extra[actionStatusHistoryKey] = b
	return ""
}

// resolvedByItsSkill reports whether a is a completed item its skill
// resolved (ResolveActions): "resolution": "no_longer_relevant".
func resolvedByItsSkill(a state.Action) bool {
	if a.Status != "completed" {
		return false
	}
	var r string
	return json.Unmarshal(a.Extra["resolution"], &r) == nil && r == resolutionNoLongerRelevant
}
