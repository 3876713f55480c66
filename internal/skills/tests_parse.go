package skills

import (
	"encoding/json"
	"maps"
	"slices"
	"strconv"
	"strings"
)

// testRun is what a test runner's output says: counts, the failing tests
// (with the file the runner names for each, where it names one) and the
// coverage it printed.
type testRun struct {
	// Runners are the runners whose output was recognized, in the order
	// they are tried (an output may hold several: `make test` running go
	// test and pytest).
	Runners []string
	Passed  int
	Failed  int
	Skipped int
	// counted is set when a runner printed totals (not only names).
	counted bool
	// packagesOK counts the packages go test passed: without -v it
	// prints no line for a passing test.
	packagesOK int
	Failures   []testFailure
	// Coverage is the percentage printed, nil when none was.
	Coverage *float64
}

// testFailure is one failing test. File is as the runner printed it
// (relative to the package for go test, absolute for a Python traceback);
// Pkg is the Go package it belongs to, to find that file.
type testFailure struct {
	Name string
	File string
	Pkg  string
}

func (r *testRun) addFailure(f testFailure) {
	for i, g := range r.Failures {
		if g.Name == f.Name {
			if r.Failures[i].File == "" {
				r.Failures[i].File = f.File
			}
			return
		}
	}
	r.Failures = append(r.Failures, f)
}

// ansiRE matches the terminal control sequences tools print for colour
// and cursor movement: CSI (ESC [ … final), OSC (ESC ] … BEL or ESC \) and
// the two-byte escapes. Every built-in strips them with it before it
// parses or keeps what a tool or a forge said.
var ansiRE = lazyRegexp(`\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[@-Z\\-_]`)

// cleanOutput strips control sequences and carriage-return redraws from a
// runner's output and splits it into lines: what a terminal would finally
// show, which is what the patterns below describe.
func cleanOutput(b []byte) []string {
	s := ansiRE.ReplaceAllString(string(b), "")
	s = strings.ReplaceAll(s, "\r\n", "\n")
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		if j := strings.LastIndexByte(l, '\r'); j >= 0 {
			if rest := l[j+1:]; rest != "" {
				l = rest
			} else {
				l = l[:j]
			}
		}
		lines[i] = l
	}
	return lines
}

// parseTestOutput reads the cleaned output of a test command. Every runner
// whose output is recognized contributes its counts and failures; the
// generic "N passed, N failed" line is read only when none is.
func parseTestOutput(lines []string) testRun {
	var r testRun
	goJSON := parseGoJSON(lines, &r)
	if !goJSON {
		parseGoPlain(lines, &r)
	}
	parseCargo(lines, &r)
	parsePytest(lines, &r)
	parseUnittest(lines, &r)
	parseJest(lines, &r)
	parseVitest(lines, &r)
	parseMocha(lines, &r)
	none := len(r.Runners) == 0
	if none {
		parseGeneric(lines, &r)
	}
	if r.Coverage == nil {
		r.Coverage = otherCoverage(lines, none)
	}
	return r
}

var (
	goFailRE     = lazyRegexp(`^(\s*)--- FAIL: (\S+)`)
	goPassRE     = lazyRegexp(`^\s*--- PASS: \S+`)
	goSkipRE     = lazyRegexp(`^\s*--- SKIP: \S+`)
	goRunRE      = lazyRegexp(`^=== (?:RUN|CONT|PAUSE|NAME)\s+(\S+)`)
	goOkRE       = lazyRegexp(`^ok\s+(\S+)\s+(?:\(cached\)|[0-9.]+s)(?:.*?\scoverage: ([0-9.]+)% of statements)?`)
	goPkgFailRE  = lazyRegexp(`^FAIL\s+(\S+)\s+(\[[a-z ]+ failed\]|\(cached\)|[0-9.]+s)`)
	goBareCovRE  = lazyRegexp(`^coverage: ([0-9.]+)% of statements`)
	goNoTestsRE  = lazyRegexp(`^\s+(\S+)\s+coverage: ([0-9.]+)% of statements\s*$`)
	goFileLineRE = lazyRegexp(`^\s+([\w.\-/]+\.go):\d+:`)
)

