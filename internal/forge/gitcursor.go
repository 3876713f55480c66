package forge

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"

	"github.com/ooda-loop/ooda/internal/gitrepo"
)

// CursorStore keeps the plain-git provider's scan cursor between
// processes. The state package provides the file (agent/state/evolve/
// forge_cursor.json); the provider decides what is in it and checks every
// byte it reads back, since anything that writes under agent/state/ can
// write it.
type CursorStore interface {
	// Name is the cursor's path, for messages.
	Name() string
	// Load returns the cursor's bytes; nil, nil when there is none.
	Load() ([]byte, error)
	// Save replaces the cursor atomically.
	Save(data []byte) error
}

// CursorKeeper is implemented by a forge that can remember between
// processes what it read (the plain-git provider). A cycle hands it the
// store before Observe and asks it to save after (never in a dry run).
type CursorKeeper interface {
	// UseCursorStore sets where the cursor is kept. Without one the
	// provider reads the whole history once per process.
	UseCursorStore(CursorStore)
	// SaveCursor writes the cursor when what it records changed, or when
	// it lags enough commits behind to be worth a write.
	SaveCursor() error
	// TakeNotes returns, once, what the provider has to tell the user
	// about its cursor (unreadable, rebuilt, a history read in parts).
	TakeNotes() []CursorNote
}

// CursorNote is one thing a CursorKeeper tells the user. A warning is
// something to look into (a cursor that could not be used); the rest is
// information (a long history read in parts).
type CursorNote struct {
	Warning bool
	Text    string
}

var _ CursorKeeper = (*Git)(nil)

// cursorVersion is the cursor's format; any other is read as no cursor.
const cursorVersion = 1

type cursorFile struct {
	Version    int                     `json:"version"`
	Tips       []cursorTip             `json:"default_tips"`
	ByBranch   map[string]cursorSquash `json:"squash_by_branch"`
	ByTip      map[string]cursorSquash `json:"squash_by_tip"`
	Floor      []string                `json:"unread_below"`
	Incomplete bool                    `json:"incomplete"`
	Branches   map[string]cursorBranch `json:"branches"`
}

type cursorTip struct {
	Ref string `json:"ref"`
	SHA string `json:"sha"`
}

type cursorSquash struct {
	SHA     string `json:"sha"`
	At      int64  `json:"at"`
	Subject string `json:"subject"`
}

type cursorBranch struct {
	Tip         string   `json:"tip"`
	Via         int      `json:"via"`
	MergeSHA    string   `json:"merge_sha"`
	MergedAt    int64    `json:"merged_at"`
	Title       string   `json:"title"`
	Created     int64    `json:"created"`
	Own         []string `json:"own"`
	OwnComplete bool     `json:"own_complete"`
	ClosedSHA   string   `json:"closed_sha"`
	ClosedAt    int64    `json:"closed_at"`
}

func unixOf(t time.Time) int64 { return t.Unix() }

func fromUnix(n int64) time.Time { return time.Unix(n, 0).UTC() }

