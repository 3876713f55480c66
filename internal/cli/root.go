package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/ooda-loop/ooda/internal/clock"
	"github.com/ooda-loop/ooda/internal/config"
)

// Version is the ooda version, set at build time with -ldflags.
var Version = "dev"

// globals are the flags every command accepts (CLI.md).
type globals struct {
	project string
	config  string
	now     string
	json    bool
	noColor bool

	stdin  io.Reader
	stdout io.Writer
	stderr io.Writer
}

// root returns the project root as an absolute path.
func (g *globals) root() (string, error) {
	p := g.project
	if p == "" {
		p = "."
	}
	return filepath.Abs(p)
}

// configPath is --config, else <project>/config.json.
func (g *globals) configPath() (string, error) {
	if g.config != "" {
		return filepath.Abs(g.config)
	}
	r, err := g.root()
	if err != nil {
		return "", err
	}
	return filepath.Join(r, "config.json"), nil
}

// loadConfig loads and validates the configuration.
func (g *globals) loadConfig() (*config.Config, error) {
	p, err := g.configPath()
	if err != nil {
		return nil, err
	}
	return config.Load(p)
}

// clock is the injected clock: --now, else OODA_NOW, else the real clock.
func (g *globals) clock() (clock.Clock, error) {
	v := g.now
	src := "--now"
	if v == "" {
		v, src = os.Getenv("OODA_NOW"), "OODA_NOW"
	}
	if v == "" {
		return clock.Real{}, nil
	}
	t, err := time.Parse(time.RFC3339, v)
	if err != nil {
		return nil, usageError(fmt.Errorf("%s: %q is not an RFC 3339 instant (e.g. 2026-01-02T15:04:05Z)", src, v))
	}
	return clock.NewFixed(t), nil
}

// human is where human-readable output goes: stderr under --json.
func (g *globals) human() io.Writer {
	if g.json {
		return g.stderr
	}
	return g.stdout
}

// printJSON writes the one JSON document of --json.
func (g *globals) printJSON(v any) error {
	enc := json.NewEncoder(g.stdout)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}

// Main runs the command line and returns the process exit code.
func Main(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	g := &globals{stdin: stdin, stdout: stdout, stderr: stderr}
	root := newRoot(g)
	root.SetArgs(args)
	root.SetIn(stdin)
	root.SetOut(stdout)
	root.SetErr(stderr)
	err := root.Execute()
	if isCobraUsage(err) {
		err = usageError(err)
	}
	code := exitCode(err)
	if err != nil {
		var ee *exitError
		if !errors.As(err, &ee) || ee.err != nil {
			msg := err.Error()
			if code == ExitUsage && !config.IsConfigError(err) && !strings.HasPrefix(msg, "ooda:") {
				msg = "ooda: " + msg
			}
			var ce *config.Error
			if errors.As(err, &ce) {
				if ce.NotFound {
					msg = "ooda: " + msg
				} else {
					msg = "ooda: invalid configuration: " + msg
				}
			}
			fmt.Fprintln(stderr, msg)
		}
	}
	return code
}

func newRoot(g *globals) *cobra.Command {
	root := &cobra.Command{
		Use:   "ooda",
		Short: "Run an OODA loop (Observe, Orient, Decide, Act, Reflect) over a software project",
		Long: `ooda operates a software project unattended. Each cycle it observes the
project's domains, orients from outcomes, scores which domain needs attention,
runs that domain's skill, and records everything as plain JSON under
agent/state/ beside the code. It stops itself safely: a HALT file, a lock,
crash recovery, breakers and a daily cost cap.

Exit codes: 0 success or a normal skip, 1 internal error, 2 usage or
configuration error, 3 halted.`,
		SilenceUsage:  true,
		SilenceErrors: true,
		Version:       Version,
	}
	pf := root.PersistentFlags()
	pf.StringVar(&g.project, "project", "", "project root (default: the current directory)")
	pf.StringVar(&g.config, "config", "", "read the configuration from this path instead of <project>/config.json")
	pf.StringVar(&g.now, "now", "", "use this RFC 3339 instant as \"now\" (also OODA_NOW; the flag wins)")
	pf.BoolVar(&g.json, "json", false, "print exactly one JSON document on stdout; human output goes to stderr")
	pf.BoolVar(&g.noColor, "no-color", false, "plain output (also when stdout is not a terminal or NO_COLOR is set)")
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return usageError(err) })
	root.AddCommand(newCycleCmd(g), newHaltCmd(g), newResumeCmd(g), newInitCmd(g), newConfigCmd(g), newDemoCmd(g), newSkillCmd(g))
	return root
}

// noArgs rejects positional arguments as a usage error.
func noArgs(cmd *cobra.Command, args []string) error {
	if len(args) > 0 {
		return usageError(fmt.Errorf("%s takes no arguments, got %q", cmd.CommandPath(), strings.Join(args, " ")))
	}
	return nil
}

// isCobraUsage recognises the errors cobra itself returns for a malformed
// command line, which must exit 2 like every other usage error.
func isCobraUsage(err error) bool {
	if err == nil {
		return false
	}
	var ee *exitError
	if errors.As(err, &ee) || config.IsConfigError(err) {
		return false
	}
	msg := err.Error()
	for _, p := range []string{"unknown command", "unknown flag", "unknown shorthand flag", "invalid argument", "accepts ", "requires at least", "requires at most", "flag needs an argument", "bad flag syntax", "required flag"} {
		if strings.HasPrefix(msg, p) {
			return true
		}
	}
	return false
}