// parseGoPlain reads `go test` output (with or without -v and -cover).
// Without -v, go test prints no line for a passing test, so passed counts
// only what -v shows; the packages still give the coverage.
func parseGoPlain(lines []string, r *testRun) bool {
	seen := false
	var cov []float64
	pending := []int{} // failures of the package whose result line is next
	runFile := map[string]string{}
	current, lastFail := "", -1
	// A failing package prints its coverage on a line of its own before
	// its FAIL line (a passing one on its ok line as well).
	var bare *float64
	for _, l := range lines {
		if m := goBareCovRE.FindStringSubmatch(l); m != nil {
			if v, err := strconv.ParseFloat(m[1], 64); err == nil {
				bare = &v
			}
			continue
		}
		if m := goRunRE.FindStringSubmatch(l); m != nil {
			current, lastFail = m[1], -1
			continue
		}
		if m := goFailRE.FindStringSubmatch(l); m != nil {
			seen = true
			f := testFailure{Name: m[2], File: runFile[m[2]]}
			r.addFailure(f)
			lastFail = indexOf(r.Failures, m[2])
			pending = append(pending, lastFail)
			current = ""
			continue
		}
		if goPassRE.MatchString(l) {
			seen = true
			r.Passed++
			current, lastFail = "", -1
			continue
		}
		if goSkipRE.MatchString(l) {
			seen = true
			r.Skipped++
			current, lastFail = "", -1
			continue
		}
		if m := goFileLineRE.FindStringSubmatch(l); m != nil {
			if lastFail >= 0 && r.Failures[lastFail].File == "" {
				r.Failures[lastFail].File = m[1]
			} else if current != "" && runFile[current] == "" {
				runFile[current] = m[1]
			}
			continue
		}
		if m := goOkRE.FindStringSubmatch(l); m != nil {
			seen = true
			r.packagesOK++
			if v, err := strconv.ParseFloat(m[2], 64); err == nil {
				cov = append(cov, v)
			} else if bare != nil {
				cov = append(cov, *bare)
			}
			pending, lastFail, bare = pending[:0], -1, nil
			continue
		}
		if m := goPkgFailRE.FindStringSubmatch(l); m != nil {
			seen = true
			if len(pending) == 0 {
				// The package failed without a failing test: it did not
				// build, or it crashed outside a test (TestMain, init).
				name := m[1]
				if strings.HasPrefix(m[2], "[") {
					name += " " + m[2]
				}
				r.addFailure(testFailure{Name: name})
			}
			for _, i := range pending {
				r.Failures[i].Pkg = m[1]
			}
			if bare != nil {
				cov = append(cov, *bare)
			}
			pending, lastFail, bare = pending[:0], -1, nil
			continue
		}
		if m := goNoTestsRE.FindStringSubmatch(l); m != nil {
			seen = true
			if v, err := strconv.ParseFloat(m[2], 64); err == nil {
				cov = append(cov, v)
			}
			continue
		}
		if !strings.HasPrefix(l, " ") && !strings.HasPrefix(l, "\t") {
			lastFail = -1
		}
	}
	if !seen {
		return false
	}
	// go test is read first, so every failure so far is its own.
	dropGoParents(r)
	r.Failed += len(r.Failures)
	r.counted = true
	r.Runners = append(r.Runners, "go test")
	r.Coverage = mean(cov)
	return true
}

// dropGoParents removes a failing test whose subtest fails too: go test
// fails the parent because of the subtest, and one failure is one thing
// to fix. It returns how many it removed.
func dropGoParents(r *testRun) int {
	kept := r.Failures[:0]
	n := 0
	for _, f := range r.Failures {
		parent := slices.ContainsFunc(r.Failures, func(g testFailure) bool {
			return g.Pkg == f.Pkg && strings.HasPrefix(g.Name, f.Name+"/")
		})
		if parent {
			n++
			continue
		}
		kept = append(kept, f)
	}
	r.Failures = kept
	return n
}

