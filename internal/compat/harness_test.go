package compat

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/ooda-loop/ooda/internal/clock"
	"github.com/ooda-loop/ooda/internal/engine"
	"github.com/ooda-loop/ooda/internal/forge"
	"github.com/ooda-loop/ooda/internal/skills"
)

// t0 is a Tuesday of ISO week 2026-W16, so the week before (W15) is the
// one an episode would summarise.
var t0 = time.Date(2026, 4, 14, 9, 0, 0, 0, time.UTC)

const evolve = "agent/state/evolve"

// fixture copies testdata/<name> into a fresh project directory, with
// testdata/config.json and testdata/skill.sh unless the fixture has its
// own.
func fixture(t *testing.T, name string) string {
	t.Helper()
	dir := t.TempDir()
	for _, f := range []string{"config.json", "skill.sh"} {
		copyFile(t, filepath.Join("testdata", f), filepath.Join(dir, f))
	}
	src := filepath.Join("testdata", name)
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		copyFile(t, p, filepath.Join(dir, rel))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, to, b)
}

func writeFile(t *testing.T, p string, b []byte) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// cycle runs one real cycle in-process at now; fg may be nil (no forge).
func cycle(t *testing.T, dir string, now time.Time, fg forge.Forge) (engine.Result, string) {
	t.Helper()
	var out bytes.Buffer
	res, err := engine.RunCycle(context.Background(), engine.Options{Project: dir, Clock: clock.NewFixed(now),
		Registry: skills.Registry(), Out: &out, Forge: fg})
	if err != nil {
		t.Fatalf("RunCycle at %s: %v\n%s", now.Format(time.RFC3339), err, out.String())
	}
	return res, out.String()
}

// completed runs one cycle that must complete without a HALT.
func completed(t *testing.T, dir string, now time.Time, fg forge.Forge) (engine.Result, string) {
	t.Helper()
	res, out := cycle(t, dir, now, fg)
	if res.Status != engine.StatusCompleted || res.ExitCode() != 0 {
		t.Fatalf("cycle at %s: status %s reason %s exit %d\n%s", now.Format(time.RFC3339), res.Status, res.Reason, res.ExitCode(), out)
	}
	if _, err := os.Stat(filepath.Join(dir, "agent/safety/HALT")); err == nil {
		t.Fatalf("cycle at %s created a HALT\n%s", now.Format(time.RFC3339), out)
	}
	return res, out
}

func readFile(t *testing.T, dir, rel string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, rel))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// doc is a JSON document read without any of ooda's types, so the suite
// sees the files as another reader would.
type doc struct {
	t    *testing.T
	name string
	raw  json.RawMessage
}

func load(t *testing.T, dir, rel string) doc {
	t.Helper()
	b := readFile(t, dir, rel)
	if !json.Valid(b) {
		t.Fatalf("%s is not JSON:\n%s", rel, b)
	}
	return doc{t: t, name: rel, raw: b}
}

// at follows object keys; a missing key yields nil.
func (d doc) at(keys ...string) json.RawMessage {
	d.t.Helper()
	cur := d.raw
	for _, k := range keys {
		var m map[string]json.RawMessage
		if err := json.Unmarshal(cur, &m); err != nil {
			return nil
		}
		cur = m[k]
		if cur == nil {
			return nil
		}
	}
	return cur
}

// list is the array at keys (nil when absent or not an array).
func (d doc) list(keys ...string) []json.RawMessage {
	d.t.Helper()
	var l []json.RawMessage
	if json.Unmarshal(d.at(keys...), &l) != nil {
		return nil
	}
	return l
}

func (d doc) num(keys ...string) (float64, bool) {
	var f float64
	raw := d.at(keys...)
	if raw == nil || json.Unmarshal(raw, &f) != nil {
		return 0, false
	}
	return f, true
}

// compact is raw without insignificant whitespace: "byte for byte,
// whitespace aside" compares compact forms, so key order, number spelling
// and nulls all count.
func compact(raw json.RawMessage) string {
	var b bytes.Buffer
	if json.Compact(&b, raw) != nil {
		return string(raw)
	}
	return b.String()
}

func field(raw json.RawMessage, key string) json.RawMessage {
	var m map[string]json.RawMessage
	if json.Unmarshal(raw, &m) != nil {
		return nil
	}
	return m[key]
}

func str(raw json.RawMessage) string {
	var s string
	_ = json.Unmarshal(raw, &s)
	return s
}

// byID indexes entries by the string value of key.
func byID(entries []json.RawMessage, key string) map[string]json.RawMessage {
	m := map[string]json.RawMessage{}
	for _, e := range entries {
		m[str(field(e, key))] = e
	}
	return m
}

