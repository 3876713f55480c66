package metrics

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

// hostileTexts are label values and help texts that the format escapes
// (a quote, a backslash, a newline), that it writes as they are though a
// terminal would act on them, that are not UTF-8, or that look like the
// format's own syntax.
var hostileTexts = []string{
	"", "a", "b", "B", "é", "日本", `"`, `\`, "\n", `\n`, `\"`, "a\"b\n}", "\\\"\n\\",
	"\r", "\t", "\x00", "\x7f", "\x1b[2J", "\u202e", "\ufeff", "}", "{", ",", "=", " ", "# HELP x y",
	"le", "+Inf", "NaN", "bad\xffutf8", "\xc3", "\xed\xa0\x80", strings.Repeat("x", 300),
	strings.Repeat("\\\"\n", 50),
}

// hostileFloats are values the format writes in a form of their own
// (the infinities, NaN, negative zero, 1 and -1) or whose shortest form
// takes an exponent, a long mantissa or a subnormal.
var hostileFloats = []float64{
	0, math.Copysign(0, -1), 1, -1, 0.1, -0.1, 0.5, 2, 10, 1e21, 1e-7, 123456789, 1234567890123456789,
	0.30000000000000004, 1.0000000000000002, 9007199254740993, math.MaxFloat64, -math.MaxFloat64,
	math.SmallestNonzeroFloat64, -math.SmallestNonzeroFloat64, 2.2250738585072014e-308,
	math.Inf(+1), math.Inf(-1), math.NaN(), math.Float64frombits(0x7ff8000000000001), float64(math.MaxUint64),
	1e300, 5000, 3600, 0.01,
}

// gen makes readings from a seeded source.
type gen struct{ rng *rand.Rand }

func (g gen) pick(n int) int { return g.rng.IntN(n) }

func (g gen) chance(p float64) bool { return g.rng.Float64() < p }

func (g gen) float() float64 {
	switch g.pick(4) {
	case 0:
		return math.Float64frombits(g.rng.Uint64())
	case 1:
		return g.rng.NormFloat64() * math.Pow(10, float64(g.pick(40)-20))
	case 2:
		return float64(g.rng.IntN(2000) - 1000)
	}
	return hostileFloats[g.pick(len(hostileFloats))]
}

func (g gen) text() string {
	switch {
	case g.chance(0.1):
		// Any bytes: often not UTF-8.
		b := make([]byte, g.pick(6))
		for i := range b {
			b[i] = byte(g.rng.Uint32())
		}
		return string(b)
	case g.chance(0.15):
		// Any characters, controls included.
		var sb strings.Builder
		for range g.pick(6) {
			sb.WriteRune(rune(g.rng.IntN(0x3000)))
		}
		return sb.String()
	}
	return hostileTexts[g.pick(len(hostileTexts))]
}

// labelNames sort before and after the project label, upper case before
// lower.
var labelNames = []string{"a", "b", "Z", "_x", "domain", "status", "file", "skill", "result_type", "proj", "projec", "projecta", "Project", "zz", "x_1", "A1"}

// families makes up to six families of every type, their names unique,
// their labels in any order.
func (g gen) families() []*metric {
	var ms []*metric
	for i := range 1 + g.pick(6) {
		suffix := []byte("abcde")
		for j := range suffix {
			suffix[j] = "abcdefghijklmnopqrstuvwxyz:0123456789"[g.pick(37)]
		}
		m := &metric{name: fmt.Sprintf("t_m%d_%s", i, suffix), help: g.text(), typ: valueType(g.pick(3))}
		for _, k := range g.rng.Perm(len(labelNames))[:g.pick(4)] {
			m.labels = append(m.labels, labelNames[k])
		}
		if g.chance(0.3) {
			// Bounds in any order, the infinities among them; not NaN,
			// which the catalog has not (TestCatalogNames) and a map
			// cannot find.
			m.buckets = []float64{}
			for range g.pick(6) {
				if b := g.float(); !math.IsNaN(b) {
					m.buckets = append(m.buckets, b)
				}
			}
		}
		ms = append(ms, m)
	}
	return ms
}

