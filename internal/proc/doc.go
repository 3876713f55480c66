// Package proc is the engine's only way to start a process.
//
// Everything the engine runs (skills, judges, capture commands, git) goes
// through a Runner, so the rules for outside processes live in one place and
// tests of the engine can replace them with a fake:
//
//   - a command is an argv, never a shell string, so state data can never be
//     parsed as shell syntax;
//   - the environment is exactly Spec.Env, so a skill sees only what the
//     engine chose to give it;
//   - the process runs in its own process group and, on Linux, in a cgroup
//     of its own when one can be created, else under this process as child
//     subreaper; when it has to be stopped (timeout, HALT file,
//     cancellation) everything it started is stopped, even what left the
//     group with setsid or a double fork: SIGTERM, then SIGKILL after a
//     grace period, and Run returns only once they have all ended (what
//     SIGKILL could not end is reported in Result.Survivors). A skill is
//     free to start helpers of its own; stopping the skill stops them too;
//   - stdout and stderr are merged into one stream in the order they were
//     written, and TailBuffer keeps its last bytes for the run log.
//
// When the direct child exits on its own, nothing more is done to what it
// started: a background process it left behind is its own business (for
// example a daemon a skill starts on purpose), and is only moved out of the
// run's cgroup. Run only stops reading its output after Spec.OutputWait so
// that it never waits on such a process. docs/halt.md describes the
// containment and its limits.
package proc
