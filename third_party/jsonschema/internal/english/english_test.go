package english

import (
	"fmt"
	"math"
	"testing"
)

type named int

type stringer int

func (s stringer) String() string { return fmt.Sprintf("S%d", int(s)) }

// TestSprintfAsTheEnglishPrinter holds Sprintf to what the release's
// golang.org/x/text message.Printer for language.English printed for the
// same format and arguments; every want below is that printer's output.
func TestSprintfAsTheEnglishPrinter(t *testing.T) {
	for _, c := range []struct {
		format string
		args   []any
		want   string
	}{
		{"%d", []any{0}, "0"},
		{"%d", []any{999}, "999"},
		{"%d", []any{1000}, "1,000"},
		{"%d", []any{-1234567}, "-1,234,567"},
		{"%v", []any{int64(math.MinInt64)}, "-9,223,372,036,854,775,808"},
		{"%d", []any{uint64(math.MaxUint64)}, "18,446,744,073,709,551,615"},
		{"%d %v", []any{int8(-128), uint16(65535)}, "-128 65,535"},
		{"%d|%v", []any{named(12345), named(12345)}, "12,345|12,345"},
		{"%d|%v", []any{stringer(12345), stringer(12345)}, "12,345|S12345"},
		{"%v", []any{0.0}, "0"},
		{"%v", []any{math.Copysign(0, -1)}, "0"},
		{"%v", []any{0.5}, "0.5"},
		{"%v", []any{-1234.5}, "-1,234.5"},
		{"%v", []any{999999.0}, "999,999"},
		{"%v", []any{123456.789}, "123,456.789"},
		{"%v", []any{1e6}, "1×10⁰⁶"},
		{"%v", []any{1.0000005e6}, "1.0000005×10⁰⁶"},
		{"%v", []any{-2.5e21}, "-2.5×10²¹"},
		{"%v", []any{1.5e300}, "1.5×10³⁰⁰"},
		{"%v", []any{0.0001}, "0.0001"},
		{"%v", []any{0.00012345}, "0.00012345"},
		{"%v", []any{1e-5}, "1×10⁻⁰⁵"},
		{"%v", []any{5e-324}, "5×10⁻³²⁴"},
		{"%v", []any{math.MaxFloat64}, "1.7976931348623157×10³⁰⁸"},
		{"%v", []any{math.Inf(1)}, "∞"},
		{"%v", []any{math.Inf(-1)}, "-∞"},
		{"%v", []any{math.NaN()}, "NaN"},
		{"%v", []any{float32(0.1)}, "0.1"},
		{"%v", []any{float32(16777216)}, "1.6777216×10⁰⁷"},
		{"%q %q", []any{'x', "a\"b'c"}, "'x' \"a\\\"b'c\""},
		{"%T %T", []any{1234, 1.5}, "int float64"},
		{"%s: %v", []any{"at", fmt.Errorf("bad %d", 1234)}, "at: bad 1234"},
		{"100%% of %d", []any{1000}, "100% of 1,000"},
		{"%d and %d", []any{1000}, "1,000 and %!d(MISSING)"},
		{"%d", []any{1000, 2000, "x", nil}, "1,000%!(EXTRA int=2,000, string=x, <nil>)"},
		{"trailing %", []any{}, "trailing %!(NOVERB)"},
		{"no directives", []any{}, "no directives"},
	} {
		if got := Sprintf(c.format, c.args...); got != c.want {
			t.Errorf("Sprintf(%q, %#v) = %q, want %q", c.format, c.args, got, c.want)
		}
	}
}

// Flags, widths and the other verbs are fmt's, as no message uses them.
func TestSprintfOtherVerbsAreFmts(t *testing.T) {
	for _, c := range []struct {
		format string
		args   []any
	}{
		{"%5d|%-5d|%05d|%+d|%x|%o|%b|%c|%U", []any{1234, 1234, 1234, 1234, 1234, 1234, 1234, 65, 0x1F600}},
		{"%.2f|%e|%g|%8.3v|%#v", []any{3.14159, 1234.5, 1234.5, 1234.5, 1234}},
		{"%[2]d %[1]d", []any{1000, 2000}},
		{"%*d", []any{6, 1000}},
	} {
		if got, want := Sprintf(c.format, c.args...), fmt.Sprintf(c.format, c.args...); got != want {
			t.Errorf("Sprintf(%q, %v) = %q, fmt says %q", c.format, c.args, got, want)
		}
	}
}
