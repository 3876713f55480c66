// Package skills holds the skills built into ooda, which run in-process
// without any external command.
package skills

import (
	"context"
	"time"

	"github.com/ooda-loop/ooda/internal/act"
)

// Registry returns an executor registry holding every built-in skill.
func Registry() *act.Registry {
	r := act.NewRegistry()
	r.Register("noop", Noop{})
	return r
}

// Noop is the built-in "noop" skill: it succeeds at once and reports no
// output. It exists to wire a domain before its real skill is written and
// to measure the engine's own overhead.
type Noop struct{}

// Describe names the executor.
func (Noop) Describe() string { return "builtin noop" }

// Execute does nothing, successfully.
func (Noop) Execute(_ context.Context, _ act.Request) act.Response {
	start := time.Now()
	return act.Response{OK: true, Executor: "builtin noop", Elapsed: time.Since(start)}
}