func indexOf(fs []testFailure, name string) int {
	for i, f := range fs {
		if f.Name == name {
			return i
		}
	}
	return -1
}

// goEvent is one line of `go test -json` (test2json).
type goEvent struct {
	Action      string
	Package     string
	ImportPath  string
	Test        string
	Output      string
	FailedBuild string
}

// parseGoJSON reads `go test -json` output: one event per line, every
// other line (a build error printed on stderr) ignored.
func parseGoJSON(lines []string, r *testRun) bool {
	seen := false
	cov := map[string]float64{} // by package
	files := map[[2]string]string{}
	failedTests := map[string]bool{} // packages with a failing test
	type pkgFail struct{ pkg, build string }
	var pkgFails []pkgFail
	for _, l := range lines {
		l = strings.TrimSpace(l)
		if !strings.HasPrefix(l, "{") || !strings.Contains(l, `"Action"`) {
			continue
		}
		var e goEvent
		if json.Unmarshal([]byte(l), &e) != nil || e.Action == "" || (e.Package == "" && e.ImportPath == "") {
			continue
		}
		seen = true
		switch {
		case e.Action == "output" && e.Test != "":
			if m := goFileLineRE.FindStringSubmatch(strings.TrimRight(e.Output, "\n")); m != nil {
				k := [2]string{e.Package, e.Test}
				if files[k] == "" {
					files[k] = m[1]
				}
			}
		case e.Action == "output":
			out := strings.TrimRight(e.Output, "\n")
			val := ""
			if m := goOkRE.FindStringSubmatch(out); m != nil {
				val = m[2]
			} else if m := goBareCovRE.FindStringSubmatch(out); m != nil {
				val = m[1]
			} else if m := goNoTestsRE.FindStringSubmatch(out); m != nil {
				val = m[2]
			}
			if v, err := strconv.ParseFloat(val, 64); err == nil {
				cov[e.Package] = v
			}
		case e.Test != "" && e.Action == "pass":
			r.Passed++
		case e.Test != "" && e.Action == "skip":
			r.Skipped++
		case e.Test != "" && e.Action == "fail":
			r.Failed++
			failedTests[e.Package] = true
			r.addFailure(testFailure{Name: e.Test, File: files[[2]string{e.Package, e.Test}], Pkg: e.Package})
		case e.Test == "" && e.Action == "pass" && e.Package != "":
			r.packagesOK++
		case e.Test == "" && e.Action == "fail" && e.Package != "":
			pkgFails = append(pkgFails, pkgFail{e.Package, e.FailedBuild})
		}
	}
	if !seen {
		return false
	}
	for _, p := range pkgFails {
		if failedTests[p.pkg] {
			continue
		}
		name := p.pkg
		if p.build != "" {
			name += " [build failed]"
		}
		r.Failed++
		r.addFailure(testFailure{Name: name})
	}
	r.Failed -= dropGoParents(r)
	r.counted = true
	r.Runners = append(r.Runners, "go test -json")
	r.Coverage = mean(slices.Sorted(maps.Values(cov)))
	return true
}

var (
	cargoResultRE = lazyRegexp(`^test result: (?:ok|FAILED)\. (\d+) passed; (\d+) failed; (\d+) ignored;`)
	cargoFailRE   = lazyRegexp(`^test (\S+)(?: - should panic)? \.\.\. FAILED$`)
	cargoStdoutRE = lazyRegexp(`^---- (\S+) stdout ----$`)
	cargoPanicRE  = lazyRegexp(`panicked at (?:'.*', )?([\w.\-/]+\.rs):\d+:\d+`)
	cargoBuildRE  = lazyRegexp("^error(?:\\[E\\d+\\])?: could not compile `([^`]+)`")
	tarpaulinRE   = lazyRegexp(`^([0-9.]+)% coverage, \d+/\d+ lines covered`)
)

