package main

import "testing"

func TestTotal(t *testing.T) {
	items := []Item{{Name: "tea", PriceCents: 350, Qty: 2}, {Name: "cake", PriceCents: 420, Qty: 1}}
	if got := Total(items); got != 1120 {
		t.Errorf("Total = %d, want 1120", got)
	}
}

func TestTotalEmpty(t *testing.T) {
	if got := Total(nil); got != 0 {
		t.Errorf("Total(nil) = %d, want 0", got)
	}
}
