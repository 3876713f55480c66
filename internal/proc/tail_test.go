package proc

import (
	"bytes"
	"math/rand/v2"
	"sync"
	"testing"
)

func TestTailBufferKeepsLastBytes(t *testing.T) {
	t.Parallel()
	const size = 1000
	rng := rand.New(rand.NewPCG(1, 2))
	tb := NewTailBuffer(size)
	var all []byte
	for i := 0; i < 500; i++ {
		// Mostly small writes, sometimes one larger than the buffer.
		n := rng.IntN(50)
		if i%97 == 0 {
			n = size + rng.IntN(size)
		}
		p := make([]byte, n)
		for j := range p {
			p[j] = byte('a' + rng.IntN(26))
		}
		all = append(all, p...)
		if w, err := tb.Write(p); w != n || err != nil {
			t.Fatalf("Write = %d, %v", w, err)
		}
		want := all[max(0, len(all)-size):]
		if !bytes.Equal(tb.Bytes(), want) {
			t.Fatalf("after write %d (%d bytes total): tail differs", i, len(all))
		}
		if tb.Truncated() != (len(all) > size) {
			t.Fatalf("after write %d: Truncated = %v with %d bytes written", i, tb.Truncated(), len(all))
		}
	}
	if tb.Written() != int64(len(all)) {
		t.Errorf("Written = %d, want %d", tb.Written(), len(all))
	}
}

func TestTailBufferSmallAndEmpty(t *testing.T) {
	t.Parallel()
	tb := NewTailBuffer(8)
	if len(tb.Bytes()) != 0 || tb.Truncated() {
		t.Error("new buffer not empty")
	}
	tb.Write([]byte("12345678"))
	if string(tb.Bytes()) != "12345678" || tb.Truncated() {
		t.Errorf("exactly full: %q %v", tb.Bytes(), tb.Truncated())
	}
	tb.Write([]byte("9"))
	if string(tb.Bytes()) != "23456789" || !tb.Truncated() {
		t.Errorf("one over: %q %v", tb.Bytes(), tb.Truncated())
	}

	zero := NewTailBuffer(0)
	zero.Write([]byte("x"))
	if len(zero.Bytes()) != 0 || !zero.Truncated() {
		t.Errorf("size 0: %q %v", zero.Bytes(), zero.Truncated())
	}
}

func TestTailBufferConcurrent(t *testing.T) {
	t.Parallel()
	const size = 64 << 10
	tb := NewTailBuffer(size)
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			line := bytes.Repeat([]byte{'x'}, 1023)
			line = append(line, '\n')
			for i := 0; i < 300; i++ {
				tb.Write(line)
				if i%30 == 0 {
					_ = tb.Bytes()
				}
			}
		}()
	}
	wg.Wait()
	got := tb.Bytes()
	if len(got) != size || !tb.Truncated() {
		t.Fatalf("len %d truncated %v", len(got), tb.Truncated())
	}
	// Whole 1024-byte writes were never interleaved.
	for i := 1023; i < len(got); i += 1024 {
		if got[i] != '\n' {
			t.Fatalf("byte %d = %q, want newline", i, got[i])
		}
	}
}

// The buffer holds what was written, growing with it, and becomes a ring
// only once full: the same tail as a ring of the full size from the start,
// through every phase (growing, filling exactly, wrapping, one write
// larger than it), and memory that follows the output, never beyond the
// size kept.
func TestTailBufferGrowsWithOutput(t *testing.T) {
	t.Parallel()
	const size = 10000
	rng := rand.New(rand.NewPCG(3, 4))
	for round := range 20 {
		tb := NewTailBuffer(size)
		tb.Write([]byte("hello\n"))
		if c := cap(tb.buf); c > 4096 {
			t.Fatalf("6 bytes written hold %d bytes of memory", c)
		}
		all := []byte("hello\n")
		for i := 0; i < 400; i++ {
			n := rng.IntN(200)
			if i == 300+round {
				n = size + rng.IntN(3)
			}
			p := make([]byte, n)
			for j := range p {
				p[j] = byte('a' + rng.IntN(26))
			}
			all = append(all, p...)
			tb.Write(p)
			if want := all[max(0, len(all)-size):]; !bytes.Equal(tb.Bytes(), want) {
				t.Fatalf("round %d, write %d (%d bytes in all): tail differs", round, i, len(all))
			}
			if cap(tb.buf) > size {
				t.Fatalf("round %d: %d bytes of memory for a tail of %d", round, cap(tb.buf), size)
			}
		}
	}
}
