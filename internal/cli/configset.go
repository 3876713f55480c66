package cli

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/ooda-loop/ooda/internal/config"
	"github.com/ooda-loop/ooda/internal/safetext"
)

// The commands that read and change one value of config.json. A change is
// a splice of the file's bytes: only the changed value's text is replaced
// (or a member inserted), so key order, unknown keys, "__doc__" notes and
// the indentation of everything else stay as the user wrote them.

func newGetCmd(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "get KEY",
		Short: "Print the value of KEY in config.json, as JSON",
		Long: `Print the value at KEY in config.json as JSON: a string is printed quoted
("launch"), an object or array indented, a number as the file writes it.
KEY is a dotted path such as safety.confidence_threshold, or a JSON Pointer
such as /skills/~1probe/timeout for keys that contain a dot or a slash.

A key the file does not set is an error (exit 2), with its default when it
has one. --json prints {"file", "key", "value"}.`,
		Args: exactArgs("ooda config get KEY", 1),
		RunE: func(cmd *cobra.Command, args []string) error { return runConfigGet(g, args[0]) },
	}
}

func newSetCmd(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "set KEY VALUE",
		Short: "Set the value of KEY in config.json (VALUE is JSON, else a string)",
		Long: `Set the value at KEY in config.json. VALUE is parsed as JSON (0.7, true,
null, [1,2], {"a":1}, "quoted"), else taken as a string (launch). KEY is a
dotted path or a JSON Pointer, as for "ooda config get"; missing objects on
the way are created.

Only the value's text changes: key order, unknown keys, "__doc__" notes and
the file's indentation are kept. The result is validated before anything is
written; an invalid result, or a key ooda does not know (a misspelling it
would ignore), is refused with exit 2 and the file is left as it was. The
file is replaced atomically (a temporary file in the same directory,
synced, then renamed), and the change is printed as "KEY: OLD → NEW".`,
		Args: exactArgs("ooda config set KEY VALUE (quote a VALUE that holds spaces)", 2),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runConfigEdit(g, []configEdit{{key: args[0], value: parseValueArg(args[1])}}, nil)
		},
	}
}

func newLevelCmd(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "level N",
		Short: "Set progressive_complexity.current_level (0, 1, 2 or 3)",
		Args:  exactArgs("ooda config level N (N is 0, 1, 2 or 3)", 1),
		RunE: func(cmd *cobra.Command, args []string) error {
			n, err := strconv.Atoi(args[0])
			if err != nil || n < 0 || n > 3 {
				return usageError(fmt.Errorf("level: %q is not a level: N is 0 (just watching), 1 (watching + testing), 2 (full observation) or 3 (autonomous)", args[0]))
			}
			return runConfigEdit(g, []configEdit{{key: "progressive_complexity.current_level", value: []byte(strconv.Itoa(n))}}, nil)
		},
	}
}

func newAutoMergeCmd(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "auto-merge on|off",
		Short: "Set safety.enable_auto_merge (auto-merge acts at level 3 only)",
		Args:  exactArgs("ooda config auto-merge on|off", 1),
		RunE: func(cmd *cobra.Command, args []string) error {
			var v string
			switch args[0] {
			case "on":
				v = "true"
			case "off":
				v = "false"
			default:
				return usageError(fmt.Errorf("auto-merge: %q is neither on nor off", args[0]))
			}
			return runConfigEdit(g, []configEdit{{key: "safety.enable_auto_merge", value: []byte(v)}}, func(cfg *config.Config) {
				if v == "true" && cfg.ProgressiveComplex.CurrentLevel < 3 {
					fmt.Fprintf(g.human(), "note: auto-merge acts only at level 3; progressive_complexity.current_level is %d (ooda config level 3)\n", cfg.ProgressiveComplex.CurrentLevel)
				}
			})
		},
	}
}

func newSeasonCmd(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "season MODE",
		Short: "Switch to the season mode MODE (season_modes.current_mode; enables season modes)",
		Long: `Set season_modes.current_mode to MODE, which must be defined in
season_modes.modes, and season_modes.enabled to true when it is not: a mode
only applies while season modes are enabled. To turn them off again:
ooda config set season_modes.enabled false.`,
		Args: exactArgs("ooda config season MODE", 1),
		RunE: func(cmd *cobra.Command, args []string) error { return runSeason(g, args[0]) },
	}
}

