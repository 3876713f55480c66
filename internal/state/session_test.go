package state

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

func sessionStore(t *testing.T) *Store {
	t.Helper()
	root := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, "agent", "state", "evolve"), 0o755); err != nil {
		t.Fatal(err)
	}
	return New(root)
}

func TestSessionRoundTripKeepsUnknownKeysAndNullStopReason(t *testing.T) {
	s := sessionStore(t)
	rec := Session{ID: "s1", StartedAt: "2026-01-02T03:04:05Z", Status: SessionRunning, Iteration: 2, MaxIterations: 10,
		Quarantined: []string{"api"}, Findings: map[string]SessionFinding{"gap:x": {Kind: "gap", Status: FindingOpen, FirstSeen: 1, LastSeen: 2, Consecutive: 2}},
		Targets: map[string]SessionTarget{"api": {Kind: KindDomain, LastResult: ResultFail, Transitions: 3, LastCycle: 7}}}
	if err := s.SaveSession(rec); err != nil {
		t.Fatal(err)
	}
	raw := readString(t, s.SessionPath("s1"))
	if !strings.Contains(raw, `"stop_reason": null`) {
		t.Fatalf("a running session's stop_reason is not null:\n%s", raw)
	}
	// Another tool adds keys at every level; they survive a rewrite.
	var m map[string]any
	if err := json.Unmarshal([]byte(raw), &m); err != nil {
		t.Fatal(err)
	}
	m["owner"] = "ops"
	m["findings"].(map[string]any)["gap:x"].(map[string]any)["ticket"] = "T-1"
	m["targets"].(map[string]any)["api"].(map[string]any)["note"] = "flaky"
	b, _ := json.Marshal(m)
	writeFile(t, s.SessionPath("s1"), string(b))
	got, found, warns, err := s.LoadSession("s1")
	if err != nil || !found || len(warns) != 0 {
		t.Fatalf("LoadSession = found %v, warns %v, err %v", found, warns, err)
	}
	if got.Targets["api"].Transitions != 3 || !got.IsQuarantined("api") || got.Findings["gap:x"].Consecutive != 2 {
		t.Fatalf("record not read back: %+v", got)
	}
	got.Iteration = 3
	got.StopReason = "done_no_work"
	if err := s.SaveSession(got); err != nil {
		t.Fatal(err)
	}
	raw = readString(t, s.SessionPath("s1"))
	for _, want := range []string{`"owner": "ops"`, `"ticket": "T-1"`, `"note": "flaky"`, `"stop_reason": "done_no_work"`, `"iteration": 3`} {
		if !strings.Contains(raw, want) {
			t.Errorf("rewritten record lacks %s:\n%s", want, raw)
		}
	}
}

func TestSessionIDIsRefusedUnlessPlain(t *testing.T) {
	s := sessionStore(t)
	outside := filepath.Join(filepath.Dir(s.Root), "x.json")
	writeFile(t, outside, `{"id": "x", "status": "running"}`)
	for _, id := range []string{"../x", "", ".hidden", "a/b", `a\b`, "a..b", "-flag", "white space", strings.Repeat("a", 65), "x\x00"} {
		if err := CheckSessionID(id); err == nil {
			t.Errorf("CheckSessionID(%q) accepted", id)
		}
		if _, found, _, err := s.LoadSession(id); err == nil || found {
			t.Errorf("LoadSession(%q) = found %v, err %v; want a refusal", id, found, err)
		}
		if err := s.SaveSession(Session{ID: id}); err == nil {
			t.Errorf("SaveSession(%q) accepted", id)
		}
	}
	if b, _ := os.ReadFile(outside); string(b) != `{"id": "x", "status": "running"}` {
		t.Fatalf("a file outside the sessions directory was touched: %s", b)
	}
	for _, id := range []string{"20260102T030405Z", "nightly-run_2.b"} {
		if err := CheckSessionID(id); err != nil {
			t.Errorf("CheckSessionID(%q) = %v", id, err)
		}
	}
}

