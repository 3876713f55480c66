package artifact

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"
)

// Hash is the rubric's integrity hash: the SHA-256, in lower-case hex, of
// its canonical JSON.
//
// The canonical form is what the rubric means, not how it is laid out:
// object keys sorted, no whitespace between tokens, every string written
// by one encoder (so "\u0041" and "A" agree), every number written as the
// shortest form of its float64 value (so 0.7, 0.70 and 7e-1 agree).
// Re-indenting config.json, reordering keys or respelling a number
// therefore keeps the hash; changing any key or value — a weight, a bar, a
// target, a command, a reference anchor, even a comment key such as
// "__doc__" — changes it. A key given twice counts once, with its last
// value, which is also the value Parse uses.
func Hash(raw json.RawMessage) (string, error) {
	canon, err := Canonical(raw)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(canon)
	return hex.EncodeToString(sum[:]), nil
}

// Canonical is raw in the canonical form Hash describes.
func Canonical(raw json.RawMessage) ([]byte, error) {
	var v any
	dec := json.NewDecoder(bytes.NewReader(raw))
	if err := dec.Decode(&v); err != nil {
		return nil, fmt.Errorf("not valid JSON: %w", err)
	}
	if dec.More() {
		return nil, fmt.Errorf("not valid JSON: more than one value")
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// Integrity is the result of checking a rubric against its recorded hash.
type Integrity struct {
	// Hash is the rubric's hash now.
	Hash string
	// Record is true when no hash was recorded: the engine records Hash
	// (checkpoints rubric_hash) as the rubric's first use.
	Record bool
	// Halt is the HALT reason when the rubric changed since its hash was
	// recorded; empty otherwise.
	Halt string
}

// CheckIntegrity compares the rubric at path with the hash recorded on its
// first use (recorded; empty when none was). A rubric that cannot be
// hashed is an error, which the engine treats like a mismatch: grading
// against a rubric whose identity is unknown is not allowed either.
func CheckIntegrity(path string, raw json.RawMessage, recorded string) (Integrity, error) {
	h, err := Hash(raw)
	if err != nil {
		return Integrity{}, fmt.Errorf("%s: %w", path, err)
	}
	rec := normalHash(recorded)
	switch {
	case strings.TrimSpace(recorded) == "":
		return Integrity{Hash: h, Record: true}, nil
	case rec == h:
		return Integrity{Hash: h}, nil
	}
	return Integrity{Hash: h, Halt: fmt.Sprintf(
		"config.json %s changed since it was first used (sha256 %s, recorded %s in agent/state/evolve/checkpoints.json rubric_hashes): the loop may not change the standard it is graded by. Restore the rubric, or accept the change by deleting its entry from rubric_hashes in the newest checkpoint.",
		path, short(h), short(rec))}, nil
}

// short abbreviates a hash for a message; a recorded value that is not a
// hash (the state file is not trusted) is not echoed.
func short(h string) string {
	if !isHexHash(h) {
		return "(not a SHA-256)"
	}
	if len(h) > 16 {
		return h[:16] + "…"
	}
	return h
}