// histogram makes a histogram of m's bounds, its counts anything: an
// empty one, a huge one, one whose buckets are not cumulative.
func (g gen) histogram(m *metric) *histogram {
	h := newHistogram(m.buckets)
	switch g.pick(3) {
	case 0:
		// Empty.
	case 1:
		for range g.pick(20) {
			h.observe(g.float())
		}
	case 2:
		h.count = g.rng.Uint64()
		h.sum = g.float()
		for b := range h.buckets {
			h.buckets[b] = g.rng.Uint64() >> g.pick(64)
		}
	}
	return h
}

// reading makes a reading of the families ms and some of the catalog's;
// unique: no two series of a family have the same labels.
func (g gen) reading(ms []*metric, unique bool) *Reading {
	r := &Reading{}
	all := append([]*metric{mDomainStatus, mSkillDuration, mCycles, mCorrupt}, ms...)
	seen := map[string]bool{}
	for range g.pick(25) {
		m := all[g.pick(len(all))]
		n := len(m.labels)
		if g.chance(0.03) {
			// The wrong number of labels: refused.
			n = g.pick(4)
		}
		labels := make([]string, n)
		for i := range labels {
			labels[i] = g.text()
		}
		key := m.name + "\xff" + strings.Join(labels, "\xff")
		if unique && seen[key] {
			continue
		}
		seen[key] = true
		s := sample{m: m, v: g.float(), labels: labels}
		if m.buckets != nil {
			s.hist = g.histogram(m)
		}
		r.samples = append(r.samples, s)
	}
	// The catalog's own way in: add makes the label values safe.
	if g.chance(0.5) {
		r.add(mDomainStatus, 1, g.text(), labelValue(g.text()))
		r.add(mHaltActive, g.float())
	}
	return r
}

// projectNames are project label values, made safe as NewManyCollector
// makes them.
func (g gen) projectNames(n int) []string {
	pool := []string{"", "api", "a/api", "b/api", "a\"b\n}", "<script>", "\xff", "é", "project", `x\y`, "/", "p"}
	seen := map[string]bool{}
	var names []string
	for len(names) < n {
		name := safeValue(g.text())
		if g.chance(0.7) {
			name = safeValue(pool[g.pick(len(pool))])
		}
		if !seen[name] {
			seen[name] = true
			names = append(names, name)
		}
	}
	return names
}

// sameAsReference fails t unless expose writes, byte for byte, what the
// client library writes of the readings, and fails when and only when it
// does.
func sameAsReference(t *testing.T, what string, readings []*Reading, projects []string) (failed bool) {
	t.Helper()
	var got, want bytes.Buffer
	gerr := expose(&got, readings, projects)
	werr := referenceExpose(&want, readings, projects)
	if got.String() != want.String() || (gerr == nil) != (werr == nil) {
		gl, wl := strings.SplitAfter(got.String(), "\n"), strings.SplitAfter(want.String(), "\n")
		i := 0
		for i < min(len(gl), len(wl)) && gl[i] == wl[i] {
			i++
		}
		t.Errorf("%s: the exposition differs from the client library's from line %d\n got (error %v):\n%q\nwant (error %v):\n%q", what, i+1, gerr, gl[i:min(i+3, len(gl))], werr, wl[i:min(i+3, len(wl))])
		return true
	}
	return gerr != nil
}

// Generated readings, of one project or many, with hostile label values,
// help texts, values and histograms, are written as the Prometheus client
// library writes them, byte for byte, and fail as it fails: a series read
// twice is written once, and the error returned.
func TestExposeMatchesTheClientLibrary(t *testing.T) {
	n := 2000
	if testing.Short() {
		n = 200
	}
	g := gen{rand.New(rand.NewPCG(7, 11))}
	failed, passed := 0, 0
	for i := range n {
		ms := g.families()
		unique := g.chance(0.5)
		var readings []*Reading
		var projects []string
		if g.chance(0.4) {
			readings = []*Reading{g.reading(ms, unique)}
		} else {
			projects = g.projectNames(1 + g.pick(5))
			for range projects {
				readings = append(readings, g.reading(ms, unique))
			}
		}
		if sameAsReference(t, fmt.Sprintf("case %d", i), readings, projects) {
			failed++
		} else {
			passed++
		}
		if t.Failed() {
			return
		}
	}
	// Both ways out were taken.
	if failed < n/20 || passed < n/4 {
		t.Errorf("%d readings failed and %d did not: the cases do not cover both", failed, passed)
	}
}

