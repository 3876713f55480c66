package cli

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/ooda-loop/ooda/internal/config"
	"github.com/ooda-loop/ooda/internal/safetext"
)

// configDraft is config.json as it is (raw, and its configuration when
// that validates) plus edits applied in memory: the skill commands check
// the result before they write anything, scaffolded files included, so a
// refusal leaves the project exactly as it was.
type configDraft struct {
	path, root string
	raw, out   []byte
	cfg        *config.Config // the configuration as the file is now
	changes    []change
	pointers   []string
}

// loadDraft reads config.json, which must be a valid configuration: an
// edit cannot be checked against one that is not (the error says what to
// fix first).
func (g *globals) loadDraft(what string) (*configDraft, error) {
	path, root, raw, err := g.configBytes()
	if err != nil {
		return nil, err
	}
	cfg, err := config.ParseProject(path, raw, root)
	if err != nil {
		fmt.Fprintf(g.stderr, "ooda: %s: nothing done: %s is not a valid configuration; fix the problems below first (ooda config validate, ooda doctor)\n", what, path)
		return nil, err
	}
	return &configDraft{path: path, root: root, raw: raw, out: raw, cfg: cfg}, nil
}

// set applies one edit to the draft; setting a value to what it already
// is records no change.
func (d *configDraft) set(key string, value []byte) error {
	k, err := parseKey(key)
	if err != nil {
		return err
	}
	next, old, err := setValue(d.out, k, value)
	if err != nil {
		return usageError(fmt.Errorf("%s: %w", d.path, err))
	}
	if old != nil && bytes.Equal(compactJSON(old), value) {
		return nil
	}
	d.out = next
	c := change{Key: k.text, New: value}
	if old != nil {
		c.Old = compactJSON(old)
	}
	d.changes = append(d.changes, c)
	d.pointers = append(d.pointers, config.Pointer(k.tokens...))
	return nil
}

// check validates the edited document as loading would, and refuses a
// key the configuration does not know (written, it would be ignored). It
// returns the configuration the file will hold.
func (d *configDraft) check(g *globals) (*config.Config, error) {
	if len(d.changes) == 0 {
		return d.cfg, nil
	}
	cfg, err := config.ParseProject(d.path, d.out, d.root)
	if err != nil {
		fmt.Fprintf(g.stderr, "ooda: %s left unchanged: the change would make it invalid:\n", d.path)
		return nil, err
	}
	for _, w := range cfg.Warnings {
		for _, p := range d.pointers {
			if w.Path == p || strings.HasPrefix(w.Path, p+"/") {
				return nil, usageError(fmt.Errorf("%s not written: %s: %s (ooda would ignore this key)", d.path, safetext.Text(w.Path), safetext.Text(w.Reason)))
			}
		}
	}
	return cfg, nil
}

// write replaces config.json atomically with the draft, when it changed.
func (d *configDraft) write() error {
	if len(d.changes) == 0 {
		return nil
	}
	if err := writeFileAtomic(d.path, d.root, d.out); err != nil {
		return fmt.Errorf("%s: %w (the file is unchanged)", d.path, err)
	}
	return nil
}

// printChanges prints the draft's changes as `ooda config set` does.
func (d *configDraft) printChanges(g *globals) {
	if len(d.changes) == 0 {
		return
	}
	fmt.Fprintf(g.human(), "Updated %s:\n", d.path)
	for _, c := range d.changes {
		old := "(not set)"
		if c.Old != nil {
			old = string(c.Old)
		}
		fmt.Fprintf(g.human(), "  %s: %s → %s\n", safetext.Text(c.Key), safetext.Text(old), safetext.Text(string(c.New)))
	}
}

// memberKey is the key of one member of a config section, as a dotted
// path when the name allows it (it reads better in messages), else as a
// JSON Pointer.
func memberKey(section, name, field string) string {
	if strings.ContainsAny(name, "./~") {
		return config.Pointer(section, name, field)
	}
	return section + "." + name + "." + field
}
