package skills

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// The outputs under testdata/tests were captured from the real runners
// (pytest 7.2 with pytest-cov 4, Python 3.11 unittest, cargo 1.95, Jest
// 30, Vitest 4 with v8 coverage, Mocha 12) on small projects with failing,
// skipped and passing tests; /srv/app stands for the project directory.

func fixture(t *testing.T, name string) []string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "tests", name))
	if err != nil {
		t.Fatal(err)
	}
	return cleanOutput(b)
}

type want struct {
	runners                 string
	passed, failed, skipped int
	failures                []testFailure
	coverage                float64 // -1: none
}

func check(t *testing.T, name string, got testRun, w want) {
	t.Helper()
	if r := strings.Join(got.Runners, ","); r != w.runners {
		t.Errorf("%s: runners %q, want %q", name, r, w.runners)
	}
	if got.Passed != w.passed || got.Failed != w.failed || got.Skipped != w.skipped {
		t.Errorf("%s: passed/failed/skipped %d/%d/%d, want %d/%d/%d", name, got.Passed, got.Failed, got.Skipped, w.passed, w.failed, w.skipped)
	}
	if !reflect.DeepEqual(got.Failures, w.failures) {
		t.Errorf("%s: failures\n got %+v\nwant %+v", name, got.Failures, w.failures)
	}
	switch {
	case w.coverage < 0 && got.Coverage != nil:
		t.Errorf("%s: coverage %v, want none", name, *got.Coverage)
	case w.coverage >= 0 && (got.Coverage == nil || *got.Coverage != w.coverage):
		t.Errorf("%s: coverage %v, want %v", name, got.Coverage, w.coverage)
	}
}

func TestParseCapturedRunnerOutputs(t *testing.T) {
	for _, tc := range []struct {
		file string
		want want
	}{
		{"pytest.txt", want{"pytest", 1, 2, 1, []testFailure{
			{Name: "tests/test_calc.py::CalcTest::test_div_zero", File: "tests/test_calc.py"},
			{Name: "tests/test_calc.py::CalcTest::test_sub_large", File: "tests/test_calc.py"},
		}, -1}},
		// -q: the summary line has no "=" around it.
		{"pytest-cov.txt", want{"pytest", 1, 2, 1, []testFailure{
			{Name: "tests/test_calc.py::CalcTest::test_div_zero", File: "tests/test_calc.py"},
			{Name: "tests/test_calc.py::CalcTest::test_sub_large", File: "tests/test_calc.py"},
		}, 100}},
		{"pytest-pass-cov.txt", want{"pytest", 3, 0, 1, nil, 100}},
		{"pytest-none.txt", want{"pytest", 0, 0, 0, nil, -1}},
		{"unittest.txt", want{"unittest", 1, 2, 1, []testFailure{
			{Name: "tests.test_calc.CalcTest.test_div_zero", File: "/srv/app/tests/test_calc.py"},
			{Name: "tests.test_calc.CalcTest.test_sub_large", File: "/srv/app/tests/test_calc.py"},
		}, -1}},
		{"unittest-pass.txt", want{"unittest", 3, 0, 1, nil, -1}},
		{"cargo-fail.txt", want{"cargo test", 1, 1, 1, []testFailure{{Name: "tests::parses_no", File: "src/lib.rs"}}, -1}},
		// Three test binaries: unit tests, an integration test, doc tests.
		{"cargo-pass.txt", want{"cargo test", 3, 0, 1, nil, -1}},
		{"jest.txt", want{"jest", 2, 1, 1, []testFailure{{Name: "Calculator › subtracts large numbers", File: "src/calc.test.js"}}, 75}},
		{"jest-color.txt", want{"jest", 2, 1, 1, []testFailure{{Name: "Calculator › subtracts large numbers", File: "src/calc.test.js"}}, -1}},
		{"vitest.txt", want{"vitest", 2, 1, 1, []testFailure{{Name: "calc > subtracts large", File: "vt/calc.test.mjs"}}, 75}},
		{"vitest-color.txt", want{"vitest", 2, 1, 1, []testFailure{{Name: "calc > subtracts large", File: "vt/calc.test.mjs"}}, -1}},
		{"mocha.txt", want{"mocha", 1, 2, 1, []testFailure{
			{Name: "Calculator subtracts large numbers", File: "mt/calc.spec.js"},
			{Name: "Calculator edge cases adds negatives", File: "mt/calc.spec.js"},
		}, -1}},
	} {
		t.Run(tc.file, func(t *testing.T) {
			check(t, tc.file, parseTestOutput(fixture(t, tc.file)), tc.want)
		})
	}
}