func encodeCursor(m *scanMemo) ([]byte, error) {
	f := cursorFile{Version: cursorVersion, ByBranch: map[string]cursorSquash{}, ByTip: map[string]cursorSquash{},
		Floor: append([]string{}, m.floor...), Incomplete: m.incomplete, Branches: map[string]cursorBranch{}}
	for _, t := range m.tips {
		f.Tips = append(f.Tips, cursorTip{t.ref, t.sha})
	}
	for k, c := range m.byName {
		f.ByBranch[k] = cursorSquash{c.sha, unixOf(c.at), c.subject}
	}
	for k, c := range m.byTip {
		f.ByTip[k] = cursorSquash{c.sha, unixOf(c.at), c.subject}
	}
	for k, b := range m.branches {
		f.Branches[k] = cursorBranch{Tip: b.tip, Via: b.via, MergeSHA: b.mergeSHA, MergedAt: unixOf(b.mergedAt), Title: b.title,
			Created: unixOf(b.created), Own: append([]string{}, b.own...), OwnComplete: b.ownOK, ClosedSHA: b.closedSHA, ClosedAt: unixOf(b.closedAt)}
	}
	b, err := json.Marshal(f)
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

// decodeCursor reads a cursor strictly: an unknown key, a value of the
// wrong type, a commit id that is not one or a name git would not take as
// a branch makes the whole cursor unusable (a cursor that is partly right
// could hide a merge). The error names the JSON path.
func decodeCursor(data []byte) (*scanMemo, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var f cursorFile
	if err := dec.Decode(&f); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) && te.Field != "" {
			return nil, fmt.Errorf("%s: %s where %s was expected", te.Field, te.Value, te.Type)
		}
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("more than one JSON value")
	}
	if f.Version != cursorVersion {
		return nil, fmt.Errorf("version: %d, not %d", f.Version, cursorVersion)
	}
	if len(f.Tips) == 0 || len(f.Tips) > 2 {
		return nil, fmt.Errorf("default_tips: %d entries, not 1 or 2", len(f.Tips))
	}
	m := newMemo()
	for i, t := range f.Tips {
		if !strings.HasPrefix(t.Ref, "refs/heads/") && !strings.HasPrefix(t.Ref, "refs/remotes/") || gitrepo.CheckRefName(t.Ref) != nil {
			return nil, fmt.Errorf("default_tips[%d].ref: %q is not a branch ref", i, t.Ref)
		}
		if !gitrepo.ValidSHA(t.SHA) {
			return nil, fmt.Errorf("default_tips[%d].sha: %q is not a commit id", i, t.SHA)
		}
		m.tips = append(m.tips, refTip{t.Ref, t.SHA})
	}
	squash := func(field, key string, c cursorSquash) (squashCommit, error) {
		if !gitrepo.ValidSHA(c.SHA) {
			return squashCommit{}, fmt.Errorf("%s[%q].sha: %q is not a commit id", field, key, c.SHA)
		}
		if strings.ContainsAny(c.Subject, "\n") {
			return squashCommit{}, fmt.Errorf("%s[%q].subject: more than one line", field, key)
		}
		return squashCommit{sha: c.SHA, subject: c.Subject, at: fromUnix(c.At)}, nil
	}
	for _, k := range sortedKeys(f.ByBranch) {
		if !gitrepo.ValidBranchName(k) {
			return nil, fmt.Errorf("squash_by_branch: %q is not a branch name", k)
		}
		c, err := squash("squash_by_branch", k, f.ByBranch[k])
		if err != nil {
			return nil, err
		}
		m.byName[k] = c
	}
	for _, k := range sortedKeys(f.ByTip) {
		if !gitrepo.ValidSHA(k) {
			return nil, fmt.Errorf("squash_by_tip: %q is not a commit id", k)
		}
		c, err := squash("squash_by_tip", k, f.ByTip[k])
		if err != nil {
			return nil, err
		}
		m.byTip[k] = c
	}
	if len(f.Floor) > maxFloor {
		return nil, fmt.Errorf("unread_below: %d entries, more than %d", len(f.Floor), maxFloor)
	}
	for i, s := range f.Floor {
		if !gitrepo.ValidSHA(s) {
			return nil, fmt.Errorf("unread_below[%d]: %q is not a commit id", i, s)
		}
	}
	m.floor, m.incomplete = f.Floor, f.Incomplete
	for _, k := range sortedKeys(f.Branches) {
		b := f.Branches[k]
		at := func(field string) string { return fmt.Sprintf("branches[%q].%s", k, field) }
		switch {
		case !gitrepo.ValidBranchName(k):
			return nil, fmt.Errorf("branches: %q is not a branch name", k)
		case !gitrepo.ValidSHA(b.Tip):
			return nil, fmt.Errorf("%s: %q is not a commit id", at("tip"), b.Tip)
		case b.Via < -1 || b.Via >= len(m.tips):
			return nil, fmt.Errorf("%s: %d is not -1 or the index of a default tip", at("via"), b.Via)
		case b.Via >= 0 && !gitrepo.ValidSHA(b.MergeSHA):
			return nil, fmt.Errorf("%s: %q is not a commit id", at("merge_sha"), b.MergeSHA)
		case b.Via < 0 && b.MergeSHA != "":
			return nil, fmt.Errorf("%s: set for a branch that is not merged", at("merge_sha"))
		case b.ClosedSHA != "" && !gitrepo.ValidSHA(b.ClosedSHA):
			return nil, fmt.Errorf("%s: %q is not a commit id", at("closed_sha"), b.ClosedSHA)
		case len(b.Own) > maxOwnCached:
			return nil, fmt.Errorf("%s: %d commits, more than %d", at("own"), len(b.Own), maxOwnCached)
		case strings.ContainsAny(b.Title, "\n"):
			return nil, fmt.Errorf("%s: more than one line", at("title"))
		}
		for i, s := range b.Own {
			if !gitrepo.ValidSHA(s) {
				return nil, fmt.Errorf("%s[%d]: %q is not a commit id", at("own"), i, s)
			}
		}
		bm := branchMemo{tip: b.Tip, via: b.Via, mergeSHA: b.MergeSHA, title: b.Title, created: fromUnix(b.Created),
			own: b.Own, ownOK: b.OwnComplete, closedSHA: b.ClosedSHA, closedAt: fromUnix(b.ClosedAt)}
		if b.Via >= 0 {
			bm.mergedAt = fromUnix(b.MergedAt)
		}
		m.branches[k] = bm
	}
	return m, nil
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// loadCursor reads the store's cursor; nil (with a note, unless there was
// none) when it cannot be used.
func (g *Git) loadCursor() *scanMemo {
	data, err := g.store.Load()
	if err != nil {
		g.note("%s: %v; reading the default branch's history again.", g.store.Name(), err)
		return nil
	}
	if data == nil {
		return nil
	}
	m, err := decodeCursor(data)
	if err != nil {
		g.note("%s: %v; not used, reading the default branch's history again.", g.store.Name(), err)
		return nil
	}
	return m
}

// UseCursorStore sets where the cursor is kept between processes. A
// provider that already read the history in this process keeps what it
// read.
func (g *Git) UseCursorStore(s CursorStore) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.store = s
}

// SaveCursor writes what this process read, when it is worth a write.
func (g *Git) SaveCursor() error {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.store == nil || g.mem == nil || !g.dirty {
		return nil
	}
	data, err := encodeCursor(g.mem)
	if err != nil {
		return err
	}
	if err := g.store.Save(data); err != nil {
		return err
	}
	g.dirty, g.lag = false, 0
	return nil
}

// TakeNotes returns the notes gathered since the last call.
func (g *Git) TakeNotes() []CursorNote {
	g.mu.Lock()
	defer g.mu.Unlock()
	n := g.notes
	g.notes = nil
	return n
}

// note is a warning about the cursor.
func (g *Git) note(format string, args ...any) {
	g.notes = append(g.notes, CursorNote{Warning: true, Text: fmt.Sprintf(format, args...)})
}

// inform is information about how the history is being read.
func (g *Git) inform(format string, args ...any) {
	g.notes = append(g.notes, CursorNote{Text: fmt.Sprintf(format, args...)})
}