// exactArgs requires n positional arguments, naming the usage otherwise.
func exactArgs(usage string, n int) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) != n {
			return usageError(fmt.Errorf("usage: %s", usage))
		}
		return nil
	}
}

// configEdit is one value to write: key as the user wrote it, value as
// compact JSON.
type configEdit struct {
	key   string
	value []byte
}

// parseValueArg is VALUE of `ooda config set`: JSON when it parses as one
// JSON value, else the string itself.
func parseValueArg(s string) []byte {
	if t := strings.TrimSpace(s); t != "" && json.Valid([]byte(t)) {
		var b bytes.Buffer
		if json.Compact(&b, []byte(t)) == nil {
			return b.Bytes()
		}
	}
	return marshalNoHTML(s)
}

func marshalNoHTML(v any) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v)
	return bytes.TrimSuffix(b.Bytes(), []byte("\n"))
}

// keyPath is a parsed KEY.
type keyPath struct {
	text    string   // as written
	tokens  []string // unescaped keys (or array indexes)
	pointer bool     // written as a JSON Pointer
}

// show names the first n tokens of the path the way the user wrote it.
func (k keyPath) show(n int) string {
	if k.pointer {
		return config.Pointer(k.tokens[:n]...)
	}
	return strings.Join(k.tokens[:n], ".")
}

// parseKey reads KEY: a dotted path, or a JSON Pointer when it starts with
// "/". An empty key ("a..b", a leading or trailing dot) is refused rather
// than read as the key "": it is almost always a typo, and ".." must never
// look like a way out of the object. The path is bounded by the depth
// config.json may nest to.
func parseKey(key string) (keyPath, error) {
	k := keyPath{text: key}
	switch {
	case key == "":
		return k, usageError(errors.New("KEY is empty: write a dotted path such as safety.confidence_threshold"))
	case strings.HasPrefix(key, "/"):
		k.pointer = true
		for _, t := range strings.Split(key[1:], "/") {
			k.tokens = append(k.tokens, strings.ReplaceAll(strings.ReplaceAll(t, "~1", "/"), "~0", "~"))
		}
	default:
		k.tokens = strings.Split(key, ".")
	}
	if len(k.tokens) > config.MaxDepth {
		return k, usageError(fmt.Errorf("KEY %s has %d levels: config.json nests at most %d", safetext.Text(shortKey(key)), len(k.tokens), config.MaxDepth))
	}
	if slices.Contains(k.tokens, "") {
		hint := `write a dotted path such as safety.confidence_threshold, or a JSON Pointer such as /skills/~1probe/timeout for a key that holds a dot`
		if k.pointer {
			hint = `a JSON Pointer is /section/key, with "~1" for a "/" and "~0" for a "~" inside a key`
		}
		return k, usageError(fmt.Errorf("KEY %q has an empty part: %s", safetext.Text(shortKey(key)), hint))
	}
	return k, nil
}

// shortKey bounds a hostile KEY's length in messages.
func shortKey(s string) string {
	if len(s) > 120 {
		return s[:100] + "…(" + strconv.Itoa(len(s)) + " bytes)"
	}
	return s
}

// readConfigRaw reads config.json for get and set: a regular file of at
// most config.MaxConfigBytes holding one JSON object. It need not be a
// valid configuration (set is how one may be repaired); a syntax error is
// reported as loading would report it.
// configBytes is config.json's path, the project root and the file's
// bytes, for the commands that edit or read the file as it is.
func (g *globals) configBytes() (path, root string, raw []byte, err error) {
	if path, err = g.configPath(); err != nil {
		return "", "", nil, err
	}
	if root, err = g.root(); err != nil {
		return "", "", nil, err
	}
	raw, err = readConfigRaw(path, root)
	return path, root, raw, err
}

func readConfigRaw(path, root string) ([]byte, error) {
	raw, err := config.ReadRegular(path, config.MaxConfigBytes)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, &config.Error{File: path, Reason: "config.json not found (run `ooda init` to create it)", NotFound: true}
		}
		return nil, &config.Error{File: path, Reason: err.Error()}
	}
	t := bytes.TrimSpace(raw)
	if !json.Valid(raw) || len(t) == 0 || t[0] != '{' {
		if _, perr := config.ParseProject(path, raw, root); perr != nil {
			return nil, perr
		}
		return nil, &config.Error{File: path, Reason: "the top level must be a JSON object"}
	}
	return raw, nil
}

