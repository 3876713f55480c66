package present

import "testing"

func TestStylePaintOnlyWithColor(t *testing.T) {
	if got := (Style{}).Paint(Red, "HALT"); got != "HALT" {
		t.Errorf("plain style painted: %q", got)
	}
	if got := (Style{Color: true}).Paint(Red, "HALT"); got != "\x1b[31mHALT\x1b[0m" {
		t.Errorf("colour style: %q", got)
	}
}

func TestDisplayWidthAndFit(t *testing.T) {
	cases := []struct {
		in   string
		want int
	}{
		{"abc", 3},
		{"\x1b[31mabc\x1b[0m", 3},
		{"日本", 4},
		{"🔭 x", 4},
		{"│ ─ ┐", 5},
	}
	for _, c := range cases {
		if got := DisplayWidth(c.in); got != c.want {
			t.Errorf("DisplayWidth(%q) = %d, want %d", c.in, got, c.want)
		}
	}
	if got := Fit("abcdefgh", 5); got != "abcd…" {
		t.Errorf("Fit = %q", got)
	}
	if got := Fit("日本語です", 5); got != "日本…" {
		t.Errorf("Fit wide = %q", got)
	}
	if got := Fit("abc", 0); got != "abc" {
		t.Errorf("Fit unlimited = %q", got)
	}
	if got := Pad("ab", 4); got != "ab  " {
		t.Errorf("Pad = %q", got)
	}
}
