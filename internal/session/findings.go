package session

import (
	"crypto/sha256"
	"encoding/hex"
	"sort"
	"strings"
	"unicode"

	"github.com/ooda-loop/ooda/internal/state"
)

// Kinds of finding.
const (
	FindingAction = "action"
	FindingGap    = "gap"
	FindingAlert  = "alert"
)

// Finding is one thing that remains to be done (seed 003), with an id
// that stays the same from one iteration to the next as long as the
// thing is the same: "action:<queue id>", "gap:<gap name>",
// "alert:<domain>:<alert id>" (or, for an alert without an id, a hash of
// its severity and message).
type Finding struct {
	ID      string
	Kind    string
	Summary string
}

// maxKeyLen bounds the part of a finding id taken from a file: a longer
// key, or one with control characters or spaces, is replaced by its hash,
// which is as stable and keeps the record small.
const maxKeyLen = 80

// maxSummary bounds a finding's summary.
const maxSummary = 200

// CollectFindings lists what remains to be done in a project's state:
// the actionable actions of the queue (pending and not blocked, and in
// progress), the unresolved skill gaps, and the active (warning or
// critical) alerts of the domain state files, keyed by domain name. The
// result is sorted by id, without duplicates, and at most
// state.MaxSessionFindings long (the first ids kept). snap may be nil.
func CollectFindings(snap *state.Snapshot, domains map[string]state.DomainState) []Finding {
	byID := map[string]Finding{}
	add := func(f Finding) {
		if _, dup := byID[f.ID]; !dup {
			f.Summary = clip(oneLine(clip(f.Summary, 4*maxSummary)), maxSummary)
			byID[f.ID] = f
		}
	}
	if snap != nil {
		actions := func(list []state.Action) {
			for _, a := range list {
				if a.Status == "blocked" {
					continue
				}
				key := a.ID
				if key == "" {
					key = "t-" + hash(a.Title)
				}
				add(Finding{ID: FindingAction + ":" + stableKey(key), Kind: FindingAction, Summary: a.Title})
			}
		}
		actions(snap.ActionQueue.Pending)
		actions(snap.ActionQueue.InProgress)
		for _, g := range snap.SkillGaps.Gaps {
			if g.Resolved {
				continue
			}
			key := g.Key()
			if key == "" {
				key = "t-" + hash(g.Type+"\x00"+g.Text())
			}
			summary := g.Text()
			if summary == "" {
				summary = key
			}
			add(Finding{ID: FindingGap + ":" + stableKey(key), Kind: FindingGap, Summary: summary})
		}
	}
	for name, d := range domains {
		for _, a := range d.Alerts {
			if !a.Urgent() {
				continue
			}
			key := a.ID
			if key == "" {
				key = "m-" + hash(a.Severity+"\x00"+a.Message)
			}
			add(Finding{ID: FindingAlert + ":" + stableKey(name) + ":" + stableKey(key), Kind: FindingAlert,
				Summary: "[" + a.Severity + "] " + name + ": " + a.Message})
		}
	}
	out := make([]Finding, 0, len(byID))
	for _, f := range byID {
		out = append(out, f)
	}
	return capFindings(out)
}

// capFindings sorts findings by id, drops repeated ids and keeps the
// first state.MaxSessionFindings.
func capFindings(fs []Finding) []Finding {
	out := append([]Finding(nil), fs...)
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	n := 0
	for i, f := range out {
		if f.ID == "" || (i > 0 && f.ID == out[i-1].ID) {
			continue
		}
		out[n] = f
		n++
	}
	return out[:min(n, state.MaxSessionFindings)]
}

// stableKey is s when it is a short plain key, else "h-" and its hash.
func stableKey(s string) string {
	if len(s) <= maxKeyLen && !strings.ContainsFunc(s, func(r rune) bool { return unicode.IsSpace(r) || unicode.IsControl(r) || r == unicode.ReplacementChar }) && s != "" {
		return s
	}
	return "h-" + hash(s)
}

func hash(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:6])
}

// oneLine joins a text's lines and collapses its spaces: a summary is
// shown on one line.
func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// clip cuts s to at most n bytes on a rune boundary, marking the cut.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n - len("…")
	for cut > 0 && s[cut]&0xC0 == 0x80 {
		cut--
	}
	return s[:cut] + "…"
}

// Deferred lists the ids of the findings a session has deferred and that
// are still unresolved, sorted (for `ooda status`).
func Deferred(rec state.Session) []string {
	var out []string
	for id, f := range rec.Findings {
		if f.Status == state.FindingDeferred {
			out = append(out, id)
		}
	}
	sort.Strings(out)
	return out
}