func runConfigGet(g *globals, key string) error {
	k, err := parseKey(key)
	if err != nil {
		return err
	}
	path, _, raw, err := g.configBytes()
	if err != nil {
		return err
	}
	loc, err := locate(raw, k)
	if err != nil {
		return usageError(fmt.Errorf("%s: %w", path, err))
	}
	if !loc.found {
		msg := fmt.Sprintf("%s: %s is not set", path, safetext.Text(shortKey(k.text)))
		if d, ok := defaultValue(k); ok {
			msg += fmt.Sprintf(" (its default is %s)", safetext.Text(string(d)))
		}
		return usageError(errors.New(msg))
	}
	val := compactJSON(raw[loc.start:loc.end])
	if g.json {
		return g.printJSON(struct {
			File  string          `json:"file"`
			Key   string          `json:"key"`
			Value json.RawMessage `json:"value"`
		}{path, k.text, val})
	}
	var b bytes.Buffer
	if json.Indent(&b, val, "", "  ") != nil {
		b.Reset()
		b.Write(val)
	}
	b.WriteByte('\n')
	_, err = g.stdout.Write(safetext.JSON(b.Bytes()))
	return err
}

// defaultValue is the value ooda uses for k when config.json does not set
// it, when the defaults name one.
func defaultValue(k keyPath) ([]byte, bool) {
	d, err := json.Marshal(config.Default())
	if err != nil {
		return nil, false
	}
	loc, err := locate(d, k)
	if err != nil || !loc.found {
		return nil, false
	}
	return compactJSON(d[loc.start:loc.end]), true
}

func compactJSON(b []byte) []byte {
	var out bytes.Buffer
	if json.Compact(&out, b) != nil {
		return b
	}
	return out.Bytes()
}

func runSeason(g *globals, mode string) error {
	path, _, raw, err := g.configBytes()
	if err != nil {
		return err
	}
	// The mode must be one the file defines: a typo would otherwise be
	// refused only as "not defined", or pass unnoticed while disabled.
	var defined []string
	if loc, err := locate(raw, keyPath{tokens: []string{"season_modes", "modes"}}); err == nil && loc.found && raw[loc.start] == '{' {
		for _, m := range objectMembers(raw, loc.start) {
			defined = append(defined, m.key)
		}
	}
	// ooda always defines "default" (no changes), whether the file lists it or not.
	if !slices.Contains(defined, "default") {
		defined = append(defined, "default")
	}
	if !slices.Contains(defined, mode) {
		msg := fmt.Sprintf("%s: /season_modes/modes: no mode %q is defined", path, safetext.Text(mode))
		msg += fmt.Sprintf(" (defined: %s)", safetext.Text(strings.Join(defined, ", ")))
		if s := config.Suggest(mode, defined); s != "" {
			msg += fmt.Sprintf("; did you mean %q?", safetext.Text(s))
		} else {
			msg += "; add it to season_modes.modes first (docs/config.md#season_modes)"
		}
		return usageError(errors.New(msg))
	}
	edits := []configEdit{{key: "season_modes.current_mode", value: marshalNoHTML(mode)}}
	loc, _ := locate(raw, keyPath{tokens: []string{"season_modes", "enabled"}})
	if !loc.found || string(raw[loc.start:loc.end]) != "true" {
		edits = append(edits, configEdit{key: "season_modes.enabled", value: []byte("true")})
	}
	return runConfigEdit(g, edits, nil)
}

// change is one edit as applied: old is nil when the key was not set.
type change struct {
	Key string          `json:"key"`
	Old json.RawMessage `json:"old,omitempty"`
	New json.RawMessage `json:"new"`
}

