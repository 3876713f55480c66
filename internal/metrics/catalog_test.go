package metrics

import (
	"math"
	"os"
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"
)

// docs/dashboard.md lists every family, in the catalog's order, with its
// type, labels and the very help text the exposition carries; a family
// added, renamed or reworded without the page fails here.
func TestDocsListEveryMetric(t *testing.T) {
	b, err := os.ReadFile("../../docs/dashboard.md")
	if err != nil {
		t.Fatal(err)
	}
	row := regexp.MustCompile("^\\| `(ooda_[a-z_]+)` \\| (gauge|counter|histogram) \\| (.*?) \\| (.*) \\|$")
	var rows []string
	for _, l := range strings.Split(string(b), "\n") {
		if row.MatchString(l) {
			rows = append(rows, l)
		}
	}
	var want []string
	for _, m := range catalog {
		typ := "gauge"
		switch {
		case m.buckets != nil:
			typ = "histogram"
		case m.typ == counter:
			typ = "counter"
		}
		labels := "—"
		if len(m.labels) > 0 {
			labels = "`" + strings.Join(m.labels, "`, `") + "`"
		}
		want = append(want, "| `"+m.name+"` | "+typ+" | "+labels+" | "+m.help+" |")
	}
	if len(rows) != len(want) {
		t.Errorf("docs/dashboard.md has %d metric rows, the catalog %d families", len(rows), len(want))
	}
	for i := range min(len(rows), len(want)) {
		if rows[i] != want[i] {
			t.Errorf("docs/dashboard.md row %d:\n got %s\nwant %s", i+1, rows[i], want[i])
		}
	}
}

// Every family is named by the conventions: the ooda_ prefix, a counter
// ending in _total and a gauge not, no two of one name. The names are
// legacy Prometheus names, which the exposition writes as they are (a
// name outside them would have to be quoted); no label is the project
// label a many-projects exposition adds, nor a histogram's le, nor
// reserved; no name is a histogram's series; bucket bounds increase.
func TestCatalogNames(t *testing.T) {
	metricName := regexp.MustCompile(`^[a-zA-Z_:][a-zA-Z0-9_:]*$`)
	labelName := regexp.MustCompile(`^[a-zA-Z_][a-zA-Z0-9_]*$`)
	seen := map[string]bool{}
	for _, m := range catalog {
		seen[m.name] = true
	}
	for _, m := range catalog {
		if m.buckets == nil {
			continue
		}
		for _, suffix := range []string{"_bucket", "_sum", "_count"} {
			if seen[m.name+suffix] {
				t.Errorf("%s%s is a family and a series of the histogram %s", m.name, suffix, m.name)
			}
		}
		for i, b := range m.buckets {
			if math.IsNaN(b) || i > 0 && !(b > m.buckets[i-1]) {
				t.Errorf("%s: bucket bounds %v do not increase", m.name, m.buckets)
			}
		}
	}
	seen = map[string]bool{}
	for _, m := range catalog {
		if !metricName.MatchString(m.name) {
			t.Errorf("%q is not a legacy metric name", m.name)
		}
		labels := map[string]bool{}
		for _, l := range m.labels {
			if !labelName.MatchString(l) || strings.HasPrefix(l, "__") || l == ProjectLabel || l == "le" || labels[l] {
				t.Errorf("%s: label %q is not a legacy label name of its own", m.name, l)
			}
			labels[l] = true
		}
		if seen[m.name] {
			t.Errorf("%s is defined twice", m.name)
		}
		seen[m.name] = true
		if !strings.HasPrefix(m.name, "ooda_") {
			t.Errorf("%s lacks the ooda_ prefix", m.name)
		}
		if total := strings.HasSuffix(m.name, "_total"); total != (m.typ == counter) {
			t.Errorf("%s: a counter ends in _total, and only a counter", m.name)
		}
		if m.help == "" {
			t.Errorf("%s has no help", m.name)
		}
	}
}

// A label value is valid UTF-8 whatever the state file held, escaped where
// a terminal would act on it, and at most maxLabelRunes characters.
func TestLabelValue(t *testing.T) {
	cases := []struct{ in, want string }{
		{"healthy", "healthy"},
		{"a\"b\n}", "a\"b\n}"},
		{"<script>", "<script>"},
		{"bad\xffutf8", `bad\xffutf8`},
		{"\x1b[31mred\r", `\x1b[31mred\r`},
		{strings.Repeat("x", maxLabelRunes), strings.Repeat("x", maxLabelRunes)},
		{strings.Repeat("x", maxLabelRunes+1), strings.Repeat("x", maxLabelRunes-1) + "…"},
		{strings.Repeat("日", 200), strings.Repeat("日", maxLabelRunes-1) + "…"},
	}
	for _, c := range cases {
		got := labelValue(c.in)
		if got != c.want {
			t.Errorf("labelValue(%q) = %q, want %q", c.in, got, c.want)
		}
		if !utf8.ValidString(got) || utf8.RuneCountInString(got) > maxLabelRunes {
			t.Errorf("labelValue(%q) = %q: not a valid label value", c.in, got)
		}
	}
}
