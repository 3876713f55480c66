package state

import (
	"errors"
	"testing"
)

// A view reads only the files it shows: LoadFiles reads the named files as
// Load does and leaves every other at its default, unread and unnamed
// even when it is corrupt (another view names it).
func TestStore_LoadFilesReadsOnlyTheNamedFiles(t *testing.T) {
	s := New(t.TempDir())
	writeEvolveFile(t, s, StateFile, `{"cycle_count": 7, "last_cycle": "2026-03-02T09:00:00Z"}`)
	writeEvolveFile(t, s, MemosFile, `{"score_adjustments": {"api": 1.5}}`)
	writeEvolveFile(t, s, GoalsFile, `{"goals": [`)
	writeEvolveFile(t, s, ReflectionsFile, `not json`)
	writeEvolveFile(t, s, CostLedgerFile, `{"date": `)

	snap, err := s.LoadFiles(StateFile, MemosFile)
	if err != nil {
		t.Fatalf("a cost ledger not asked for is not read: %v", err)
	}
	if snap.State.CycleCount != 7 || snap.Memos.ScoreAdjustments["api"] != 1.5 {
		t.Errorf("named files not read: cycles %d, memos %+v", snap.State.CycleCount, snap.Memos)
	}
	if len(snap.Corrupt) != 0 || snap.CostLedger != nil || len(snap.Goals.Goals) != 0 {
		t.Errorf("files not named were read: corrupt %v, ledger %v", snap.Corrupt, snap.CostLedger)
	}

	snap, err = s.LoadFiles(StateFile, GoalsFile, CostLedgerFile)
	var cle *CorruptLedgerError
	if !errors.As(err, &cle) {
		t.Errorf("a named corrupt cost ledger: err = %v", err)
	}
	if len(snap.Corrupt) != 1 || snap.Corrupt[0].File != GoalsFile {
		t.Errorf("a named corrupt file is named: %v", snap.Corrupt)
	}

	all, _ := s.Load()
	if len(all.Corrupt) != 2 {
		t.Errorf("Load still reads every file: corrupt %v", all.Corrupt)
	}
	if len(s.Written()) != 0 {
		t.Errorf("LoadFiles wrote %v", s.Written())
	}
}

// Bytes counts what a Load read of every file it read — corrupt ones and
// the cost ledger included, files not asked for or missing not — in the
// parallel load as in the sequential one.
func TestStore_LoadCountsTheBytesItRead(t *testing.T) {
	for _, sequential := range []bool{false, true} {
		parallelLoadOff = sequential
		s := New(t.TempDir())
		docs := map[string]string{
			StateFile:       `{"cycle_count": 7}`,
			MemosFile:       `{"score_adjustments": {"api": 1.5}}`,
			GoalsFile:       `{"goals": [`,
			CostLedgerFile:  `{"date": "2026-03-02", "spent": 0.5}`,
			ReflectionsFile: "\n\n",
		}
		total := 0
		for name, doc := range docs {
			writeEvolveFile(t, s, name, doc)
			total += len(doc)
		}
		snap, err := s.Load()
		if err != nil {
			t.Fatal(err)
		}
		if snap.Bytes != int64(total) {
			t.Errorf("sequential %v: Load read %d bytes, want %d", sequential, snap.Bytes, total)
		}
		snap, _ = s.LoadFiles(StateFile, GoalsFile, OutcomesFile)
		if want := len(docs[StateFile]) + len(docs[GoalsFile]); snap.Bytes != int64(want) {
			t.Errorf("sequential %v: LoadFiles read %d bytes, want %d", sequential, snap.Bytes, want)
		}
	}
	parallelLoadOff = false
}