func TestParseColouredOutputNeedsStripping(t *testing.T) {
	// The coloured Jest output, read raw, does not parse: the escape codes
	// sit inside the words the patterns look for.
	b, err := os.ReadFile(filepath.Join("testdata", "tests", "jest-color.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), "\x1b[") {
		t.Fatal("the fixture has no escape codes")
	}
	raw := parseTestOutput(strings.Split(string(b), "\n"))
	if len(raw.Failures) != 0 {
		t.Errorf("without stripping the failures were found anyway (%+v): the test proves nothing", raw.Failures)
	}
	for _, l := range fixture(t, "jest-color.txt") {
		if strings.ContainsRune(l, 0x1b) {
			t.Fatalf("escape left in %q", l)
		}
	}
}

func TestCleanOutputKeepsTheLastRedraw(t *testing.T) {
	got := cleanOutput([]byte("running 1/3\rrunning 3/3\r\nTests: 1 failed, 2 passed, 3 total\r\n\x1b]0;title\x07done\x1b[0K\n"))
	want := []string{"running 3/3", "Tests: 1 failed, 2 passed, 3 total", "done", ""}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
}

func TestParseGenericLine(t *testing.T) {
	for _, tc := range []struct {
		out  string
		want want
	}{
		{"building...\nrunning suite\n12 passed, 2 failed, 1 skipped\ncoverage: 81.25%\n", want{"generic", 12, 2, 1, nil, 81.25}},
		{"Results: 3 failed, 40 passed (1.2s)\n", want{"generic", 40, 3, 0, nil, -1}},
		{"ok so far\nSummary: 7 tests passed, 0 tests failed\nTotal coverage 64.0%\n", want{"generic", 7, 0, 0, nil, 64}},
		// Nothing that says passed and failed on one line: nothing read.
		{"all good\n5 passed\n", want{"", 0, 0, 0, nil, -1}},
	} {
		check(t, tc.out, parseTestOutput(cleanOutput([]byte(tc.out))), tc.want)
	}
}

func TestParseGoPlainAndJSON(t *testing.T) {
	plain := "=== RUN   TestAdd\n--- PASS: TestAdd (0.00s)\n=== RUN   TestParse\n    parse_test.go:12: got 1, want 2\n--- FAIL: TestParse (0.00s)\n" +
		"=== RUN   TestFlags\n=== RUN   TestFlags/empty\n    flags_test.go:9: boom\n--- FAIL: TestFlags (0.00s)\n    --- FAIL: TestFlags/empty (0.00s)\n" +
		"FAIL\nFAIL\texample.com/m/internal/cli\t0.004s\nok  \texample.com/m\t0.002s\tcoverage: 80.0% of statements\n" +
		"FAIL\texample.com/m/broken [build failed]\n\texample.com/m/cmd\t\tcoverage: 0.0% of statements\nFAIL\n"
	r := parseTestOutput(cleanOutput([]byte(plain)))
	// TestFlags fails because its subtest does: one failure, the subtest.
	check(t, "plain -v", r, want{"go test", 1, 3, 0, []testFailure{
		{Name: "TestParse", File: "parse_test.go", Pkg: "example.com/m/internal/cli"},
		{Name: "TestFlags/empty", File: "flags_test.go", Pkg: "example.com/m/internal/cli"},
		{Name: "example.com/m/broken [build failed]"},
	}, 40})

	js := `{"Action":"start","Package":"example.com/m"}
{"Action":"run","Package":"example.com/m","Test":"TestAdd"}
{"Action":"output","Package":"example.com/m","Test":"TestAdd","Output":"    add_test.go:7: Add(1, 2) = 4, want 3\n"}
{"Action":"fail","Package":"example.com/m","Test":"TestAdd","Elapsed":0}
{"Action":"pass","Package":"example.com/m","Test":"TestSub","Elapsed":0}
{"Action":"skip","Package":"example.com/m","Test":"TestSlow","Elapsed":0}
{"Action":"output","Package":"example.com/m","Output":"FAIL\texample.com/m\t0.002s\n"}
{"Action":"fail","Package":"example.com/m","Elapsed":0.002}
{"ImportPath":"example.com/m/bad [example.com/m/bad.test]","Action":"build-output","Output":"bad/x.go:3:1: syntax error\n"}
{"Action":"fail","Package":"example.com/m/bad","Elapsed":0,"FailedBuild":"example.com/m/bad [example.com/m/bad.test]"}
{"Action":"output","Package":"example.com/m/ok","Output":"ok  \texample.com/m/ok\t0.001s\tcoverage: 61.5% of statements\n"}
{"Action":"pass","Package":"example.com/m/ok","Elapsed":0.001}
`
	check(t, "json", parseTestOutput(cleanOutput([]byte(js))), want{"go test -json", 1, 2, 1, []testFailure{
		{Name: "TestAdd", File: "add_test.go", Pkg: "example.com/m"},
		{Name: "example.com/m/bad [build failed]"},
	}, 61.5})
}
