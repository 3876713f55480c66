package engine

import (
	"github.com/ooda-loop/ooda/internal/record"
	"github.com/ooda-loop/ooda/internal/state"
)

// rememberWeek is the memory cascade of 6-C4 and the lens of 5-E; it is
// filled in as those steps land.
func (c *cycle) rememberWeek(f *record.Facts, log []state.DecisionEntry, conf state.Confidence) {}

// saveMemory writes what rememberWeek changed.
func (c *cycle) saveMemory() error { return nil }
