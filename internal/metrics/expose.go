package metrics

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// The text exposition format, version 0.0.4, as a Prometheus client
// library writes it, byte for byte (a test compares the two): families
// sorted by name, each with its HELP and TYPE lines; a family's series
// sorted by their label values, the labels of each sorted by name; a
// histogram as its cumulative _bucket series, the le label last and +Inf
// always there, then _sum and _count. A text that parses the same but
// differs in its bytes would still be a change to whoever diffs or greps
// it.

// family is one family's series, as they are written.
type family struct {
	m      *metric
	series []series
}

// series is one sample with its label pairs, sorted by name.
type series struct {
	pairs []labelPair
	s     *sample
}

type labelPair struct{ name, value string }

// expose writes the readings; projects are the project label's values,
// one per reading, or nil for no project label. A sample that cannot be
// written as its family's type is left out, and a series whose labels
// another of its family already has is left out after the first: what
// could be written is written, and the error returned. A sample of the
// wrong number of labels, or of a label value that is not UTF-8, is left
// out without one, as a Prometheus client library refuses it when it is
// made (add and labelValue make every value UTF-8).
func expose(w io.Writer, readings []*Reading, projects []string) error {
	var errs []error
	byMetric := map[*metric]*family{}
	var families []*family
	for i, r := range readings {
		for j := range r.samples {
			s := &r.samples[j]
			if len(s.labels) != len(s.m.labels) || !allValid(s.labels) {
				continue
			}
			if (s.hist != nil) != (s.m.buckets != nil) {
				errs = append(errs, fmt.Errorf("metrics: %s: a histogram and a single value in one family; the sample is left out", s.m.name))
				continue
			}
			f := byMetric[s.m]
			if f == nil {
				f = &family{m: s.m}
				byMetric[s.m] = f
				families = append(families, f)
			}
			pairs := make([]labelPair, 0, len(s.labels)+1)
			for k, v := range s.labels {
				pairs = append(pairs, labelPair{s.m.labels[k], v})
			}
			if projects != nil {
				pairs = append(pairs, labelPair{ProjectLabel, projects[i]})
			}
			slices.SortFunc(pairs, func(a, b labelPair) int { return strings.Compare(a.name, b.name) })
			f.series = append(f.series, series{pairs: pairs, s: s})
		}
	}
	slices.SortFunc(families, func(a, b *family) int { return strings.Compare(a.m.name, b.m.name) })

	var b []byte
	for _, f := range families {
		// Stable: of two series with the same labels, the first read is
		// the one kept.
		slices.SortStableFunc(f.series, compareSeries)
		kept := f.series[:1]
		for _, s := range f.series[1:] {
			if compareSeries(kept[len(kept)-1], s) == 0 {
				errs = append(errs, fmt.Errorf("metrics: %s%s is read more than once; only the first is written", f.m.name, appendLabels(nil, s.pairs, "", 0)))
				continue
			}
			kept = append(kept, s)
		}
		b = appendFamily(b, f.m, kept)
	}
	if _, err := w.Write(b); err != nil {
		return err
	}
	return errors.Join(errs...)
}

func allValid(values []string) bool {
	for _, v := range values {
		if !utf8.ValidString(v) {
			return false
		}
	}
	return true
}

// compareSeries orders two series of one family by their label values,
// the labels in the order of their names, as a Prometheus client library
// orders them.
func compareSeries(a, b series) int {
	if c := cmp.Compare(len(a.pairs), len(b.pairs)); c != 0 {
		return c
	}
	for i := range a.pairs {
		if c := strings.Compare(a.pairs[i].value, b.pairs[i].value); c != 0 {
			return c
		}
	}
	return 0
}

// appendFamily appends the HELP and TYPE lines of m and its series.
func appendFamily(b []byte, m *metric, ss []series) []byte {
	typ := m.typ.String()
	if m.buckets != nil {
		typ = "histogram"
	}
	b = append(b, "# HELP "...)
	b = append(b, m.name...)
	b = append(b, ' ')
	b = appendEscaped(b, m.help, false)
	b = append(b, "\n# TYPE "...)
	b = append(b, m.name...)
	b = append(b, ' ')
	b = append(b, typ...)
	b = append(b, '\n')
	for _, s := range ss {
		h := s.s.hist
		if h == nil {
			b = appendSample(b, m.name, "", s.pairs, "", 0, s.s.v)
			continue
		}
		bounds := make([]float64, 0, len(h.buckets))
		for ub := range h.buckets {
			bounds = append(bounds, ub)
		}
		slices.Sort(bounds)
		inf := false
		for _, ub := range bounds {
			b = appendSample(b, m.name, "_bucket", s.pairs, "le", ub, float64(h.buckets[ub]))
			inf = inf || math.IsInf(ub, +1)
		}
		if !inf {
			b = appendSample(b, m.name, "_bucket", s.pairs, "le", math.Inf(+1), float64(h.count))
		}
		b = appendSample(b, m.name, "_sum", s.pairs, "", 0, h.sum)
		b = appendSample(b, m.name, "_count", s.pairs, "", 0, float64(h.count))
	}
	return b
}

// appendSample appends one line: the name with its suffix, the labels,
// an extra label (a bucket's le) last when extra is set, and the value.
func appendSample(b []byte, name, suffix string, pairs []labelPair, extra string, extraValue, v float64) []byte {
	b = append(b, name...)
	b = append(b, suffix...)
	b = appendLabels(b, pairs, extra, extraValue)
	b = append(b, ' ')
	b = appendFloat(b, v)
	return append(b, '\n')
}

// appendLabels appends {name="value",…}, nothing when there is no label.
func appendLabels(b []byte, pairs []labelPair, extra string, extraValue float64) []byte {
	if len(pairs) == 0 && extra == "" {
		return b
	}
	sep := byte('{')
	for _, p := range pairs {
		b = append(b, sep)
		b = append(b, p.name...)
		b = append(b, `="`...)
		b = appendEscaped(b, p.value, true)
		b = append(b, '"')
		sep = ','
	}
	if extra != "" {
		b = append(b, sep)
		b = append(b, extra...)
		b = append(b, `="`...)
		b = appendFloat(b, extraValue)
		b = append(b, '"')
	}
	return append(b, '}')
}

// appendEscaped appends s with a backslash and a newline escaped, and a
// double quote too in a label value; every other byte, valid UTF-8 or
// not, is written as it is.
func appendEscaped(b []byte, s string, quote bool) []byte {
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '\\':
			b = append(b, `\\`...)
		case c == '\n':
			b = append(b, `\n`...)
		case c == '"' && quote:
			b = append(b, `\"`...)
		default:
			b = append(b, c)
		}
	}
	return b
}

// appendFloat appends f as the format writes a value: the shortest
// decimal that reads back as f, +Inf, -Inf or NaN, and negative zero as 0.
func appendFloat(b []byte, f float64) []byte {
	switch {
	case f == 0:
		return append(b, '0')
	case math.IsNaN(f):
		return append(b, "NaN"...)
	case math.IsInf(f, +1):
		return append(b, "+Inf"...)
	case math.IsInf(f, -1):
		return append(b, "-Inf"...)
	}
	return strconv.AppendFloat(b, f, 'g', -1, 64)
}