// runConfigEdit applies edits to config.json, validates the result and
// writes it atomically; after, when set, is called with the new
// configuration once it is written.
func runConfigEdit(g *globals, edits []configEdit, after func(*config.Config)) error {
	path, root, raw, err := g.configBytes()
	if err != nil {
		return err
	}
	out := raw
	var changes []change
	var pointers []string
	for _, e := range edits {
		k, err := parseKey(e.key)
		if err != nil {
			return err
		}
		next, old, err := setValue(out, k, e.value)
		if err != nil {
			return usageError(fmt.Errorf("%s: %w", path, err))
		}
		if old != nil && bytes.Equal(compactJSON(old), e.value) {
			continue
		}
		out = next
		c := change{Key: k.text, New: e.value}
		if old != nil {
			c.Old = compactJSON(old)
		}
		changes = append(changes, c)
		pointers = append(pointers, config.Pointer(k.tokens...))
	}
	if len(changes) == 0 {
		if err := reportChanges(g, path, nil); err != nil {
			return err
		}
		if cfg, perr := config.ParseProject(path, raw, root); perr == nil && after != nil {
			after(cfg)
		}
		return nil
	}
	cfg, err := config.ParseProject(path, out, root)
	if err != nil {
		what := "the change"
		if len(changes) == 1 {
			what = "setting " + safetext.Text(shortKey(changes[0].Key))
		}
		if _, oldErr := config.ParseProject(path, raw, root); oldErr != nil {
			fmt.Fprintf(g.stderr, "ooda: %s left unchanged: it is not a valid configuration, and %s does not make it one; fix the problems below (ooda config validate)\n", path, what)
		} else {
			fmt.Fprintf(g.stderr, "ooda: %s left unchanged: %s would make it invalid:\n", path, what)
		}
		return err
	}
	// A key ooda does not know would be written and then ignored: a
	// misspelling the user believes took effect.
	for _, w := range cfg.Warnings {
		for _, p := range pointers {
			if w.Path == p || strings.HasPrefix(w.Path, p+"/") {
				return usageError(fmt.Errorf("%s not written: %s: %s (ooda would ignore this key)", path, safetext.Text(w.Path), safetext.Text(w.Reason)))
			}
		}
	}
	if err := writeFileAtomic(path, root, out); err != nil {
		return fmt.Errorf("%s: %w (the file is unchanged)", path, err)
	}
	for _, w := range cfg.Warnings {
		fmt.Fprintf(g.stderr, "[WARN] %s\n", safetext.Text(w.String()))
	}
	if err := reportChanges(g, path, changes); err != nil {
		return err
	}
	if after != nil {
		after(cfg)
	}
	return nil
}

// reportChanges prints what was written: "KEY: OLD → NEW", one line each,
// or with --json {"file", "changed", "changes": [{"key", "old", "new"}]}
// ("old" absent when the key was not set).
func reportChanges(g *globals, path string, changes []change) error {
	if g.json {
		if changes == nil {
			changes = []change{}
		}
		return g.printJSON(struct {
			File    string   `json:"file"`
			Changed bool     `json:"changed"`
			Changes []change `json:"changes"`
		}{path, len(changes) > 0, changes})
	}
	if len(changes) == 0 {
		fmt.Fprintf(g.stdout, "%s: already set; nothing written\n", path)
		return nil
	}
	fmt.Fprintf(g.stdout, "Updated %s:\n", path)
	for _, c := range changes {
		old := "(not set)"
		if c.Old != nil {
			old = string(c.Old)
		}
		fmt.Fprintf(g.stdout, "  %s: %s → %s\n", safetext.Text(c.Key), safetext.Text(old), safetext.Text(string(c.New)))
	}
	return nil
}

// writeFileAtomic replaces path with data so that a reader (a cycle
// starting now) sees the old file or the new one, never a part: a
// temporary file in the same directory, synced, renamed over it, and the
// directory synced. A symlinked config.json is written through: its
// target is replaced, the link kept — unless the link, inside the project
// root, leads out of it: a link a merged change may have planted would
// make ooda rewrite any JSON file it points to. The file's permissions
// are kept.
func writeFileAtomic(path, root string, data []byte) (err error) {
	if real, rerr := filepath.EvalSymlinks(path); rerr == nil {
		if root != "" && inside(path, root) {
			realRoot, rerr := filepath.EvalSymlinks(root)
			if rerr != nil || !inside(real, realRoot) {
				return usageError(fmt.Errorf("not written: it is a symlink to %s, outside the project; replace the link with the file to change it here", safetext.Text(real)))
			}
		}
		path = real
	}
	perm := fs.FileMode(0o644)
	if fi, serr := os.Stat(path); serr == nil {
		perm = fi.Mode().Perm()
	}
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(tmp)
		}
	}()
	if _, err = f.Write(data); err != nil {
		return err
	}
	if err = f.Chmod(perm); err != nil {
		return err
	}
	if err = f.Sync(); err != nil {
		return err
	}
	if err = f.Close(); err != nil {
		return err
	}
	if err = os.Rename(tmp, path); err != nil {
		return err
	}
	// The rename is durable once the directory is; a platform that cannot
	// sync a directory has written the file all the same.
	if d, derr := os.Open(dir); derr == nil {
		_ = d.Sync()
		d.Close()
	}
	return nil
}

// --- A byte-level view of a valid JSON document ---