// The escapes, the label order and the values, written out.
func TestExposeText(t *testing.T) {
	m := &metric{name: "t_x", help: "a\\b\nc\"d\x1b", typ: gauge, labels: []string{"b", "a"}}
	h := &metric{name: "t_h", help: "", buckets: []float64{1, 0.5}, labels: []string{"z"}}
	r := &Reading{samples: []sample{
		{m: m, v: math.Copysign(0, -1), labels: []string{"2", "1\"\\\n\r"}},
		{m: m, v: math.Inf(-1), labels: []string{"1", "1\"\\\n\r"}},
		{m: m, v: 1e21, labels: []string{"", "\u202e"}},
		{m: h, labels: []string{"q"}, hist: &histogram{count: 3, sum: 0.30000000000000004, buckets: map[float64]uint64{1: 2, 0.5: 1}}},
		{m: h, labels: []string{"p"}, hist: newHistogram(nil)},
	}}
	want := `# HELP t_h 
# TYPE t_h histogram
t_h_bucket{z="p",le="+Inf"} 0
t_h_sum{z="p"} 0
t_h_count{z="p"} 0
t_h_bucket{z="q",le="0.5"} 1
t_h_bucket{z="q",le="1"} 2
t_h_bucket{z="q",le="+Inf"} 3
t_h_sum{z="q"} 0.30000000000000004
t_h_count{z="q"} 3
# HELP t_x a\\b\nc"d` + "\x1b" + `
# TYPE t_x gauge
t_x{a="1\"\\\n` + "\r" + `",b="1"} -Inf
t_x{a="1\"\\\n` + "\r" + `",b="2"} 0
t_x{a="` + "\u202e" + `",b=""} 1e+21
`
	for _, projects := range [][]string{nil, {"p\"1"}} {
		var b strings.Builder
		if err := expose(&b, []*Reading{r}, projects); err != nil {
			t.Fatal(err)
		}
		w := want
		if projects != nil {
			// The project label among the others, by its name.
			w = strings.NewReplacer(`{z=`, `{project="p\"1",z=`, `,b="1"}`, `,b="1",project="p\"1"}`,
				`,b="2"}`, `,b="2",project="p\"1"}`, `,b=""}`, `,b="",project="p\"1"}`).Replace(want)
		}
		if b.String() != w {
			t.Errorf("projects %q:\n got:\n%s\nwant:\n%s", projects, b.String(), w)
		}
		sameAsReference(t, fmt.Sprintf("projects %q", projects), []*Reading{r}, projects)
	}
}

// A series read twice is written once, with the value read first, and
// named in the error; the rest is written. A label value that is not
// UTF-8 leaves its sample out, as the client library refuses it.
func TestExposeKeepsWhatItCan(t *testing.T) {
	r := &Reading{}
	r.add(mCycles, 3)
	r.add(mCycles, 4)
	r.add(mHaltActive, 1)
	r.samples = append(r.samples, sample{m: mCorrupt, v: 1, labels: []string{"bad\xff"}})
	var b strings.Builder
	err := Write(&b, r)
	if err == nil || !strings.Contains(err.Error(), "ooda_cycles_total is read more than once") {
		t.Errorf("error %v, want one naming ooda_cycles_total", err)
	}
	if text := b.String(); !strings.Contains(text, "\nooda_cycles_total 3\n") || strings.Contains(text, "ooda_cycles_total 4") ||
		!strings.Contains(text, "\nooda_halt_active 1\n") || strings.Contains(text, "ooda_state_file_corrupt") {
		t.Errorf("the text:\n%s", text)
	}
	sameAsReference(t, "a series read twice", []*Reading{r}, nil)

	// A writer that fails: its error.
	if err := Write(failingWriter{}, r); !errors.Is(err, errFull) {
		t.Errorf("a failing writer: %v", err)
	}
}

var errFull = errors.New("disk full")

type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, errFull }
