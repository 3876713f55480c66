// Package state owns every file under agent/state/: it is the only package
// that opens them.
//
// Each evolve file has a typed model whose decoder is tolerant (missing files
// are their empty default, legacy shapes are accepted, unknown keys are kept
// and written back) and whose writes are atomic and durable: a reader never
// sees a half-written file, whatever kills the process. Corrupt files are
// never silently discarded: the bytes are copied aside before the engine
// continues from the empty default (the cost ledger instead fails closed).
//
// Skills, merged pull requests and other tools write under agent/state/ as
// well, so nothing found there is trusted: every path is resolved inside the
// project root (a symlink out of it is refused, never followed), only
// regular files within Store.MaxRead are read, and every byte written has
// the values of known secrets redacted (docs/security.md).
package state