// parseCargo reads `cargo test`: a "test result" line per test binary, a
// line per failing test, and the panic location in its captured stdout.
func parseCargo(lines []string, r *testRun) bool {
	seen := false
	current := ""
	for _, l := range lines {
		if m := cargoResultRE.FindStringSubmatch(l); m != nil {
			seen = true
			r.Passed += atoi(m[1])
			r.Failed += atoi(m[2])
			r.Skipped += atoi(m[3])
			continue
		}
		if m := cargoFailRE.FindStringSubmatch(l); m != nil {
			seen = true
			r.addFailure(testFailure{Name: m[1]})
			continue
		}
		if m := cargoStdoutRE.FindStringSubmatch(l); m != nil {
			current = m[1]
			continue
		}
		if m := cargoPanicRE.FindStringSubmatch(l); m != nil && current != "" {
			if i := indexOf(r.Failures, current); i >= 0 && r.Failures[i].File == "" {
				r.Failures[i].File = m[1]
			} else if i < 0 {
				r.addFailure(testFailure{Name: current, File: m[1]})
			}
			continue
		}
		if m := cargoBuildRE.FindStringSubmatch(l); m != nil {
			seen = true
			r.Failed++
			r.addFailure(testFailure{Name: "could not compile " + m[1]})
			continue
		}
		if m := tarpaulinRE.FindStringSubmatch(l); m != nil {
			if v, err := strconv.ParseFloat(m[1], 64); err == nil {
				r.Coverage = &v
			}
		}
	}
	if seen {
		r.counted = true
		r.Runners = append(r.Runners, "cargo test")
	}
	return seen
}

var (
	pytestSummaryRE = lazyRegexp(`^=*\s*((?:\d+ [a-z]+(?:, )?)+|no tests ran) in [0-9.]+s(?: \([^)]*\))?\s*=*$`)
	pytestCountRE   = lazyRegexp(`(\d+) ([a-z]+)`)
	pytestFailedRE  = lazyRegexp(`^(FAILED|ERROR) (\S+?)(?: - .*)?$`)
	pytestHeaderRE  = lazyRegexp(`^_{3,} (.+?) _{3,}$`)
	pytestTotalRE   = lazyRegexp(`^TOTAL\s+(?:\d+\s+)+([0-9.]+)%\s*$`)
)

// parsePytest reads pytest's final summary line (with or without -q), its
// "short test summary info" (FAILED and ERROR lines, with the node id
// that names the file) and pytest-cov's TOTAL line.
func parsePytest(lines []string, r *testRun) bool {
	seen := false
	var named []testFailure
	var headers []string
	for _, l := range lines {
		if m := pytestSummaryRE.FindStringSubmatch(l); m != nil {
			seen = true
			for _, c := range pytestCountRE.FindAllStringSubmatch(m[1], -1) {
				n := atoi(c[1])
				switch c[2] {
				case "passed", "xpassed":
					r.Passed += n
				case "failed", "error", "errors":
					r.Failed += n
				case "skipped", "xfailed":
					r.Skipped += n
				}
			}
			continue
		}
		if m := pytestFailedRE.FindStringSubmatch(l); m != nil {
			id := m[2]
			file, _, _ := strings.Cut(id, "::")
			named = append(named, testFailure{Name: id, File: file})
			continue
		}
		if m := pytestHeaderRE.FindStringSubmatch(l); m != nil {
			headers = append(headers, m[1])
			continue
		}
		if m := pytestTotalRE.FindStringSubmatch(l); m != nil {
			if v, err := strconv.ParseFloat(m[1], 64); err == nil {
				r.Coverage = &v
			}
		}
	}
	if !seen {
		return false
	}
	if len(named) == 0 {
		// Without the short summary (-r not showing failures) the section
		// headers name the tests, without their files.
		for _, h := range headers {
			if h != "coverage" && !strings.Contains(h, " ") {
				named = append(named, testFailure{Name: h})
			}
		}
	}
	for _, f := range named {
		r.addFailure(f)
	}
	r.counted = true
	r.Runners = append(r.Runners, "pytest")
	return true
}

