package skills

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/ooda-loop/ooda/internal/safetext"
	"github.com/ooda-loop/ooda/internal/secret"
)

// Bounds on what one finding may carry into the state file and the queue.
const (
	lintMessageMax = 300  // runes of a message
	lintFileMax    = 1024 // bytes of a file name
)

// lintFinding is one problem a tool reported.
type lintFinding struct {
	ID      string `json:"id"`
	Tool    string `json:"tool"`
	File    string `json:"file"`
	Line    int    `json:"line,omitempty"`
	Col     int    `json:"col,omitempty"`
	Message string `json:"message"`
}

// lintID is a finding's identity across runs: its tool, file and message,
// not its line, so a finding that moves because lines were added above it
// is the same finding, not one fixed and one new.
func lintID(tool, file, message string) string {
	h := sha256.Sum256([]byte(tool + "\x00" + file + "\x00" + message))
	return hex.EncodeToString(h[:8])
}

// lintNew builds a finding from a tool's raw text: the file made relative
// to the project, the message cleaned, the id computed.
func lintNew(tool, projectDir, file string, line, col int, message string) lintFinding {
	f := lintFinding{Tool: tool, File: lintRelFile(projectDir, file), Line: line, Col: col, Message: lintCleanMessage(message)}
	f.ID = lintID(f.Tool, f.File, f.Message)
	return f
}

// lintStripANSI removes terminal escape sequences; any other control
// character is left for safetext to escape.
func lintStripANSI(b []byte) []byte {
	if bytes.IndexByte(b, 0x1b) < 0 {
		return b
	}
	return ansiRE.ReplaceAll(b, nil)
}

// lintCleanMessage is a message fit for a state file, a title and a
// terminal: masked, on one line, escaped, and cut.
func lintCleanMessage(s string) string {
	s = strings.Join(strings.Fields(secret.Redact(s)), " ")
	s = safetext.Escape(s)
	if utf8.RuneCountInString(s) > lintMessageMax {
		s = string([]rune(s)[:lintMessageMax-1]) + "…"
	}
	return s
}

// lintRelFile is a tool's file name as a slash-separated path relative to
// the project root when it is inside it; escaped, so a file name cannot
// carry a terminal sequence or a line break into a title.
func lintRelFile(projectDir, file string) string {
	file = strings.TrimSpace(file)
	if filepath.IsAbs(file) && projectDir != "" {
		for _, root := range lintRoots(projectDir) {
			if r, err := filepath.Rel(root, file); err == nil && r != ".." && !strings.HasPrefix(r, "../") {
				file = r
				break
			}
		}
	}
	if !filepath.IsAbs(file) {
		file = filepath.Clean(file)
	}
	file = safetext.Escape(filepath.ToSlash(file))
	if len(file) > lintFileMax {
		file = strings.ToValidUTF8(file[:lintFileMax], "") + "…"
	}
	return file
}

// lintRoots is the project root as given and as resolved: a tool may
// print either (/tmp is a symlink on some systems).
func lintRoots(projectDir string) []string {
	roots := []string{projectDir}
	if real, err := filepath.EvalSymlinks(projectDir); err == nil && real != projectDir {
		roots = append(roots, real)
	}
	return roots
}

// lintLineRE is the "file:line:col: message" line every supported
// line-oriented tool prints (go vet, ruff, flake8, clippy's short format,
// rubocop's emacs format); the column is optional. go vet prefixes a type
// error with "vet: ".
var lintLineRE = lazyRegexp(`^(?:vet: )?([^:\s][^:]*?):(\d+):(?:(\d+):)?\s*(.+)$`)

// lintLines splits output into lines, the escape sequences removed.
func lintLines(out []byte) []string {
	out = lintStripANSI(out)
	lines := strings.Split(strings.ReplaceAll(string(out), "\r\n", "\n"), "\n")
	return lines
}

// lintParseLines parses "file:line:col: message" lines; other lines
// (package headers, summaries, hints) are not findings.
func lintParseLines(tool string) func([]byte, string) []lintFinding {
	return func(out []byte, projectDir string) []lintFinding {
		var fs []lintFinding
		for _, l := range lintLines(out) {
			m := lintLineRE.FindStringSubmatch(strings.TrimRight(l, " \t"))
			if m == nil {
				continue
			}
			line, err := strconv.Atoi(m[2])
			if err != nil {
				continue
			}
			col, _ := strconv.Atoi(m[3])
			fs = append(fs, lintNew(tool, projectDir, m[1], line, col, m[4]))
		}
		return fs
	}
}

// lintParseGofmt parses `gofmt -l`: each line a file that is not
// formatted, or "file:line:col: message" for one gofmt cannot parse. A
// file name may itself hold a line break, so a line naming no file is
// joined with the lines after it until they name one together. gofmt
// never colors its output, so nothing is stripped: an escape sequence in
// a line is part of a file's name.
func lintParseGofmt(out []byte, projectDir string) []lintFinding {
	var fs []lintFinding
	exists := func(name string) bool {
		_, err := os.Lstat(filepath.Join(projectDir, name))
		return err == nil
	}
	const notFormatted = "not formatted (gofmt -w fixes it)"
	var pending []string
	for _, l := range strings.Split(string(out), "\n") {
		if len(pending) == 0 {
			if m := lintLineRE.FindStringSubmatch(l); m != nil && !exists(l) {
				if line, err := strconv.Atoi(m[2]); err == nil {
					col, _ := strconv.Atoi(m[3])
					fs = append(fs, lintNew("gofmt", projectDir, m[1], line, col, m[4]))
					continue
				}
			}
		}
		pending = append(pending, l)
		found := false
		for k := range pending {
			name := strings.Join(pending[k:], "\n")
			if strings.HasSuffix(name, ".go") && exists(name) {
				fs = append(fs, lintNew("gofmt", projectDir, name, 0, 0, notFormatted))
				found = true
				break
			}
		}
		if found || len(pending) >= 8 {
			pending = pending[:0]
		}
	}
	return fs
}

// lintESLintFile is one file of ESLint's JSON formatter.
type lintESLintFile struct {
	FilePath string `json:"filePath"`
	Messages []struct {
		RuleID   *string `json:"ruleId"`
		Severity int     `json:"severity"`
		Message  string  `json:"message"`
		Line     int     `json:"line"`
		Column   int     `json:"column"`
	} `json:"messages"`
}

// lintParseESLint parses ESLint's JSON formatter (the one formatter every
// ESLint version has), file by file, so output cut at the read limit
// still yields the files before the cut. Anything ESLint prints before the
// array (a deprecation warning on stderr) is skipped.
func lintParseESLint(out []byte, projectDir string) []lintFinding {
	out = lintStripANSI(out)
	start := -1
	for i := 0; i < len(out); {
		if out[i] == '[' {
			start = i
			break
		}
		nl := bytes.IndexByte(out[i:], '\n')
		if nl < 0 {
			break
		}
		i += nl + 1
	}
	if start < 0 {
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(out[start:]))
	if t, err := dec.Token(); err != nil || t != json.Delim('[') {
		return nil
	}
	var fs []lintFinding
	for dec.More() {
		var f lintESLintFile
		if dec.Decode(&f) != nil {
			break
		}
		for _, m := range f.Messages {
			msg := m.Message
			if m.RuleID != nil && *m.RuleID != "" {
				msg += " (" + *m.RuleID + ")"
			}
			sev := "warning"
			if m.Severity >= 2 {
				sev = "error"
			}
			fs = append(fs, lintNew("eslint", projectDir, f.FilePath, m.Line, m.Column, sev+": "+msg))
		}
	}
	return fs
}
