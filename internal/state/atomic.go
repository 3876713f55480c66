package state

import (
	"fmt"
	"os"
	"path/filepath"
)

// WriteFileAtomic replaces path with data so that a concurrent reader or a
// crash at any instant leaves either the old or the new content, never a
// mix: write a temporary file in the same directory, fsync it, rename it
// over the target, then fsync the directory so the rename itself is durable.
// A symlink at path is replaced, never written through.
//
// It writes data as given and knows no project: a Store's methods, which
// also keep every path inside the project and redact secrets, are the way
// to write state.
func WriteFileAtomic(path string, data []byte, perm os.FileMode) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	r, err := os.OpenRoot(dir)
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	defer r.Close()
	return writeAtomicIn(r, filepath.Base(path), path, data, perm)
}

// AppendLine appends one line to an append-only log and fsyncs it. The
// write is a single write(2) on an O_APPEND descriptor so concurrent
// appenders never interleave within a line. Only a regular file is
// appended to, and a symlink at path is followed only within its own
// directory.
func AppendLine(path string, line []byte) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("append %s: %w", path, err)
	}
	r, err := os.OpenRoot(dir)
	if err != nil {
		return fmt.Errorf("append %s: %w", path, err)
	}
	defer r.Close()
	return appendIn(r, filepath.Base(path), path, line)
}

// encodeJSON is the one encoding of every state file: indented, and without
// HTML escaping, so a user's `&&` or `>` stays readable in the file. The
// indentation is bounded (indentBounded): a preserved unknown value nested
// deep or holding a long array cannot make the file many times larger
// than its content. The store's writer redacts the result (writeFile).
func encodeJSON(v any) ([]byte, error) {
	if b, ok := encodeDocument(v); ok {
		return b, nil
	}
	b, err := marshalNoEscape(v)
	if err != nil {
		return nil, err
	}
	return indentBounded(b), nil
}
