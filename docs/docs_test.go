// Package docs_test runs the examples of README.md and docs/*.md and fails
// when what a page shows is no longer what the program prints.
//
// An example takes part when an HTML comment marks it (docs/CONTRIBUTING.md,
// "Runnable examples"):
//
//	<!-- doctest: NAME [cwd=/srv/app] [paths=/tmp/d1,...] [setup=FILE] [vary=time,go] [file=PATH] [needs=jq] -->
//	```
//	$ ooda init
//	Created /srv/app/config.json (level 2) and /srv/app/agent/state/evolve.
//	…
//	```
//
// Every marked block of one page with the same NAME belongs to one session:
// one shell, one temporary root, run in page order, so a later block sees
// the files, the working directory and the shell functions of an earlier
// one. A line starting with "$ " is a command; the lines after it, up to the
// next command, are its documented output (stdout and stderr as a terminal
// shows them, interleaved), compared line by line.
package docs_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/txtar"
)

// repoRoot is the repository root, seen from this package's directory.
const repoRoot = ".."

// binDir holds the `ooda` built for the examples (TestMain).
var binDir string

// TestMain builds `ooda` once, exactly as README.md says to (`go build -o
// ooda ./cmd/ooda`), into a temporary directory that the examples find
// first on their PATH.
func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "ooda-doctest-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	binDir = dir
	// The examples' ooda would remember valid configurations in the
	// user's cache directory (docs/config.md); tests leave it alone.
	os.Setenv("OODA_NO_CACHE", "1")
	readGoEnv()
	build := exec.Command("go", "build", "-o", filepath.Join(dir, "ooda"), "./cmd/ooda")
	build.Dir = repoRoot
	build.Env = append(os.Environ(), "GOPROXY=off", "GOFLAGS=-buildvcs=false")
	if out, err := build.CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "go build -o ooda ./cmd/ooda: %v\n%s", err, out)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// pages are the Markdown files whose marked examples run.
func pages(t *testing.T) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(repoRoot, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	return append([]string{filepath.Join(repoRoot, "README.md")}, files...)
}

// TestDocExamples runs every marked example of every page.
func TestDocExamples(t *testing.T) {
	total := 0
	for _, page := range pages(t) {
		sessions, err := parsePage(page)
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range sessions {
			total++
			t.Run(s.name, func(t *testing.T) {
				t.Parallel()
				runSession(t, s)
			})
		}
	}
	if total == 0 {
		t.Fatal("no marked examples found: the marker is <!-- doctest: NAME ... --> before a fenced block")
	}
}

// docPath is how a page is named in failures: relative to the repository.
func docPath(page string) string {
	rel, err := filepath.Rel(repoRoot, page)
	if err != nil {
		return page
	}
	return filepath.ToSlash(rel)
}

// step is one thing a session does, in page order.
type step struct {
	line int // the page's line of the command (or the block)

	// A command and its documented output.
	cmd  string
	want []string
	// wantLines[i] is the page's line of want[i].
	wantLines []int

	// Or a file written from a block (file=PATH).
	file    string
	content string
}

// session is every marked block of one page sharing a NAME.
type session struct {
	page  string // as named in failures
	name  string // page/NAME
	line  int    // the first marker's line
	cwd   string // the documented working directory ("repo": the repository)
	paths []string
	setup string
	vary  map[string]bool
	needs []string // programs the session needs besides ooda, sh and git
	steps []step
}

var markerRE = regexp.MustCompile(`^<!--\s*doctest:\s*(.*?)\s*-->\s*$`)

