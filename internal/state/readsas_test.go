package state

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"
)

// readsAsWhole is the comparison readsAs replaced: the file read whole
// (at most one byte past data), then compared. Kept as its oracle.
func readsAsWhole(f io.Reader, data []byte) bool {
	b, err := io.ReadAll(io.LimitReader(f, int64(len(data))+1))
	return err == nil && bytes.Equal(b, data)
}

// failingReader returns its bytes, then an error that is not an end.
type failingReader struct{ r io.Reader }

func (f *failingReader) Read(p []byte) (int, error) {
	n, err := f.r.Read(p)
	if err == io.EOF {
		return n, errors.New("device gone")
	}
	return n, err
}

// oneByteReader returns at most one byte a call, as a pipe may.
type oneByteReader struct{ r io.Reader }

func (o *oneByteReader) Read(p []byte) (int, error) {
	if len(p) > 1 {
		p = p[:1]
	}
	return o.r.Read(p)
}

// readsAsCases are contents paired with the bytes a write would put
// there: equal, differing at the start, in the middle, at the last byte,
// one byte longer or shorter, empty, and each across several pieces.
func readsAsCases() (out []struct{ file, data []byte }) {
	add := func(file, data []byte) { out = append(out, struct{ file, data []byte }{file, data}) }
	for _, n := range []int{0, 1, 7, sameChunk - 1, sameChunk, sameChunk + 1, 3*sameChunk + 5} {
		data := bytes.Repeat([]byte("0123456789abcdef\n"), n/17+1)[:n]
		add(data, data)
		add(append(bytes.Clone(data), 'x'), data)
		add(bytes.Clone(data), append(bytes.Clone(data), 'x'))
		if n > 0 {
			add(data[:n-1], data)
			for _, at := range []int{0, n / 2, n - 1} {
				other := bytes.Clone(data)
				other[at] ^= 1
				add(other, data)
			}
		}
	}
	return out
}

// readsAs answers as reading the file whole does, from a file, from a
// reader that returns one byte at a time, and from one that fails at the
// end: a read error is a difference, never a match.
func TestReadsAs_MatchesReadingWhole(t *testing.T) {
	dir := t.TempDir()
	matched := 0
	for i, c := range readsAsCases() {
		p := filepath.Join(dir, "f")
		if err := os.WriteFile(p, c.file, 0o644); err != nil {
			t.Fatal(err)
		}
		open := func() *os.File {
			f, err := os.Open(p)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { f.Close() })
			return f
		}
		want := readsAsWhole(open(), c.data)
		if got := readsAs(open(), c.data); got != want {
			t.Fatalf("case %d (%d bytes against %d): readsAs %v, reading whole %v", i, len(c.file), len(c.data), got, want)
		}
		if got := readsAs(&oneByteReader{open()}, c.data); got != want {
			t.Fatalf("case %d, a byte at a time: readsAs %v, reading whole %v", i, got, want)
		}
		if readsAs(&failingReader{open()}, c.data) || readsAsWhole(&failingReader{open()}, c.data) {
			t.Fatalf("case %d: a read that fails is taken as a match", i)
		}
		if want {
			matched++
		}
	}
	if matched < 7 {
		t.Fatalf("only %d cases match; the cases do not reach both answers", matched)
	}
}

// A file a batch would rewrite with the bytes it holds is kept in place;
// one that differs anywhere, or is longer, is rewritten.
func TestReadsAs_BatchKeepsOnlyTheSameBytes(t *testing.T) {
	data := bytes.Repeat([]byte("entry\n"), 3*sameChunk/6)
	for name, tc := range map[string]struct {
		file []byte
		kept bool
	}{
		"same":              {data, true},
		"last byte differs": {append(bytes.Clone(data[:len(data)-1]), 'X'), false},
		"first differs":     {append([]byte("X"), data[1:]...), false},
	} {
		t.Run(name, func(t *testing.T) {
			root := t.TempDir()
			p := filepath.Join(root, "agent", "state", "evolve", OutcomesFile)
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, tc.file, 0o644); err != nil {
				t.Fatal(err)
			}
			before, err := os.Stat(p)
			if err != nil {
				t.Fatal(err)
			}
			if err := New(root).RestoreEvolveFile(OutcomesFile, data); err != nil {
				t.Fatal(err)
			}
			after, err := os.Stat(p)
			if err != nil {
				t.Fatal(err)
			}
			if kept := os.SameFile(before, after); kept != tc.kept {
				t.Fatalf("file kept in place: %v, want %v", kept, tc.kept)
			}
			if b, _ := os.ReadFile(p); !bytes.Equal(b, data) {
				t.Fatal("the file does not hold the bytes written")
			}
		})
	}
}

func FuzzReadsAsMatchesReadingWhole(f *testing.F) {
	f.Add([]byte("abc"), []byte("abc"))
	f.Add([]byte("abcd"), []byte("abc"))
	f.Add([]byte(""), []byte("a"))
	f.Fuzz(func(t *testing.T, file, data []byte) {
		if got, want := readsAs(bytes.NewReader(file), data), readsAsWhole(bytes.NewReader(file), data); got != want {
			t.Fatalf("readsAs(%q, %q) = %v, reading whole %v", file, data, got, want)
		}
		if got, want := readsAs(&oneByteReader{bytes.NewReader(file)}, data), readsAsWhole(bytes.NewReader(file), data); got != want {
			t.Fatalf("a byte at a time: readsAs(%q, %q) = %v, reading whole %v", file, data, got, want)
		}
	})
}

// readsAs is readsAsIn with a buffer of its own.
func readsAs(f io.Reader, data []byte) bool {
	var scratch []byte
	return readsAsIn(f, data, &scratch)
}

// TestReadsAsInReusesItsBuffer: one buffer carried through comparisons of
// files of every size in turn (as a batch compares its files) gives each
// the answer a fresh buffer gives: what an earlier file left in it is
// never taken for the current file's bytes.
func TestReadsAsInReusesItsBuffer(t *testing.T) {
	var scratch []byte
	big := bytes.Repeat([]byte("x"), 3*sameChunk+5)
	cases := []struct{ file, data []byte }{
		{big, big}, {big[:10], big[:10]}, {big[:10], append(bytes.Clone(big[:9]), 'y')},
		{[]byte("ab"), []byte("abc")}, {big[:sameChunk+1], big[:sameChunk+1]}, {nil, nil}, {[]byte("a"), nil},
	}
	for i, c := range cases {
		want := readsAs(bytes.NewReader(c.file), c.data)
		if got := readsAsIn(bytes.NewReader(c.file), c.data, &scratch); got != want {
			t.Errorf("case %d: with the carried buffer %v, with a fresh one %v", i, got, want)
		}
	}
}