// member is one member of an object: offsets into the document.
type member struct {
	key              string
	wsStart          int // just after the "{" or "," before the key
	keyStart, keyEnd int
	valStart, valEnd int
}

func skipWS(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// stringEnd returns the offset after the string starting at b[i] == '"'.
func stringEnd(b []byte, i int) int {
	for i++; i < len(b); i++ {
		switch b[i] {
		case '\\':
			i++
		case '"':
			return i + 1
		}
	}
	return len(b)
}

// valueEnd returns the offset after the value starting at b[i]. It is
// iterative: the depth of a value is bounded only by the file's size.
func valueEnd(b []byte, i int) int {
	switch b[i] {
	case '"':
		return stringEnd(b, i)
	case '{', '[':
		depth := 0
		for i < len(b) {
			switch b[i] {
			case '"':
				i = stringEnd(b, i)
				continue
			case '{', '[':
				depth++
			case '}', ']':
				if depth--; depth == 0 {
					return i + 1
				}
			}
			i++
		}
		return len(b)
	}
	for i < len(b) && !strings.ContainsRune(",}] \t\r\n", rune(b[i])) {
		i++
	}
	return i
}

// objectMembers lists the members of the object whose "{" is at open.
func objectMembers(b []byte, open int) []member {
	var ms []member
	i := skipWS(b, open+1)
	ws := open + 1
	for i < len(b) && b[i] == '"' {
		m := member{wsStart: ws, keyStart: i, keyEnd: stringEnd(b, i)}
		_ = json.Unmarshal(b[m.keyStart:m.keyEnd], &m.key)
		i = skipWS(b, m.keyEnd)
		if i >= len(b) || b[i] != ':' {
			break
		}
		m.valStart = skipWS(b, i+1)
		m.valEnd = valueEnd(b, m.valStart)
		ms = append(ms, m)
		i = skipWS(b, m.valEnd)
		if i >= len(b) || b[i] != ',' {
			break
		}
		ws = i + 1
		i = skipWS(b, i+1)
	}
	return ms
}

// arrayElements returns the [start, end) offsets of each element of the
// array whose "[" is at open.
func arrayElements(b []byte, open int) [][2]int {
	var es [][2]int
	i := skipWS(b, open+1)
	for i < len(b) && b[i] != ']' {
		e := valueEnd(b, i)
		es = append(es, [2]int{i, e})
		i = skipWS(b, e)
		if i >= len(b) || b[i] != ',' {
			break
		}
		i = skipWS(b, i+1)
	}
	return es
}

// location is where a key path leads in a document: the value's offsets
// when found; otherwise the "{" of the deepest object on the path that
// exists, and how many tokens lead to it.
type location struct {
	found      bool
	start, end int
	open       int
	depth      int
}

func jsonKind(c byte) string {
	switch c {
	case '{':
		return "an object"
	case '[':
		return "an array"
	case '"':
		return "a string"
	case 't', 'f':
		return "a boolean"
	case 'n':
		return "null"
	}
	return "a number"
}

// locate follows k through the document b (valid JSON whose top level is
// an object). Of duplicate keys the last is taken, as JSON readers do;
// validation refuses a file that has any.
func locate(b []byte, k keyPath) (location, error) {
	start := skipWS(b, 0)
	end := valueEnd(b, start)
	for n, tok := range k.tokens {
		switch b[start] {
		case '{':
			ms := objectMembers(b, start)
			found := -1
			for j := len(ms) - 1; j >= 0; j-- {
				if ms[j].key == tok {
					found = j
					break
				}
			}
			if found < 0 {
				return location{open: start, depth: n}, nil
			}
			start, end = ms[found].valStart, ms[found].valEnd
		case '[':
			es := arrayElements(b, start)
			idx, err := strconv.Atoi(tok)
			if err != nil || idx < 0 || strconv.Itoa(idx) != tok {
				return location{}, fmt.Errorf("%s is an array: %q is not an index (0, 1, …)", safetext.Text(shortKey(k.show(n))), safetext.Text(shortKey(tok)))
			}
			if idx >= len(es) {
				return location{}, fmt.Errorf("%s is an array of %d elements: there is no element %d", safetext.Text(shortKey(k.show(n))), len(es), idx)
			}
			start, end = es[idx][0], es[idx][1]
		default:
			return location{}, fmt.Errorf("%s is %s, not an object: it has no key %q", safetext.Text(shortKey(k.show(n))), jsonKind(b[start]), safetext.Text(shortKey(tok)))
		}
	}
	return location{found: true, start: start, end: end}, nil
}

// setValue returns b with the value at k replaced by value (compact JSON),
// or inserted with the objects missing on the way, and the old value's
// text (nil when k was not set). Only that text changes; what is inserted
// follows the file's own layout: its newline, its indentation unit, the
// indentation and key separator of the neighbouring member.
func setValue(b []byte, k keyPath, value []byte) ([]byte, []byte, error) {
	loc, err := locate(b, k)
	if err != nil {
		return nil, nil, err
	}
	st := layoutOf(b)
	if loc.found {
		v := st.format(value, lineIndent(b, loc.start))
		return splice(b, loc.start, loc.end, v), b[loc.start:loc.end], nil
	}
	// The rest of the path becomes nested objects around value.
	rest := k.tokens[loc.depth:]
	nested := value
	for i := len(rest) - 1; i >= 1; i-- {
		nested = slices.Concat([]byte("{"), marshalNoHTML(rest[i]), []byte(":"), nested, []byte("}"))
	}
	key := marshalNoHTML(rest[0])
	ms := objectMembers(b, loc.open)
	if len(ms) > 0 {
		last := ms[len(ms)-1]
		ws := string(b[last.wsStart:last.keyStart])
		ind := ws
		if i := strings.LastIndexAny(ws, "\n"); i >= 0 {
			ind = ws[i+1:]
		} else {
			ind = lineIndent(b, last.keyStart)
		}
		ins := slices.Concat([]byte(","+ws), key, b[last.keyEnd:last.valStart], st.format(nested, ind))
		return splice(b, last.valEnd, last.valEnd, ins), nil, nil
	}
	closing := valueEnd(b, loc.open) - 1
	if !st.multiline {
		return splice(b, loc.open+1, closing, slices.Concat(key, []byte(st.sep), st.format(nested, ""))), nil, nil
	}
	base := lineIndent(b, loc.open)
	inner := base + st.unit
	ins := slices.Concat([]byte(st.nl+inner), key, []byte(st.sep), st.format(nested, inner), []byte(st.nl+base))
	return splice(b, loc.open+1, closing, ins), nil, nil
}

func splice(b []byte, start, end int, with []byte) []byte {
	return slices.Concat(b[:start], with, b[end:])
}

// layout is how a document is written.
type layout struct {
	multiline bool
	nl        string // "\n" or "\r\n"
	unit      string // one level of indentation
	sep       string // between a key and its value
}

func layoutOf(b []byte) layout {
	l := layout{nl: "\n", unit: "  ", sep: ": "}
	l.multiline = bytes.IndexByte(b, '\n') >= 0
	if bytes.Contains(b, []byte("\r\n")) {
		l.nl = "\r\n"
	}
	// The first indented line is one level in: its indentation is the unit.
	for _, line := range bytes.Split(b, []byte("\n")) {
		t := bytes.TrimLeft(line, " \t")
		if len(t) > 0 && len(t) < len(line) && t[0] != '\r' {
			l.unit = string(line[:len(line)-len(t)])
			break
		}
	}
	if !l.multiline && !bytes.Contains(b, []byte("\": ")) {
		l.sep = ":"
	}
	return l
}

// format lays value (compact JSON) out for a place whose line is indented
// by indent: an object or array over several lines in a multi-line
// document, else compact.
func (l layout) format(value []byte, indent string) []byte {
	if !l.multiline || len(value) == 0 || (value[0] != '{' && value[0] != '[') {
		return value
	}
	var out bytes.Buffer
	if json.Indent(&out, value, indent, l.unit) != nil {
		return value
	}
	if l.nl != "\n" {
		return bytes.ReplaceAll(out.Bytes(), []byte("\n"), []byte(l.nl))
	}
	return out.Bytes()
}

// lineIndent is the leading whitespace of the line holding offset i.
func lineIndent(b []byte, i int) string {
	s := bytes.LastIndexByte(b[:i], '\n') + 1
	e := s
	for e < i && (b[e] == ' ' || b[e] == '\t') {
		e++
	}
	return string(b[s:e])
}

// inside reports whether path is root or below it, both made absolute.
func inside(path, root string) bool {
	p, perr := filepath.Abs(path)
	r, rerr := filepath.Abs(root)
	if perr != nil || rerr != nil {
		return false
	}
	rel, err := filepath.Rel(r, p)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}