var (
	unittestRanRE    = lazyRegexp(`^Ran (\d+) tests? in [0-9.]+s$`)
	unittestResultRE = lazyRegexp(`^(OK|FAILED)(?: \((.*)\))?$`)
	unittestFailRE   = lazyRegexp(`^(?:FAIL|ERROR): (\S+) \((.+?)\)`)
	unittestFileRE   = lazyRegexp(`^\s+File "(.+?)", line \d+`)
	unittestCountRE  = lazyRegexp(`([a-z ]+)=(\d+)`)
)

// parseUnittest reads Python's unittest (and what builds on it: Django's
// runner): "Ran N tests", the OK/FAILED line with its counts, and the
// FAIL:/ERROR: headers, each followed by a traceback whose first file is
// the test's.
func parseUnittest(lines []string, r *testRun) bool {
	ran, seen := 0, false
	last := -1
	for _, l := range lines {
		if m := unittestRanRE.FindStringSubmatch(l); m != nil {
			ran, seen = atoi(m[1]), true
			continue
		}
		if m := unittestFailRE.FindStringSubmatch(l); m != nil {
			name := m[2]
			if !strings.HasSuffix(name, "."+m[1]) {
				name += "." + m[1]
			}
			r.addFailure(testFailure{Name: name})
			last = indexOf(r.Failures, name)
			continue
		}
		if m := unittestFileRE.FindStringSubmatch(l); m != nil && last >= 0 {
			if r.Failures[last].File == "" {
				r.Failures[last].File = m[1]
			}
			last = -1
			continue
		}
		if m := unittestResultRE.FindStringSubmatch(l); m != nil && seen {
			failed, skipped, expected := 0, 0, 0
			for _, c := range unittestCountRE.FindAllStringSubmatch(m[2], -1) {
				switch strings.TrimSpace(c[1]) {
				case "failures", "errors", "unexpected successes":
					failed += atoi(c[2])
				case "skipped":
					skipped += atoi(c[2])
				case "expected failures":
					expected += atoi(c[2])
				}
			}
			r.Failed += failed
			r.Skipped += skipped + expected
			r.Passed += max(ran-failed-skipped-expected, 0)
			r.counted = true
			r.Runners = append(r.Runners, "unittest")
			return true
		}
	}
	return false
}

var (
	jestTestsRE  = lazyRegexp(`^Tests:\s+(.*?),?\s*(\d+) total\s*$`)
	jestCountRE  = lazyRegexp(`(\d+) ([a-z]+)`)
	jestFileRE   = lazyRegexp(`^\s*FAIL\s+(\S+)\s*$`)
	jestBulletRE = lazyRegexp(`^\s*● (.+?)\s*$`)
)

// parseJest reads Jest: the "Tests:" summary line, the "FAIL <file>"
// lines and the "● Suite › test" header of each failure below them.
func parseJest(lines []string, r *testRun) bool {
	seen := false
	file := ""
	var named []testFailure
	for _, l := range lines {
		if m := jestTestsRE.FindStringSubmatch(l); m != nil {
			seen = true
			for _, c := range jestCountRE.FindAllStringSubmatch(m[1], -1) {
				switch c[2] {
				case "passed":
					r.Passed += atoi(c[1])
				case "failed":
					r.Failed += atoi(c[1])
				case "skipped", "todo", "pending":
					r.Skipped += atoi(c[1])
				}
			}
			continue
		}
		if m := jestFileRE.FindStringSubmatch(l); m != nil {
			file = m[1]
			continue
		}
		if strings.HasPrefix(strings.TrimSpace(l), "PASS ") {
			file = ""
			continue
		}
		if m := jestBulletRE.FindStringSubmatch(l); m != nil && file != "" {
			name := m[1]
			if name == "Test suite failed to run" {
				name = file
			}
			named = append(named, testFailure{Name: name, File: file})
		}
	}
	if !seen {
		return false
	}
	for _, f := range named {
		r.addFailure(f)
	}
	r.counted = true
	r.Runners = append(r.Runners, "jest")
	return true
}