// parsePage reads a page's marked blocks into sessions, in order of first
// appearance.
func parsePage(page string) ([]*session, error) {
	b, err := os.ReadFile(page)
	if err != nil {
		return nil, err
	}
	name := docPath(page)
	lines := strings.Split(string(b), "\n")
	var order []*session
	byName := map[string]*session{}
	fence := "" // the fence of the block being skipped: a marker shown inside a block is an example of one
	for i := 0; i < len(lines); i++ {
		tl := strings.TrimSpace(lines[i])
		if ticks := tl[:len(tl)-len(strings.TrimLeft(tl, "`"))]; len(ticks) >= 3 {
			switch {
			case fence == "":
				fence = ticks
			case ticks == fence && tl == ticks:
				fence = ""
			}
			continue
		}
		if fence != "" {
			continue
		}
		m := markerRE.FindStringSubmatch(tl)
		if m == nil {
			continue
		}
		markerLine := i + 1
		fields := strings.Fields(m[1])
		if len(fields) == 0 {
			return nil, fmt.Errorf("%s:%d: doctest marker without a session name", name, markerLine)
		}
		s := byName[fields[0]]
		if s == nil {
			s = &session{page: name, name: strings.TrimSuffix(filepath.Base(page), ".md") + "/" + fields[0], line: markerLine, vary: map[string]bool{}}
			byName[fields[0]] = s
			order = append(order, s)
		}
		file := ""
		for _, f := range fields[1:] {
			k, v, ok := strings.Cut(f, "=")
			if !ok {
				return nil, fmt.Errorf("%s:%d: doctest marker: %q is not key=value", name, markerLine, f)
			}
			switch k {
			case "cwd":
				s.cwd = v
			case "paths":
				s.paths = append(s.paths, strings.Split(v, ",")...)
			case "setup":
				s.setup = v
			case "vary":
				for _, n := range strings.Split(v, ",") {
					if _, known := varying[n]; !known {
						return nil, fmt.Errorf("%s:%d: doctest marker: vary=%s: unknown (known: %s)", name, markerLine, n, strings.Join(varyNames(), ", "))
					}
					s.vary[n] = true
				}
			case "file":
				file = v
			case "needs":
				s.needs = append(s.needs, strings.Split(v, ",")...)
			default:
				return nil, fmt.Errorf("%s:%d: doctest marker: unknown key %q (cwd, paths, setup, vary, file, needs)", name, markerLine, k)
			}
		}
		// The fenced block follows, after blank lines at most.
		j := i + 1
		for j < len(lines) && strings.TrimSpace(lines[j]) == "" {
			j++
		}
		if j >= len(lines) || !strings.HasPrefix(strings.TrimSpace(lines[j]), "```") {
			return nil, fmt.Errorf("%s:%d: doctest marker is not followed by a fenced code block", name, markerLine)
		}
		indent := lines[j][:len(lines[j])-len(strings.TrimLeft(lines[j], " "))]
		start := j + 1
		end := start
		for end < len(lines) && strings.TrimSpace(lines[end]) != "```" {
			end++
		}
		if end >= len(lines) {
			return nil, fmt.Errorf("%s:%d: the block after the doctest marker is not closed", name, markerLine)
		}
		body := make([]string, 0, end-start)
		for _, l := range lines[start:end] {
			body = append(body, strings.TrimPrefix(l, indent))
		}
		if file != "" {
			s.steps = append(s.steps, step{line: start, file: file, content: strings.Join(body, "\n") + "\n"})
		} else {
			steps, err := parseCommands(name, start+1, body)
			if err != nil {
				return nil, err
			}
			s.steps = append(s.steps, steps...)
		}
		i = end
	}
	return order, nil
}