// sameEntries asserts that every entry of before appears, whitespace
// aside byte for byte, in after, in the same relative order: key order,
// number spelling (1.0), nulls and unknown keys all count. This is the
// strict form of "nothing lost"; see keptEntries for the value form.
func sameEntries(t *testing.T, what string, before, after []json.RawMessage) {
	t.Helper()
	j := 0
	for i, b := range before {
		want := compact(b)
		for j < len(after) && compact(after[j]) != want {
			j++
		}
		if j == len(after) {
			t.Errorf("%s[%d] rewritten; it was\n  %s\nnow the list is\n  %s", what, i, want, joinCompact(after))
			return
		}
		j++
	}
}

// valueEq compares two JSON values as values: key order and number
// spelling aside.
func valueEq(a, b json.RawMessage) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	return reflect.DeepEqual(x, y)
}

// diffKeys lists how after differs from before, key by key: a key lost,
// a key whose value was null, [] or {} dropped, a value changed, a key added. Keys named in changed
// are expected to change and are not listed.
func diffKeys(before, after json.RawMessage, changed ...string) (lost, nullsDropped, values, added []string) {
	var b, a map[string]json.RawMessage
	if json.Unmarshal(before, &b) != nil || json.Unmarshal(after, &a) != nil {
		return []string{"(not objects)"}, nil, nil, nil
	}
	skip := map[string]bool{}
	for _, c := range changed {
		skip[c] = true
	}
	for k, v := range b {
		if skip[k] {
			continue
		}
		got, ok := a[k]
		switch {
		case !ok && (compact(v) == "null" || compact(v) == "[]" || compact(v) == "{}"):
			nullsDropped = append(nullsDropped, k)
		case !ok:
			lost = append(lost, k)
		case !valueEq(got, v):
			values = append(values, fmt.Sprintf("%s: %s -> %s", k, compact(v), compact(got)))
		}
	}
	for k := range a {
		if _, ok := b[k]; !ok && !skip[k] {
			added = append(added, k)
		}
	}
	sort.Strings(lost)
	sort.Strings(nullsDropped)
	sort.Strings(values)
	sort.Strings(added)
	return lost, nullsDropped, values, added
}

// keysKept asserts that every non-empty key of before is in after with the
// same value (as a value), except the keys named in changed. Dropped null
// keys, added keys and spelling are the strict checks' business.
func keysKept(t *testing.T, what string, before, after json.RawMessage, changed ...string) {
	t.Helper()
	lost, _, values, _ := diffKeys(before, after, changed...)
	if len(lost) > 0 || len(values) > 0 {
		t.Errorf("%s: keys lost %v, values changed %v\nwas %s\nnow %s", what, lost, values, compact(before), compact(after))
	}
}

// keptEntries asserts that every entry of before has a counterpart in
// after, in order, that keeps all its non-empty keys with equal values.
func keptEntries(t *testing.T, what string, before, after []json.RawMessage) {
	t.Helper()
	j := 0
	for i, b := range before {
		found := false
		for j < len(after) && !found {
			lost, _, values, _ := diffKeys(b, after[j])
			found = len(lost) == 0 && len(values) == 0
			j++
		}
		if !found {
			t.Errorf("%s[%d] lost; it was\n  %s\nnow the list is\n  %s", what, i, compact(b), joinCompact(after))
			return
		}
	}
}

func joinCompact(l []json.RawMessage) string {
	s := make([]string, len(l))
	for i, e := range l {
		s[i] = compact(e)
	}
	return strings.Join(s, "\n  ")
}

// cycleCount is state.json's cycle_count.
func cycleCount(t *testing.T, dir string) int {
	t.Helper()
	n, ok := load(t, dir, evolve+"/state.json").num("cycle_count")
	if !ok {
		t.Fatalf("state.json has no numeric cycle_count")
	}
	return int(n)
}

// continues asserts the cycle numbering went on from the fixture's count.
func continues(t *testing.T, dir string, res engine.Result, before int) {
	t.Helper()
	if res.Cycle != before+1 || cycleCount(t, dir) != before+1 {
		t.Fatalf("cycle numbering reset: ran cycle %d, state.json cycle_count %d; want %d after the original's %d",
			res.Cycle, cycleCount(t, dir), before+1, before)
	}
}

// fakeForge stands in for the forge at the network boundary: it lists the
// given recently merged and closed pull requests and nothing else.
type fakeForge struct{ status forge.Status }

func (f *fakeForge) Name() string                                 { return "fake" }
func (f *fakeForge) Status(context.Context) (forge.Status, error) { return f.status, nil }
func (f *fakeForge) Facts(context.Context, int) (forge.Facts, error) {
	return forge.Facts{}, forge.ErrNotFound
}
func (f *fakeForge) MergeSquash(context.Context, int, string) error { return forge.ErrNotFound }
func (f *fakeForge) Reverted(context.Context, forge.PR) (bool, error) {
	return false, nil
}
