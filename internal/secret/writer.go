package secret

import (
	"bytes"
	"io"
	"sync"
)

// Writer redacts the known secret values in everything written through it.
// It is safe for concurrent use.
//
// A secret split across two Write calls is still masked: when the data
// written so far ends with the beginning of a secret value, those bytes are
// held back until the next Write shows whether the secret follows (or until
// Flush). Text ending in a newline is never held (a value starts with no
// whitespace), so line-by-line output appears at once, and so does a prompt
// ending in ": ". What is missed: a value registered after part of it has
// already been written, and a secret split by a Flush.
type Writer struct {
	mu      sync.Mutex
	w       io.Writer
	pending []byte
}

// NewWriter returns a Writer that writes the redacted text to w. Call Flush
// when done, or the beginning of a secret held back at the very end is
// lost.
func NewWriter(w io.Writer) *Writer { return &Writer{w: w} }

// Unwrap is the writer w writes on, so a caller can ask what it is (a
// terminal, for the views' style) without bypassing the redaction.
func (w *Writer) Unwrap() io.Writer { return w.w }

// Write redacts p (together with what was held back) and writes it on. It
// returns len(p) when the underlying write succeeds.
func (w *Writer) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	data := p
	if len(w.pending) > 0 {
		data = append(w.pending, p...)
		w.pending = nil
	}
	out := RedactBytes(data)
	var held []byte
	if n := heldSuffix(out); n > 0 {
		held = bytes.Clone(out[len(out)-n:])
		out = out[:len(out)-n]
	}
	if len(out) > 0 {
		if _, err := w.w.Write(out); err != nil {
			return 0, err
		}
	}
	w.pending = held
	return len(p), nil
}

// Flush writes what was held back as the possible start of a secret.
func (w *Writer) Flush() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.pending) == 0 {
		return nil
	}
	p := w.pending
	w.pending = nil
	_, err := w.w.Write(p)
	return err
}

// heldSuffix is the length of the longest suffix of b that is a proper
// prefix of a known secret value: the bytes a Writer must hold back.
func heldSuffix(b []byte) int {
	initDefaults()
	mu.RLock()
	defer mu.RUnlock()
	best := 0
	for v := range values {
		// Only a suffix longer than the best so far matters.
		for i := max(0, len(b)-len(v)+1); i < len(b)-best; i++ {
			if b[i] == v[0] && hasPrefix(v, b[i:]) {
				best = len(b) - i
				break
			}
		}
	}
	return best
}

// hasPrefix reports whether p is a prefix of v, without converting p.
func hasPrefix(v string, p []byte) bool {
	if len(p) > len(v) {
		return false
	}
	for i := range p {
		if v[i] != p[i] {
			return false
		}
	}
	return true
}
