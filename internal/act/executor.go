package act

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"time"

	"github.com/ooda-loop/ooda/internal/config"
	"github.com/ooda-loop/ooda/internal/proc"
	"github.com/ooda-loop/ooda/internal/secret"
)

// Request is one skill invocation.
type Request struct {
	Skill      string
	Domain     string
	Cycle      int
	ProjectDir string
	Now        time.Time
	// Env holds the OODA_* variables of the invocation (SPEC-NOTES §3).
	Env map[string]string
	// Timeout is the default timeout (safety.lock_timeout_minutes) when the
	// executor has none of its own.
	Timeout  time.Duration
	HaltFile string // absolute path watched while the skill runs
	Output   io.Writer
	// OnStart receives the process group of a skill that runs as a
	// process, as soon as it starts.
	OnStart func(pgid int)
	// Config is the project's validated configuration: a built-in skill
	// reads its settings there (test_command, health_endpoints, …).
	Config *config.Config
	// Runner starts the processes a built-in skill runs (through a
	// Command, so they are contained, timed and stopped on HALT as a
	// command skill is); nil means the real runner.
	Runner proc.Runner
}

// Response is what an execution produced.
type Response struct {
	OK       bool
	Error    string
	TimedOut bool
	Halted   bool
	// Canceled is set when the cycle itself was interrupted (a signal).
	Canceled bool
	// NotStarted is set when the process could not be started at all (no
	// such file, not executable); Error says why, and so does the output.
	NotStarted bool
	ExitCode   int
	Elapsed    time.Duration
	// Executor describes what ran, e.g. "command ./scan.sh" or "builtin health".
	Executor string
	// Warnings are problems that did not stop the run, such as an env
	// value referencing a credential the skill may not see.
	Warnings []string
	// Survivors are processes the skill started that were still running
	// after it was stopped and killed (docs/halt.md).
	Survivors []int
}

// Executor runs one skill.
type Executor interface {
	Execute(ctx context.Context, r Request) Response
	Describe() string
}

// Registry resolves executors (SPEC-NOTES §3): config.skills first, then a
// built-in of the same name, then config.agent.command, else none.
type Registry struct {
	Builtins map[string]Executor
	Runner   proc.Runner
}

// WiredOnly is implemented by a built-in skill that runs only where a
// config.skills entry names it ({"builtin": NAME}), never by a skill of
// the same name: dev-cycle shares its name with the original OODA loop's
// own /dev-cycle skill, which a project that switched keeps running
// through agent.command.
type WiredOnly interface {
	WiredOnly() bool
}

// NewRegistry returns a registry using the real process runner.
func NewRegistry() *Registry {
	return &Registry{Builtins: map[string]Executor{}, Runner: proc.Exec{}}
}

// Register adds a built-in skill under its name (with or without slash).
func (r *Registry) Register(name string, e Executor) { r.Builtins[config.SkillKey(name)] = e }