// parseCommands splits a block into commands ("$ ", continued by a trailing
// backslash) and the output lines documented after each.
func parseCommands(page string, firstLine int, body []string) ([]step, error) {
	var steps []step
	for k := 0; k < len(body); k++ {
		l := body[k]
		if strings.HasPrefix(l, "$ ") {
			st := step{line: firstLine + k, cmd: strings.TrimPrefix(l, "$ ")}
			for strings.HasSuffix(st.cmd, `\`) && k+1 < len(body) {
				k++
				st.cmd += "\n" + body[k]
			}
			steps = append(steps, st)
			continue
		}
		if len(steps) == 0 {
			if strings.TrimSpace(l) == "" {
				continue
			}
			return nil, fmt.Errorf("%s:%d: a marked block must start with a command (\"$ \"), got %q", page, firstLine+k, l)
		}
		last := &steps[len(steps)-1]
		last.want = append(last.want, l)
		last.wantLines = append(last.wantLines, firstLine+k)
	}
	return steps, nil
}

// varying are the named normalisations a marker may ask for with vary=:
// what differs between runs or machines, replaced in both the documented
// and the actual output by a placeholder.
var varying = map[string][]replacement{
	// Instants of the real clock (a command without --now).
	"time": {
		{regexp.MustCompile(`\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)`), "<time>"},
		{regexp.MustCompile(`\d{4}-\d\d-\d\d \d\d:\d\d( UTC)?`), "<time>"},
	},
	// The Go toolchain that built the binary.
	"go": {
		{regexp.MustCompile(`go1\.\d+(\.\d+)?((rc|beta)\d+)?`), "go<version>"},
		{regexp.MustCompile(`\b(linux|darwin|windows|freebsd)/(amd64|arm64|386|arm)\b`), "<platform>"},
	},
}

// always are the normalisations applied to every example: commit ids and
// elapsed times are never the same twice.
var always = []replacement{
	{regexp.MustCompile(`\b[0-9a-f]{7,40}\b`), "<sha>"},
	{regexp.MustCompile(`(?i)(elapsed[*"_a-z]*\s*:\s*)[0-9][0-9.]*(ns|µs|us|ms|s|m|h)?`), "${1}<elapsed>"},
}

type replacement struct {
	re   *regexp.Regexp
	with string
}

func varyNames() []string {
	var n []string
	for k := range varying {
		n = append(n, k)
	}
	sort.Strings(n)
	return n
}

func (s *session) normalize(line string) string {
	for _, r := range always {
		line = r.re.ReplaceAllString(line, r.with)
	}
	for n := range s.vary {
		for _, r := range varying[n] {
			line = r.re.ReplaceAllString(line, r.with)
		}
	}
	return strings.TrimRight(line, " \t")
}

// stepMark separates the output of one command from the next in the
// session's combined output.
const stepMark = "\x1eDOCTEST-STEP "

// runSession runs a session's commands in one shell and compares each
// command's output with the page.
func runSession(t *testing.T, s *session) {
	for _, prog := range s.needs {
		if _, err := exec.LookPath(prog); err != nil {
			t.Skipf("%s:%d: needs %s, which is not installed", s.page, s.line, prog)
		}
	}
	root := t.TempDir()
	if os.Getenv("DOCTEST_KEEP") != "" {
		// To look at what an example left behind: its root is kept.
		dir, err := os.MkdirTemp("", "ooda-doctest-")
		if err != nil {
			t.Fatal(err)
		}
		root = dir
		t.Logf("DOCTEST_KEEP: %s is kept in %s", s.name, root)
	}
	if r, err := filepath.EvalSymlinks(root); err == nil {
		root = r
	}
	// Documented absolute paths live under the temporary root:
	// /srv/app becomes ROOT/srv/app in commands, and back in the output.
	mapped := append([]string(nil), s.paths...)
	cwd := filepath.Join(root, "home")
	switch {
	case s.cwd == "repo":
		abs, err := filepath.Abs(repoRoot)
		if err != nil {
			t.Fatal(err)
		}
		cwd = abs
	case s.cwd != "":
		mapped = append(mapped, s.cwd)
		cwd = root + s.cwd
	}
	for _, d := range []string{cwd, filepath.Join(root, "home"), filepath.Join(root, "tmp")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	// Longest first, so /srv/app/sub is not mapped as /srv/app + /sub twice.
	sort.Slice(mapped, func(i, j int) bool { return len(mapped[i]) > len(mapped[j]) })
	toReal := func(cmd string) string {
		for _, p := range mapped {
			cmd = regexp.MustCompile(`(^|[\s='"(])`+regexp.QuoteMeta(p)).ReplaceAllString(cmd, "${1}"+root+p)
		}
		return cmd
	}

	var script strings.Builder
	script.WriteString("__doctest_rc=0\n")
	if s.setup != "" {
		ar, err := txtar.ParseFile(filepath.Join("testdata", s.setup))
		if err != nil {
			t.Fatalf("%s:%d: setup=%s: %v", s.page, s.line, s.setup, err)
		}
		for _, f := range ar.Files {
			writeFile(t, filepath.Join(cwd, f.Name), string(f.Data))
			if bytes.HasPrefix(f.Data, []byte("#!")) {
				if err := os.Chmod(filepath.Join(cwd, f.Name), 0o755); err != nil {
					t.Fatal(err)
				}
			}
		}
		script.WriteString(toReal(string(ar.Comment)) + "\n")
		script.WriteString(fmt.Sprintf("printf '%%s\\n' '%s-1'\n", stepMark))
	}
	staged := filepath.Join(root, "doctest-files")
	for i, st := range s.steps {
		if st.file != "" {
			src := filepath.Join(staged, strconv.Itoa(i))
			writeFile(t, src, st.content)
			mode := "644"
			if strings.HasPrefix(st.content, "#!") {
				mode = "755"
			}
			fmt.Fprintf(&script, "mkdir -p \"$(dirname '%s')\" && cp '%s' '%s' && chmod %s '%s'\n", st.file, src, st.file, mode, st.file)
			continue
		}
		fmt.Fprintf(&script, "printf '%%s\\n' '%s%d'\n(exit $__doctest_rc)\n%s\n__doctest_rc=$?\n", stepMark, i, toReal(st.cmd))
	}

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	sh := exec.CommandContext(ctx, "/bin/sh", "-c", script.String())
	sh.Dir = cwd
	sh.Env = sessionEnv(root)
	sh.Stdin = nil
	var out bytes.Buffer
	sh.Stdout = &out
	sh.Stderr = &out
	start := time.Now()
	err := sh.Run()
	if ctx.Err() != nil {
		t.Fatalf("%s:%d: the session did not finish within 5 minutes; output so far:\n%s", s.page, s.line, out.String())
	}
	_ = err // the last command's status is the page's business (echo $?)
	t.Logf("%s:%d: %d step(s) in %v", s.page, s.line, len(s.steps), time.Since(start).Round(time.Millisecond))

	got := splitOutput(out.String())
	if o, ok := got[-1]; ok && sh.ProcessState != nil && strings.TrimSpace(o) != "" {
		t.Logf("setup output:\n%s", o)
	}
	for i, st := range s.steps {
		if st.file != "" {
			continue
		}
		actual := strings.ReplaceAll(got[i], root, "")
		s.compare(t, st, actual)
	}
}

// splitOutput cuts the session's output at the step marks.
func splitOutput(out string) map[int]string {
	res := map[int]string{}
	idx := -2
	var cur strings.Builder
	flush := func() {
		if idx != -2 {
			res[idx] = cur.String()
		}
		cur.Reset()
	}
	for len(out) > 0 {
		k := strings.Index(out, stepMark)
		if k < 0 {
			cur.WriteString(out)
			break
		}
		cur.WriteString(out[:k])
		flush()
		rest := out[k+len(stepMark):]
		nl := strings.IndexByte(rest, '\n')
		if nl < 0 {
			nl = len(rest)
		}
		n, err := strconv.Atoi(rest[:nl])
		if err != nil {
			n = -3
		}
		idx = n
		if nl < len(rest) {
			nl++
		}
		out = rest[nl:]
	}
	flush()
	return res
}

// compare matches a command's actual output against its documented lines.
// A documented line "…" (or "...") matches any number of lines; "…"
// inside a line matches any text.
func (s *session) compare(t *testing.T, st step, actual string) {
	t.Helper()
	got := strings.Split(strings.TrimRight(actual, "\n"), "\n")
	if strings.TrimRight(actual, "\n") == "" {
		got = nil
	}
	want := append([]string(nil), st.want...)
	wantLines := append([]int(nil), st.wantLines...)
	for len(want) > 0 && strings.TrimSpace(want[len(want)-1]) == "" {
		want, wantLines = want[:len(want)-1], wantLines[:len(wantLines)-1]
	}
	pats := make([]*regexp.Regexp, len(want))
	for i, w := range want {
		w = s.normalize(w)
		if isEllipsis(w) {
			continue
		}
		var re strings.Builder
		re.WriteString("^")
		for k, part := range strings.Split(w, "…") {
			if k > 0 {
				re.WriteString(".*")
			}
			re.WriteString(regexp.QuoteMeta(part))
		}
		re.WriteString("$")
		pats[i] = regexp.MustCompile(re.String())
	}
	for i := range got {
		got[i] = s.normalize(got[i])
	}
	m := matcher{pats: pats, got: got, memo: map[[2]int]bool{}}
	if m.match(0, 0) {
		return
	}
	var b strings.Builder
	if m.bestW < len(want) {
		fmt.Fprintf(&b, "%s:%d: documented output of `%s` differs from the program's:\n  documented: %s\n",
			s.page, wantLines[m.bestW], firstLine(st.cmd), want[m.bestW])
		if m.bestG < len(got) {
			fmt.Fprintf(&b, "  program:    %s\n", got[m.bestG])
		} else {
			b.WriteString("  program:    (no more output)\n")
		}
	} else {
		fmt.Fprintf(&b, "%s:%d: `%s` printed more than documented, from: %s\n", s.page, st.line, firstLine(st.cmd), got[m.bestG])
	}
	b.WriteString("whole output of the program (normalized):\n")
	for _, g := range got {
		b.WriteString("  | " + g + "\n")
	}
	t.Error(b.String())
}

func firstLine(s string) string {
	l, _, _ := strings.Cut(s, "\n")
	return l
}

func isEllipsis(w string) bool {
	w = strings.TrimSpace(w)
	return w == "…" || w == "..."
}

// matcher matches output lines against documented lines with "…" lines
// matching any run of lines, remembering how far the best attempt got so
// that a failure can name the first documented line that does not hold.
type matcher struct {
	pats         []*regexp.Regexp // nil: an ellipsis line
	got          []string
	memo         map[[2]int]bool
	bestW, bestG int
}

func (m *matcher) match(w, g int) bool {
	key := [2]int{w, g}
	if v, ok := m.memo[key]; ok {
		return v
	}
	if w > m.bestW || (w == m.bestW && g > m.bestG) {
		m.bestW, m.bestG = w, g
	}
	var ok bool
	switch {
	case w == len(m.pats):
		ok = g == len(m.got)
	case m.pats[w] == nil:
		ok = m.match(w+1, g) || (g < len(m.got) && m.match(w, g+1))
	default:
		ok = g < len(m.got) && m.pats[w].MatchString(m.got[g]) && m.match(w+1, g+1)
	}
	m.memo[key] = ok
	return ok
}

// sessionEnv is the environment of an example: the built ooda first on
// PATH, a home and temporary directory inside the session's root, a fixed
// git identity, no network for go, and nothing of the developer's own
// configuration or credentials.
func sessionEnv(root string) []string {
	env := []string{
		"PATH=" + binDir + string(os.PathListSeparator) + os.Getenv("PATH"),
		"HOME=" + filepath.Join(root, "home"),
		"TMPDIR=" + filepath.Join(root, "tmp"),
		"TZ=UTC",
		"LC_ALL=C",
		"NO_COLOR=1",
		"GIT_CONFIG_NOSYSTEM=1",
		"GIT_AUTHOR_NAME=Dev",
		"GIT_AUTHOR_EMAIL=dev@example.com",
		"GIT_COMMITTER_NAME=Dev",
		"GIT_COMMITTER_EMAIL=dev@example.com",
		"GOPROXY=off",
		"GOFLAGS=",
		"GOTOOLCHAIN=local",
	}
	// go run needs the caches of the developer's go, not the session's
	// empty home.
	for k, v := range goEnvs {
		if v != "" {
			env = append(env, k+"="+v)
		}
	}
	if runtime.GOOS == "darwin" {
		env = append(env, "SHELL=/bin/sh")
	}
	return env
}

// goEnvs are the developer's go caches, read once in TestMain.
var goEnvs = map[string]string{}

func readGoEnv() {
	for _, k := range []string{"GOCACHE", "GOMODCACHE", "GOPATH", "GOROOT"} {
		if out, err := exec.Command("go", "env", k).Output(); err == nil {
			goEnvs[k] = strings.TrimSpace(string(out))
		}
	}
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}
