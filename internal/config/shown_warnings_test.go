package config

import (
	"fmt"
	"strings"
	"testing"
)

// A config with many misspelt keys prints a bounded number of warnings
// per command, then one line counting the rest.
func TestShownWarnings_Bounded(t *testing.T) {
	c := &Config{}
	for i := 0; i < 250; i++ {
		c.Warnings = append(c.Warnings, Warning{File: "config.json", Path: fmt.Sprintf("/domains/d/k%d", i), Reason: "unknown key"})
	}
	got := c.ShownWarnings()
	if len(got) != MaxShownWarnings+1 || !strings.HasPrefix(got[MaxShownWarnings], "240 more configuration warning(s)") {
		t.Fatalf("%d lines, last %q", len(got), got[len(got)-1])
	}
	c.Warnings = c.Warnings[:3]
	if got := c.ShownWarnings(); len(got) != 3 || !strings.Contains(got[0], "/domains/d/k0") {
		t.Fatalf("%q", got)
	}
}
