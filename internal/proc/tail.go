package proc

import "sync"

// LogTailSize is how much of a run's output is kept for its log.
const LogTailSize = 1 << 20

// TailBuffer is an io.Writer that keeps only the last bytes written to it,
// so a skill that prints without end costs bounded memory while the end of
// its output, where failures are reported, is kept. It is safe for
// concurrent use. Create it with NewTailBuffer.
//
// Its memory grows with what is written, up to the size kept: most runs
// print a few lines, and a megabyte set aside (and zeroed, page by page)
// for each of them would be most of a quiet cycle's allocations.
type TailBuffer struct {
	mu   sync.Mutex
	size int // bytes kept at most
	// buf holds everything written while that is less than size, oldest
	// first; once it reaches size it is a ring whose oldest byte is at
	// start.
	buf   []byte
	start int
	total int64 // bytes ever written
}

// NewTailBuffer returns a TailBuffer that keeps the last size bytes.
func NewTailBuffer(size int) *TailBuffer {
	return &TailBuffer{size: max(size, 0)}
}

// Write keeps the tail of p and never fails.
func (t *TailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	written := len(p)
	t.total += int64(written)
	size := t.size
	if size == 0 {
		return written, nil
	}
	if len(p) >= size {
		t.grow(size)
		t.buf = t.buf[:size]
		copy(t.buf, p[len(p)-size:])
		t.start = 0
		return written, nil
	}
	if room := size - len(t.buf); room > 0 {
		k := min(room, len(p))
		t.grow(len(t.buf) + k)
		t.buf = append(t.buf, p[:k]...)
		p = p[k:]
		if len(p) == 0 {
			return written, nil
		}
	}
	// Full: p (shorter than size) overwrites the oldest bytes.
	c := copy(t.buf[t.start:], p)
	copy(t.buf, p[c:])
	t.start = (t.start + len(p)) % size
	return written, nil
}

// grow makes room for n bytes in buf, doubling as append would but never
// beyond size.
func (t *TailBuffer) grow(n int) {
	if n <= cap(t.buf) {
		return
	}
	c := min(max(n, 2*cap(t.buf), 4096), t.size)
	nb := make([]byte, len(t.buf), c)
	copy(nb, t.buf)
	t.buf = nb
}

// Bytes returns a copy of the bytes kept, oldest first.
func (t *TailBuffer) Bytes() []byte {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := make([]byte, len(t.buf))
	c := copy(out, t.buf[t.start:])
	copy(out[c:], t.buf[:t.start])
	return out
}

// Truncated reports whether more was written than is kept.
func (t *TailBuffer) Truncated() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.total > int64(t.size)
}

// Written returns how many bytes were written in all, kept or not.
func (t *TailBuffer) Written() int64 {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.total
}
