// Package skills holds the skills built into ooda, which run in-process
// without any external command.
package skills

import (
	"context"
	"time"

	"github.com/ooda-loop/ooda/internal/act"
	"github.com/ooda-loop/ooda/internal/config"
	"github.com/ooda-loop/ooda/internal/contract"
	"github.com/ooda-loop/ooda/internal/state"
)

// builtins are the built-in skills by name; each skill's file adds its
// own in an init function, so that adding a skill touches no other file.
var builtins = map[string]act.Executor{"noop": Noop{}}

// register adds a built-in skill with its contract (phase, read_only,
// cost): the contract a skill running it has unless the configuration or
// the project gives one. A name taken twice is a programming error.
func register(name string, e act.Executor, c ...contract.Contract) {
	if _, dup := builtins[name]; dup {
		panic("skills: built-in " + name + " registered twice")
	}
	builtins[name] = e
	w, ok := e.(act.WiredOnly)
	wired := ok && w.WiredOnly()
	for _, k := range c {
		contract.RegisterBuiltin(name, k, !wired)
	}
}

// builtinContract is the contract of a built-in skill: its phase, whether
// it only reads, and its cost per run (0: it runs no language model).
func builtinContract(phase, description string, readOnly bool) contract.Contract {
	zero := 0.0
	return contract.Contract{OODAPhase: phase, Description: description,
		Safety: contract.Safety{ReadOnly: &readOnly, CostLimitUSD: &zero}}
}

// Registry returns an executor registry holding every built-in skill.
func Registry() *act.Registry {
	r := act.NewRegistry()
	for name, e := range builtins {
		r.Register(name, e)
	}
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

// builtinEnv is what a built-in starts from: the configuration (its
// defaults when the request carries none), its instant (the cycle's, else
// the clock's), a store bounded by safety.max_read_mib, and the paths the
// engine gave for the domain state file and the report.
type builtinEnv struct {
	cfg                   *config.Config
	now                   time.Time
	store                 *state.Store
	statePath, reportPath string
}

func newBuiltinEnv(r act.Request) builtinEnv {
	cfg := r.Config
	if cfg == nil {
		cfg = config.Default()
	}
	now := r.Now
	if now.IsZero() {
		now = time.Now()
	}
	return builtinEnv{cfg: cfg, now: now, store: state.ForConfig(r.ProjectDir, cfg), statePath: r.Env["OODA_STATE_FILE"], reportPath: r.Env["OODA_REPORT"]}
}

// withRequestTimeout bounds ctx by the request's default timeout, when it
// has one.
func withRequestTimeout(ctx context.Context, r act.Request) (context.Context, context.CancelFunc) {
	if r.Timeout > 0 {
		return context.WithTimeout(ctx, r.Timeout)
	}
	return ctx, func() {}
}