// Names lists the built-in skills.
func (r *Registry) Names() []string {
	out := make([]string, 0, len(r.Builtins))
	for k := range r.Builtins {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// isWiredOnly reports whether e runs only where a skills entry names it.
func isWiredOnly(e Executor) bool {
	w, ok := e.(WiredOnly)
	return ok && w.WiredOnly()
}

// ErrNoExecutor is returned by Resolve when nothing can run a skill.
type ErrNoExecutor struct{ Skill string }

func (e *ErrNoExecutor) Error() string { return "no executor for /" + config.SkillKey(e.Skill) }

// Resolve finds the executor of skill.
func (r *Registry) Resolve(cfg *config.Config, skill string) (Executor, error) {
	// A skill name reaches argv through {skill}/{skill_name} and names
	// skills/<name>/: whatever its source, it must be a plain name.
	if err := config.ValidSkillName(skill); err != nil {
		return nil, fmt.Errorf("skill %q: %w", skill, err)
	}
	key := config.SkillKey(skill)
	for _, n := range cfg.SkillNames() {
		if config.SkillKey(n) != key {
			continue
		}
		spec := cfg.Skills[n]
		if spec.Builtin != "" {
			b, ok := r.Builtins[config.SkillKey(spec.Builtin)]
			if !ok {
				return nil, fmt.Errorf("skill /%s: unknown builtin %q", key, spec.Builtin)
			}
			return b, nil
		}
		t, _ := spec.TimeoutDuration()
		r.prepare()
		return &Command{Argv: spec.Command, Timeout: t, Env: spec.Env, Policy: spec.EnvPolicy, Runner: r.Runner, Source: "skills." + n}, nil
	}
	if b, ok := r.Builtins[key]; ok && !isWiredOnly(b) {
		return b, nil
	}
	if len(cfg.Agent.Command) > 0 {
		argv := make([]string, len(cfg.Agent.Command))
		for i, a := range cfg.Agent.Command {
			argv[i] = strings.NewReplacer("{skill}", "/"+key, "{skill_name}", key).Replace(a)
		}
		var t time.Duration
		if cfg.Agent.Timeout != "" {
			t, _ = time.ParseDuration(cfg.Agent.Timeout)
		}
		r.prepare()
		return &Command{Argv: argv, Timeout: t, Env: cfg.Agent.Env, Policy: cfg.Agent.EnvPolicy, Runner: r.Runner, Agent: true, Source: "agent"}, nil
	}
	return nil, &ErrNoExecutor{Skill: skill}
}

// prepare lets the real runner get ready for the process a resolved
// command is about to start (proc.Prepare): a skill is resolved before the
// cycle writes its run directory and lens snapshot, and the runner's
// one-time set-up then overlaps with those writes instead of following
// them. Containment is not changed: the run still does every step itself,
// and finds them done.
func (r *Registry) prepare() {
	if _, ok := r.Runner.(proc.Exec); ok {
		proc.Prepare()
	}
}

// Command runs a skill as an external process: argv (never a shell string),
// in the project root, in its own process group, with the OODA_* environment.
//
// The process starts with ooda's environment minus ooda's credentials
// (secret.ChildEnv), except those Policy lets through; then Env, whose
// values may reference variables of that same filtered environment as
// $NAME; then the OODA_* variables of the request.
type Command struct {
	Argv    []string
	Timeout time.Duration
	Env     map[string]string
	// Policy says which credentials the process sees (env_passthrough,
	// inherit_env).
	Policy config.EnvPolicy
	Runner proc.Runner
	Agent  bool
	// Source is the configuration entry, e.g. "skills./scan" or "agent",
	// named in warnings.
	Source string
}

// Describe names the command for logs and `ooda skill list`.
func (c *Command) Describe() string {
	kind := "command"
	if c.Agent {
		kind = "agent"
	}
	b, _ := json.Marshal(c.Argv)
	return kind + " " + string(b)
}

// Execute runs the command.
func (c *Command) Execute(ctx context.Context, r Request) Response {
	timeout := c.Timeout
	if timeout <= 0 {
		timeout = r.Timeout
	}
	env, warnings := c.environ()
	if len(warnings) > 0 && r.Output != nil {
		// In the run log, where the author of the skill looks first.
		for _, w := range warnings {
			fmt.Fprintf(r.Output, "ooda: warning: %s\n", w)
		}
	}
	rk := make([]string, 0, len(r.Env))
	for k := range r.Env {
		rk = append(rk, k)
	}
	sort.Strings(rk)
	for _, k := range rk {
		env = append(env, k+"="+r.Env[k])
	}
	res := c.Runner.Run(ctx, proc.Spec{
		Argv: c.Argv, Dir: r.ProjectDir, Env: env, Timeout: timeout,
		Output: r.Output, HaltFile: r.HaltFile, OnStart: r.OnStart,
	})
	out := Response{OK: res.OK(), ExitCode: res.ExitCode, Elapsed: res.Elapsed, TimedOut: res.TimedOut, Halted: res.Halted, Canceled: res.Canceled, Executor: c.Describe(), Warnings: warnings, Survivors: res.Survivors}
	switch {
	case res.StartErr != nil:
		out.NotStarted = true
		out.Error = fmt.Sprintf("cannot start %s: %v", c.Argv[0], res.StartErr)
		if h := startHint(res.StartErr, c.Argv[0], r.ProjectDir); h != "" {
			out.Error += " (" + h + ")"
		}
		if r.Output != nil {
			// Nothing ran, so nothing else will be in the run log: the
			// reason is what its reader needs.
			source := c.Source
			if source == "" {
				source = "command"
			}
			argv, _ := json.Marshal(c.Argv)
			fmt.Fprintf(r.Output, "ooda: %s\nooda: the command is %s (%s.command)\n", out.Error, argv, source)
		}
	case res.TimedOut:
		out.Error = fmt.Sprintf("TIMEOUT: /%s exceeded %s", config.SkillKey(r.Skill), timeout)
	case res.Halted:
		out.Error = "stopped: HALT file appeared during execution"
	case res.Canceled:
		out.Error = "stopped: cycle canceled"
	case !res.OK():
		out.Error = fmt.Sprintf("exit status %d", res.ExitCode)
	}
	return out
}

// environ builds the process environment without the request's OODA_*
// variables. An env value is expanded against the filtered environment, so
// "$GITHUB_TOKEN" in config.json cannot hand a skill a credential its
// policy withholds: it expands to empty, with a warning naming the entry.
func (c *Command) environ() ([]string, []string) {
	env := secret.ChildEnv(os.Environ(), c.Policy.EnvPassthrough, c.Policy.InheritEnv)
	visible := make(map[string]string, len(env))
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		visible[k] = v
	}
	keys := make([]string, 0, len(c.Env))
	for k := range c.Env {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	source := c.Source
	if source == "" {
		source = "env"
	}
	var warnings []string
	for _, k := range keys {
		v := os.Expand(c.Env[k], func(name string) string {
			val, ok := visible[name]
			if _, set := os.LookupEnv(name); !ok && set && secret.IsCredential(name) {
				warnings = append(warnings, fmt.Sprintf("%s.env.%s: $%s is a credential not in env_passthrough; it expands to empty", source, k, name))
			}
			return val
		})
		env = append(env, k+"="+v)
	}
	return env, warnings
}
