package gitrepo

import (
	"bytes"
	"compress/zlib"
	"context"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// A stored zlib stream is one any zlib reader takes back to the same
// bytes, in one block or in many (a stored block holds at most 65,535).
func TestStoredZlibRoundTrips(t *testing.T) {
	for _, n := range []int{0, 1, 100, 65535 - 11, 65535 - 10, 65535, 65536, 2*65535 + 7, 300000} {
		body := bytes.Repeat([]byte("ab\x00c"), n/4+1)[:n]
		var buf bytes.Buffer
		appendStoredZlib(&buf, "blob 10\x00", body)
		z, err := zlib.NewReader(&buf)
		if err != nil {
			t.Fatalf("%d bytes: %v", n, err)
		}
		got, err := io.ReadAll(z)
		if err != nil {
			t.Fatalf("%d bytes: %v", n, err)
		}
		if want := append([]byte("blob 10\x00"), body...); !bytes.Equal(got, want) {
			t.Fatalf("%d bytes: read back %d bytes, not the %d written", n, len(got), len(want))
		}
		if err := z.Close(); err != nil {
			t.Fatalf("%d bytes: checksum: %v", n, err)
		}
	}
}

// Small objects are written stored and large ones compressed, and git
// reads both: a state commit of a small and a large file passes fsck,
// and each blob is the file's bytes.
func TestObjectsSmallStoredLargeCompressedGitReadsBoth(t *testing.T) {
	settleNow(t)
	dir, git := setup(t)
	settleIndex(t, dir)
	paths := []string{"s/small.json", "s/large.json"}
	p := nativePrep(t, dir, paths)
	os.MkdirAll(filepath.Join(dir, "s"), 0o755)
	small := "{\"n\": 1}\n"
	large := strings.Repeat("{\"entry\": \"a line that repeats\"}\n", 4000) // ≈ 140 KB
	os.WriteFile(filepath.Join(dir, "s/small.json"), []byte(small), 0o644)
	os.WriteFile(filepath.Join(dir, "s/large.json"), []byte(large), 0o644)
	c, err := p.Commit(context.Background(), "evolve: cycle #1 -- d (x)", paths)
	if err != nil || c == nil {
		t.Fatalf("commit %+v, %v", c, err)
	}
	git("fsck", "--strict", "--no-dangling")
	if got := git("show", "HEAD:s/small.json"); got != strings.TrimSpace(small) {
		t.Errorf("small blob %q", got)
	}
	if got := git("show", "HEAD:s/large.json"); got != strings.TrimSpace(large) {
		t.Errorf("large blob: %d bytes, want %d", len(got), len(strings.TrimSpace(large)))
	}
	// The size of each object's entry in the commit's pack, as git
	// reports it.
	objSize := func(path string) int64 {
		oid := git("rev-parse", "HEAD:"+path)
		idx, _ := filepath.Glob(filepath.Join(dir, ".git", "objects", "pack", "*.idx"))
		if len(idx) != 1 {
			t.Fatalf("packs: %v", idx)
		}
		for _, line := range strings.Split(git("verify-pack", "-v", idx[0]), "\n") {
			// <oid> <type> <size> <size in pack> <offset>
			if f := strings.Fields(line); len(f) == 5 && f[0] == oid {
				n, _ := strconv.ParseInt(f[3], 10, 64)
				return n
			}
		}
		t.Fatalf("%s not in the pack", oid)
		return 0
	}
	// Stored: the bytes plus the entry's header (1 byte), 2 + 5 + 4
	// bytes of framing.
	if got, want := objSize("s/small.json"), int64(1+len(small)+11); got != want {
		t.Errorf("small object is %d bytes on disk, want %d (stored)", got, want)
	}
	if got := objSize("s/large.json"); got > int64(len(large))/4 {
		t.Errorf("large object is %d bytes on disk for %d bytes: not compressed", got, len(large))
	}
	// Read back through the pooled readers, twice.
	for range 2 {
		oid := git("rev-parse", "HEAD:s/large.json")
		typ, body, ok := ReadLoose(filepath.Join(dir, ".git", "objects"), oid, 1<<20)
		if !ok || typ != "blob" || string(body) != large {
			t.Fatalf("ReadLoose: %q, %d bytes, %v", typ, len(body), ok)
		}
	}
}
