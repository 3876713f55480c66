package foldnames

import (
	"os"
	"path/filepath"
	"testing"
)

func listDir(t *testing.T, dir string, max int) (map[string]bool, bool) {
	t.Helper()
	d, err := os.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	return Read(d, max)
}

func touch(t *testing.T, dir string, names ...string) {
	t.Helper()
	for _, n := range names {
		if err := os.WriteFile(filepath.Join(dir, n), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// A name is listed folded, so a lookup in another case still finds it.
func TestReadFoldsNames(t *testing.T) {
	dir := t.TempDir()
	touch(t, dir, "State.JSON", "lens.json")
	names, unusable := listDir(t, dir, 10)
	if unusable || len(names) != 2 || !names["state.json"] || !names["lens.json"] || names["State.JSON"] {
		t.Fatalf("Read = %v, unusable %v; want the two names lower-cased", names, unusable)
	}
}

// Folding beyond ASCII is the file system's: such a listing cannot say a
// name is absent.
func TestReadRefusesNonASCII(t *testing.T) {
	dir := t.TempDir()
	touch(t, dir, "plain.json", "Ünïcode.json")
	if names, unusable := listDir(t, dir, 10); !unusable || names != nil {
		t.Fatalf("Read = %v, unusable %v; want unusable", names, unusable)
	}
}

func TestReadRefusesMoreThanMax(t *testing.T) {
	dir := t.TempDir()
	touch(t, dir, "a", "b", "c")
	if _, unusable := listDir(t, dir, 2); !unusable {
		t.Fatal("a listing over max must be unusable")
	}
	if _, unusable := listDir(t, dir, 3); unusable {
		t.Fatal("a listing of exactly max names is usable")
	}
}

func TestLowerKeepsPlainNames(t *testing.T) {
	for in, want := range map[string]string{"abc": "abc", "ABC": "abc", "a-B.c": "a-b.c", "": ""} {
		if got := Lower(in); got != want {
			t.Errorf("Lower(%q) = %q, want %q", in, got, want)
		}
	}
	if ASCII("é") || !ASCII("plain_name-1.json") {
		t.Error("ASCII misjudges")
	}
}