var (
	vitestTestsRE = lazyRegexp(`^\s*Tests\s+(.+?)\s*\((\d+)\)\s*$`)
	vitestFilesRE = lazyRegexp(`^\s*Test Files\s+`)
	vitestFailRE  = lazyRegexp(`^\s*FAIL\s+(\S+) > (.+?)\s*$`)
	vitestSuiteRE = lazyRegexp(`^\s*FAIL\s+(\S+)\s+\[ .+ \]\s*$`)
)

// parseVitest reads Vitest: the "Test Files" and "Tests" summary lines
// and the "FAIL <file> > suite > test" line of each failure.
func parseVitest(lines []string, r *testRun) bool {
	files, seen := false, false
	var named []testFailure
	var p, f, s int
	for _, l := range lines {
		if vitestFilesRE.MatchString(l) {
			files = true
			continue
		}
		if m := vitestTestsRE.FindStringSubmatch(l); m != nil && files {
			seen = true
			for _, part := range strings.Split(m[1], "|") {
				c := jestCountRE.FindStringSubmatch(part)
				if c == nil {
					continue
				}
				switch c[2] {
				case "passed":
					p += atoi(c[1])
				case "failed":
					f += atoi(c[1])
				case "skipped", "todo":
					s += atoi(c[1])
				}
			}
			continue
		}
		if m := vitestFailRE.FindStringSubmatch(l); m != nil {
			named = append(named, testFailure{Name: m[2], File: m[1]})
			continue
		}
		if m := vitestSuiteRE.FindStringSubmatch(l); m != nil {
			named = append(named, testFailure{Name: m[1], File: m[1]})
		}
	}
	if !seen {
		return false
	}
	r.Passed, r.Failed, r.Skipped = r.Passed+p, r.Failed+f, r.Skipped+s
	for _, f := range named {
		r.addFailure(f)
	}
	r.counted = true
	r.Runners = append(r.Runners, "vitest")
	return true
}

var (
	mochaPassingRE = lazyRegexp(`^\s+(\d+) passing \(`)
	mochaFailingRE = lazyRegexp(`^\s+(\d+) failing\s*$`)
	mochaPendingRE = lazyRegexp(`^\s+(\d+) pending\s*$`)
	mochaNumRE     = lazyRegexp(`^  (\d+)\) (.+?)\s*$`)
	mochaStackRE   = lazyRegexp(`^\s+at .*?\(?((?:[A-Za-z]:)?[^\s():]+\.(?:[cm]?[jt]sx?)):\d+:\d+\)?$`)
)

// parseMocha reads Mocha's spec reporter: the "N passing", "N failing"
// and "N pending" lines, then each numbered failure, whose title runs
// over several lines up to one ending in ":", and whose stack names the
// test file.
func parseMocha(lines []string, r *testRun) bool {
	seen, inFailures := false, false
	var title []string
	cur := -1
	var named []testFailure
	for _, l := range lines {
		if m := mochaPassingRE.FindStringSubmatch(l); m != nil {
			seen = true
			r.Passed += atoi(m[1])
			continue
		}
		if !seen {
			continue
		}
		if m := mochaFailingRE.FindStringSubmatch(l); m != nil {
			r.Failed += atoi(m[1])
			inFailures = true
			continue
		}
		if m := mochaPendingRE.FindStringSubmatch(l); m != nil {
			r.Skipped += atoi(m[1])
			continue
		}
		if !inFailures {
			continue
		}
		if m := mochaNumRE.FindStringSubmatch(l); m != nil {
			title, cur = []string{m[2]}, -1
			if strings.HasSuffix(m[2], ":") {
				named = append(named, testFailure{Name: strings.TrimSuffix(m[2], ":")})
				cur, title = len(named)-1, nil
			}
			continue
		}
		if title != nil {
			t := strings.TrimSpace(l)
			if t == "" {
				title = nil
				continue
			}
			title = append(title, t)
			if strings.HasSuffix(t, ":") {
				name := strings.TrimSuffix(strings.Join(title, " "), ":")
				named = append(named, testFailure{Name: name})
				cur, title = len(named)-1, nil
			}
			continue
		}
		if m := mochaStackRE.FindStringSubmatch(l); m != nil && cur >= 0 && named[cur].File == "" {
			if !strings.Contains(m[1], "node_modules") && !strings.HasPrefix(m[1], "node:") {
				named[cur].File = m[1]
			}
		}
	}
	if !seen {
		return false
	}
	for _, f := range named {
		r.addFailure(f)
	}
	r.counted = true
	r.Runners = append(r.Runners, "mocha")
	return true
}