func TestSessionHostileTypesLoadWithWarnings(t *testing.T) {
	s := sessionStore(t)
	writeFile(t, s.SessionPath("h"), `{"id": "../other", "status": 7, "iteration": "many", "max_iterations": -5,
		"quarantined": "api", "findings": [1, 2], "determine_log": {"a": 1},
		"targets": {"api": {"transitions": "x", "last_cycle": -3}, "": {"kind": "domain"}},
		"no_progress_streak": 1e30, "stop_reason": 42}`)
	rec, found, warns, err := s.LoadSession("h")
	if err != nil || !found {
		t.Fatalf("LoadSession = found %v, err %v", found, err)
	}
	if rec.ID != "h" || rec.StopReason != "" || rec.Status != SessionStopped || rec.Iteration != 0 || rec.MaxIterations != 0 || len(rec.DetermineLog) != 0 {
		t.Fatalf("hostile values not repaired: %+v", rec)
	}
	if _, ok := rec.Targets[""]; ok {
		t.Fatalf("an empty target name was kept")
	}
	all := strings.Join(warns, "\n")
	for _, want := range []string{"agent/state/evolve/sessions/h.json", "/id", "/status", "/max_iterations", "/stop_reason", "/targets/api/last_cycle"} {
		if !strings.Contains(all, want) {
			t.Errorf("warnings do not name %s:\n%s", want, all)
		}
	}
	// The record is still usable and can be saved.
	rec.Status = SessionRunning
	if err := s.SaveSession(rec); err != nil {
		t.Fatal(err)
	}
	if _, _, _, err := s.LoadSession("h"); err != nil {
		t.Fatal(err)
	}
	// Larger than the read limit: refused, not read.
	s.MaxRead = 1 << 10
	writeFile(t, s.SessionPath("huge"), `{"id": "huge", "pad": "`+strings.Repeat("x", 2<<10)+`"}`)
	if _, found, _, err := s.LoadSession("huge"); err == nil || found || !IsRefused(err) {
		t.Fatalf("a record over the read limit: found %v, err %v", found, err)
	}
	s.MaxRead = 0
	// Not an object at all: an error naming the file.
	writeFile(t, s.SessionPath("arr"), `[1, 2, 3]`)
	if _, _, _, err := s.LoadSession("arr"); err == nil || !strings.Contains(err.Error(), "sessions/arr.json") {
		t.Fatalf("a record that is not an object: err %v", err)
	}
}

