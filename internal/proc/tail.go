package proc

import "sync"

// LogTailSize is how much of a run's output is kept for its log.
const LogTailSize = 1 << 20

// TailBuffer is an io.Writer that keeps only the last bytes written to it,
// so a skill that prints without end costs bounded memory while the end of
// its output, where failures are reported, is kept. It is safe for
// concurrent use. Create it with NewTailBuffer.
type TailBuffer struct {
	mu    sync.Mutex
	buf   []byte // ring of len cap
	start int    // index of the oldest byte
	n     int    // bytes held
	total int64  // bytes ever written
}

// NewTailBuffer returns a TailBuffer that keeps the last size bytes.
func NewTailBuffer(size int) *TailBuffer {
	return &TailBuffer{buf: make([]byte, max(size, 0))}
}

// Write keeps the tail of p and never fails.
func (t *TailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	written := len(p)
	t.total += int64(written)
	size := len(t.buf)
	if size == 0 {
		return written, nil
	}
	if len(p) >= size {
		copy(t.buf, p[len(p)-size:])
		t.start, t.n = 0, size
		return written, nil
	}
	end := (t.start + t.n) % size
	c := copy(t.buf[end:], p)
	copy(t.buf, p[c:])
	t.n += len(p)
	if t.n > size {
		t.start = (t.start + t.n - size) % size
		t.n = size
	}
	return written, nil
}

// Bytes returns a copy of the bytes kept, oldest first.
func (t *TailBuffer) Bytes() []byte {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := make([]byte, t.n)
	c := copy(out, t.buf[t.start:min(t.start+t.n, len(t.buf))])
	copy(out[c:], t.buf)
	return out
}

// Truncated reports whether more was written than is kept.
func (t *TailBuffer) Truncated() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.total > int64(len(t.buf))
}

// Written returns how many bytes were written in all, kept or not.
func (t *TailBuffer) Written() int64 {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.total
}