var (
	genericPassRE = lazyRegexp(`(?i)\b(\d+)\s+(?:tests?\s+)?(?:passed|passing|pass|ok|succeeded)\b`)
	genericFailRE = lazyRegexp(`(?i)\b(\d+)\s+(?:tests?\s+)?(?:failed|failing|failures?|fail)\b`)
	genericSkipRE = lazyRegexp(`(?i)\b(\d+)\s+(?:tests?\s+)?(?:skipped|pending|ignored)\b`)
)

// parseGeneric reads the last line that gives both a count of passed and
// one of failed tests ("12 passed, 2 failed", "Failed: 0 ... 3 passed"),
// which most runners print in some form.
func parseGeneric(lines []string, r *testRun) bool {
	for i := len(lines) - 1; i >= 0; i-- {
		l := lines[i]
		p := genericPassRE.FindStringSubmatch(l)
		f := genericFailRE.FindStringSubmatch(l)
		if p == nil || f == nil {
			continue
		}
		r.Passed += atoi(p[1])
		r.Failed += atoi(f[1])
		if s := genericSkipRE.FindStringSubmatch(l); s != nil {
			r.Skipped += atoi(s[1])
		}
		r.counted = true
		r.Runners = append(r.Runners, "generic")
		return true
	}
	return false
}

var (
	istanbulRE      = lazyRegexp(`^All files\s*\|\s*([0-9.]+)\s*\|\s*([0-9.]+)\s*\|\s*([0-9.]+)\s*\|\s*([0-9.]+)\s*\|`)
	genericCoverRE  = lazyRegexp(`(?i)\bcoverage\b[^0-9\n%]{0,30}?([0-9]{1,3}(?:\.[0-9]+)?)\s*%`)
	genericCoverRE2 = lazyRegexp(`(?i)\b([0-9]{1,3}(?:\.[0-9]+)?)\s*%\s+(?:coverage|covered)\b`)
)

// otherCoverage finds the coverage of a runner that prints it as a table
// (Istanbul: Jest, Vitest, nyc and c8 for Mocha) — the "All files" row's
// % Lines — or, when no runner was recognized at all, the last line that
// says "coverage: N%".
func otherCoverage(lines []string, generic bool) *float64 {
	for _, l := range lines {
		if m := istanbulRE.FindStringSubmatch(l); m != nil {
			if v, err := strconv.ParseFloat(m[4], 64); err == nil {
				return &v
			}
		}
	}
	if !generic {
		return nil
	}
	for i := len(lines) - 1; i >= 0; i-- {
		m := genericCoverRE.FindStringSubmatch(lines[i])
		if m == nil {
			m = genericCoverRE2.FindStringSubmatch(lines[i])
		}
		if m != nil {
			if v, err := strconv.ParseFloat(m[1], 64); err == nil && v <= 100 {
				return &v
			}
		}
	}
	return nil
}

// mean is the unweighted mean of the packages' coverages: go test prints
// one per package and no total.
func mean(v []float64) *float64 {
	if len(v) == 0 {
		return nil
	}
	s := 0.0
	for _, x := range v {
		s += x
	}
	m := s / float64(len(v))
	return &m
}

func atoi(s string) int {
	n, err := strconv.Atoi(s)
	if err != nil || n < 0 {
		return 0
	}
	return n
}