func TestSessionHugeListsAreCutToTheirBounds(t *testing.T) {
	s := sessionStore(t)
	var b strings.Builder
	b.WriteString(`{"id": "big", "status": "running", "determine_log": [`)
	for i := range 5000 {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"iteration": %d, "result": "continue", "reason": "r"}`, i+1)
	}
	b.WriteString(`], "findings": {`)
	for i := range 3000 {
		if i > 0 {
			b.WriteByte(',')
		}
		status := "open"
		if i%2 == 1 {
			status = "resolved"
		}
		fmt.Fprintf(&b, `"gap:%05d": {"kind": "gap", "status": %q, "resolved_at": %d}`, i, status, i)
	}
	b.WriteString(`}, "targets": {`)
	for i := range 1500 {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `"t%04d": {"kind": "domain", "last_cycle": %d}`, i, i)
	}
	b.WriteString(`}, "quarantined": ["t0000"]}`)
	writeFile(t, s.SessionPath("big"), b.String())
	rec, _, warns, err := s.LoadSession("big")
	if err != nil {
		t.Fatal(err)
	}
	if n := len(rec.DetermineLog); n != MaxDetermineLog || rec.DetermineLog[n-1].Iteration != 5000 {
		t.Fatalf("determine_log: %d entries, last %d; want the newest %d", n, rec.DetermineLog[n-1].Iteration, MaxDetermineLog)
	}
	open, resolved := 0, 0
	for _, f := range rec.Findings {
		if f.Status == FindingResolved {
			resolved++
			if f.ResolvedAt < 2999-2*MaxResolvedFindings {
				t.Fatalf("an early resolved finding was kept over later ones: %+v", f)
			}
		} else {
			open++
		}
	}
	if open != MaxSessionFindings || resolved != MaxResolvedFindings {
		t.Fatalf("findings: %d open, %d resolved; want %d and %d", open, resolved, MaxSessionFindings, MaxResolvedFindings)
	}
	if len(rec.Targets) != MaxSessionTargets {
		t.Fatalf("targets: %d, want %d", len(rec.Targets), MaxSessionTargets)
	}
	if _, ok := rec.Targets["t0000"]; !ok {
		t.Fatalf("the quarantined target, the least recently seen, was dropped")
	}
	if len(warns) < 4 {
		t.Fatalf("cuts not reported: %v", warns)
	}
	// A caller that grows the lists cannot make the file grow: Save cuts.
	for i := range 1000 {
		rec.DetermineLog = append(rec.DetermineLog, DetermineEntry{Iteration: 6000 + i})
	}
	if err := s.SaveSession(rec); err != nil {
		t.Fatal(err)
	}
	again, _, _, err := s.LoadSession("big")
	if err != nil || len(again.DetermineLog) != MaxDetermineLog {
		t.Fatalf("saved determine_log: %d entries, err %v", len(again.DetermineLog), err)
	}
}

func TestSessionSymlinkedSessionsDirIsRefused(t *testing.T) {
	s := sessionStore(t)
	outside := t.TempDir()
	writeFile(t, filepath.Join(outside, "victim.json"), `{"id": "victim", "status": "running", "secret": "s3cr3t"}`)
	if err := os.Symlink(outside, s.EvolvePath(SessionsDir)); err != nil {
		t.Fatal(err)
	}
	if err := s.SaveSession(Session{ID: "new", Status: SessionRunning}); err == nil {
		t.Fatal("a session was saved through a symlink out of the project")
	}
	if _, err := os.Stat(filepath.Join(outside, "new.json")); err == nil {
		t.Fatal("a file was written outside the project")
	}
	if _, found, _, err := s.LoadSession("victim"); err == nil || found {
		t.Fatalf("a session was read through a symlink out of the project: found %v, err %v", found, err)
	}
	if _, found, _, err := s.LatestSession(); err == nil || found {
		t.Fatalf("LatestSession listed a directory out of the project: found %v, err %v", found, err)
	}
}

func TestLatestSessionIsTheMostRecentlyWritten(t *testing.T) {
	s := sessionStore(t)
	if _, found, _, err := s.LatestSession(); found || err != nil {
		t.Fatalf("no sessions: found %v, err %v", found, err)
	}
	base := time.Date(2026, 1, 2, 3, 0, 0, 0, time.UTC)
	for i, id := range []string{"b-old", "a-new", "c-mid"} {
		if err := s.SaveSession(Session{ID: id, Status: SessionRunning}); err != nil {
			t.Fatal(err)
		}
		at := base.Add(time.Duration([]int{0, 2, 1}[i]) * time.Hour)
		if err := os.Chtimes(s.SessionPath(id), at, at); err != nil {
			t.Fatal(err)
		}
	}
	// Neither a non-session name nor a directory is a session.
	writeFile(t, s.EvolvePath(filepath.Join(SessionsDir, "notes.txt")), "x")
	if err := os.Mkdir(s.EvolvePath(filepath.Join(SessionsDir, "zzz.json")), 0o755); err != nil {
		t.Fatal(err)
	}
	rec, found, _, err := s.LatestSession()
	if err != nil || !found || rec.ID != "a-new" {
		t.Fatalf("LatestSession = %q, found %v, err %v; want a-new", rec.ID, found, err)
	}
}

func TestNewSessionIDTakesAFreeName(t *testing.T) {
	s := sessionStore(t)
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	id, err := s.NewSessionID(now)
	if err != nil || id != "20260102T030405Z" || CheckSessionID(id) != nil {
		t.Fatalf("NewSessionID = %q", id)
	}
	if err := s.SaveSession(Session{ID: id, Status: SessionRunning}); err != nil {
		t.Fatal(err)
	}
	if again, err := s.NewSessionID(now); err != nil || again != id+"-2" {
		t.Fatalf("second NewSessionID = %q, want %s-2", again, id)
	}
}

func TestAppendCycleHistoryNeverTearsALine(t *testing.T) {
	s := sessionStore(t)
	const writers, batches = 8, 40
	var wg sync.WaitGroup
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// Each writer has its own store, as separate processes would.
			st := New(s.Root)
			for c := range batches {
				v := 0.5
				lines := []LedgerLine{
					{Session: fmt.Sprintf("w%d", w), Cycle: c, Target: "api", Kind: KindDomain, Result: ResultImproved, Value: &v, Timestamp: "2026-01-02T03:04:05Z"},
					{Session: fmt.Sprintf("w%d", w), Cycle: c, Target: strings.Repeat("g", 3000), Kind: KindGoal, Result: ResultFail, Timestamp: "2026-01-02T03:04:05Z"},
				}
				if err := st.AppendCycleHistory(lines); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	f, err := os.Open(s.EvolvePath(CycleHistoryFile))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	n := 0
	prev := map[string]string{}
	for sc.Scan() {
		var l LedgerLine
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			t.Fatalf("line %d is torn: %v: %.80s", n+1, err, sc.Text())
		}
		// A writer's two lines of a cycle are adjacent: one write.
		if l.Kind == KindGoal && prev[l.Session] != fmt.Sprintf("%d", l.Cycle) {
			t.Fatalf("line %d: the goal line of %s cycle %d does not follow its domain line", n+1, l.Session, l.Cycle)
		}
		if l.Kind == KindDomain {
			prev[l.Session] = fmt.Sprintf("%d", l.Cycle)
		}
		n++
	}
	if n != writers*batches*2 {
		t.Fatalf("%d lines, want %d", n, writers*batches*2)
	}
	if err := s.AppendCycleHistory([]LedgerLine{{Session: "s", Cycle: 1, Target: "api", Kind: KindDomain, Result: ResultIdle}}); err != nil {
		t.Fatal(err)
	}
	if w := s.Written(); len(w) != 1 || !strings.HasSuffix(w[0], CycleHistoryFile) {
		t.Fatalf("the ledger is not among the written files: %v", s.Written())
	}
}

func TestAppendCycleHistoryMovesAsideALinkOutOfTheProject(t *testing.T) {
	s := sessionStore(t)
	outside := filepath.Join(t.TempDir(), "target.jsonl")
	writeFile(t, outside, "keep\n")
	if err := os.Symlink(outside, s.EvolvePath(CycleHistoryFile)); err != nil {
		t.Fatal(err)
	}
	if err := s.AppendCycleHistory([]LedgerLine{{Session: "s", Cycle: 1, Target: "api", Kind: KindDomain, Result: ResultIdle}}); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(outside); string(b) != "keep\n" {
		t.Fatalf("the symlink's target was written: %q", b)
	}
	fi, err := os.Lstat(s.EvolvePath(CycleHistoryFile))
	if err != nil || !fi.Mode().IsRegular() {
		t.Fatalf("no new ledger: %v", err)
	}
	if got := readString(t, s.EvolvePath(CycleHistoryFile)); !strings.Contains(got, `"result":"idle"`) || !strings.Contains(got, `"value":null`) {
		t.Fatalf("ledger line: %s", got)
	}
}

// A sessions directory that cannot be looked in — a symlink out of the
// project, a file or a pipe in its place — made every name look taken,
// and the search for a free one never ended (a `ooda run` spinning at
// 100 % CPU). It is an error now, at once.
func TestNewSessionIDFailsOnASessionsDirItCannotLookIn(t *testing.T) {
	for name, plant := range map[string]func(p string) error{
		"symlink out": func(p string) error { return os.Symlink(t.TempDir(), p) },
		"file":        func(p string) error { return os.WriteFile(p, []byte("x"), 0o644) },
		"fifo":        func(p string) error { return syscall.Mkfifo(p, 0o644) },
	} {
		t.Run(name, func(t *testing.T) {
			s := sessionStore(t)
			if err := plant(filepath.Join(s.EvolveDir, "sessions")); err != nil {
				t.Fatal(err)
			}
			done := make(chan error, 1)
			go func() {
				_, err := s.NewSessionID(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
				done <- err
			}()
			select {
			case err := <-done:
				if err == nil {
					t.Error("no error")
				}
			case <-time.After(10 * time.Second):
				t.Fatal("NewSessionID did not return")
			}
		})
	}
}
