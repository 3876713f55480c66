package cli

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/ooda-loop/ooda/internal/clock"
	"github.com/ooda-loop/ooda/internal/config"
	"github.com/ooda-loop/ooda/internal/dashboard"
	"github.com/ooda-loop/ooda/internal/notify"
	"github.com/ooda-loop/ooda/internal/safetext"
	"github.com/ooda-loop/ooda/internal/secret"
	"github.com/ooda-loop/ooda/internal/state"
)

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

	// The project, found once per run (see discover).
	found    *discovery
	foundErr error
	noted    bool
}

// discover finds the project root once: --project, else (without
// --config, which names the file so there is nothing to search) the
// nearest directory from the working one upwards holding an ooda
// config.json, else the working directory.
func (g *globals) discover() (discovery, error) {
	if g.found != nil || g.foundErr != nil {
		if g.foundErr != nil {
			return discovery{}, g.foundErr
		}
		return *g.found, nil
	}
	var d discovery
	var err error
	if g.project != "" || g.config != "" {
		p := g.project
		if p == "" {
			p = "."
		}
		var abs string
		abs, err = filepath.Abs(p)
		d = discovery{Dir: abs, Found: true, From: "."}
	} else {
		var wd string
		if wd, err = filepath.Abs("."); err == nil {
			d, err = findProject(wd)
		}
	}
	if err != nil {
		g.foundErr = err
		return discovery{}, err
	}
	g.found = &d
	return d, nil
}

// root returns the project root as an absolute path. The first time it
// is found above the working directory, it says so on stderr, once: a
// command run from a subdirectory works on the project its files belong
// to, and the user must be able to see which.
func (g *globals) root() (string, error) {
	d, err := g.discover()
	if err != nil {
		return "", err
	}
	if d.From != "." && !g.noted {
		g.noted = true
		fmt.Fprintln(g.stderr, safetext.Text(projectNote(d)))
	}
	return d.Dir, nil
}

// initRoot is the directory `ooda init` creates the project in:
// --project, else the working directory, never a directory found above it.
func (g *globals) initRoot() (string, error) {
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
	d, err := g.discover()
	if err != nil {
		return "", err
	}
	return filepath.Join(d.Dir, configName), nil
}

// loadConfig loads and validates the configuration.
func (g *globals) loadConfig() (*config.Config, error) {
	p, err := g.configPath()
	if err != nil {
		return nil, err
	}
	root, err := g.root()
	if err != nil {
		return nil, err
	}
	// Configured paths must stay inside --project, wherever the config is.
	cfg, err := config.LoadProject(p, root)
	if err != nil {
		return nil, err
	}
	// Unknown keys are ignored, which the user must hear about on every
	// command, not only `ooda config validate`; stdout stays the
	// command's own (a table, or one JSON document with --json).
	for _, w := range cfg.ShownWarnings() {
		fmt.Fprintf(g.stderr, "[WARN] %s\n", safetext.Text(w))
	}
	return cfg, nil
}

// store is the project's state store, reading within the configured
// limit (safety.max_read_mib).
func (g *globals) store(cfg *config.Config) (*state.Store, error) {
	root, err := g.root()
	if err != nil {
		return nil, err
	}
	return state.ForConfig(root, cfg), nil
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

// printJSON writes the one JSON document of --json. The known secrets are
// masked (in their JSON-escaped form too), then every character a terminal
// acts on is escaped: encoding/json escapes the C0 controls, U+2028 and
// U+2029 only, and safetext.JSON the rest (DEL, C1, bidirectional
// controls). Masking comes first, so a secret is recognised as it was.
func (g *globals) printJSON(v any) error {
	b, err := dashboard.EncodeJSON(v)
	if err != nil {
		return err
	}
	_, err = g.stdout.Write(b)
	return err
}

// registerSecrets marks the variables cfg's notifications reference as
// credentials before anything runs a skill, so no child sees them and no
// output shows their values.
func registerSecrets(cfg *config.Config) {
	if cfg != nil {
		notify.RegisterSecrets(cfg.Notifications)
	}
}

// registerRawSecrets does what registerSecrets does from the configuration
// file as it is, before it is validated: a config that does not validate
// (a negative weight elsewhere) still names its notification secrets, and
// the commands that work without a valid config (halt, resume, validate)
// print text that may carry their values. Whatever cannot be read is
// skipped; the commands report it themselves.
func (g *globals) registerRawSecrets() {
	p, err := g.configPath()
	if err != nil {
		return
	}
	raw, err := config.ReadRegular(p, config.MaxConfigBytes)
	if err != nil {
		return
	}
	for _, n := range notificationValues(raw) {
		notify.RegisterSecrets(n)
	}
}

// notificationValues returns every top-level "notifications" value of a
// configuration document, reading it as a stream: a syntax error, a wrong
// type or a duplicate key after the value does not hide it. Keys match
// without regard to case, as encoding/json's do, and every duplicate is
// returned, since registering too much only masks more.
func notificationValues(raw []byte) []json.RawMessage {
	raw = bytes.TrimPrefix(raw, []byte("\xef\xbb\xbf"))
	// Every command reads them, and a configuration of a thousand domains
	// is mostly its domains: a valid document is split at its top-level
	// keys without decoding their values (the stream below would scan
	// each value twice and copy it); anything else is read as a stream.
	if out, ok := notificationValuesOfValid(raw); ok {
		return out
	}
	return notificationValuesStream(raw)
}

// notificationValuesStream is notificationValues reading raw as a stream.
func notificationValuesStream(raw []byte) []json.RawMessage {
	dec := json.NewDecoder(bytes.NewReader(raw))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil
	}
	var out []json.RawMessage
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			break
		}
		key, _ := t.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			break
		}
		if strings.EqualFold(key, "notifications") {
			out = append(out, v)
		}
	}
	return out
}

// notificationValuesOfValid is notificationValues for raw that is one
// valid JSON object whose top-level keys have no escape (what the stream
// would return, value for value); ok is false for any other raw.
func notificationValuesOfValid(raw []byte) (out []json.RawMessage, ok bool) {
	if !json.Valid(raw) {
		return nil, false
	}
	i := skipJSONSpace(raw, 0)
	if i >= len(raw) || raw[i] != '{' {
		return nil, false
	}
	i = skipJSONSpace(raw, i+1)
	for i < len(raw) && raw[i] != '}' {
		kend := jsonValueEnd(raw, i)
		key := raw[i+1 : kend-1]
		if bytes.IndexByte(key, '\\') >= 0 {
			return nil, false
		}
		i = skipJSONSpace(raw, kend)
		i = skipJSONSpace(raw, i+1) // the colon
		vend := jsonValueEnd(raw, i)
		if strings.EqualFold(string(key), "notifications") {
			out = append(out, append(json.RawMessage(nil), raw[i:vend]...))
		}
		i = skipJSONSpace(raw, vend)
		if i < len(raw) && raw[i] == ',' {
			i = skipJSONSpace(raw, i+1)
		}
	}
	return out, true
}

func skipJSONSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// jsonValueEnd is the index just past the value starting at b[i], in a
// document json.Valid accepted.
func jsonValueEnd(b []byte, i int) int {
	switch b[i] {
	case '"':
		for j := i + 1; j < len(b); j++ {
			switch b[j] {
			case '\\':
				j++
			case '"':
				return j + 1
			}
		}
	case '{', '[':
		depth := 0
		for j := i; j < len(b); j++ {
			switch b[j] {
			case '"':
				j = jsonValueEnd(b, j) - 1
			case '{', '[':
				depth++
			case '}', ']':
				if depth--; depth == 0 {
					return j + 1
				}
			}
		}
	default:
		j := i
		for j < len(b) && !strings.ContainsRune(",}] \t\n\r", rune(b[j])) {
			j++
		}
		return j
	}
	return len(b)
}

// Main runs the command line and returns the process exit code.
//
// Everything printed goes through a secret.Writer, so no output carries
// the value of a known secret whatever printed it (docs/security.md).
func Main(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	return mainWith(args, stdin, stdout, stderr, calledCommand(args))
}

// mainWith is Main with the command tree built for called (see newRootFor).
func mainWith(args []string, stdin io.Reader, stdout, stderr io.Writer, called string) int {
	sout, serr := secret.NewWriter(stdout), secret.NewWriter(stderr)
	defer serr.Flush()
	defer sout.Flush()
	stdout, stderr = sout, serr
	g := &globals{stdin: stdin, stdout: stdout, stderr: stderr}
	root := newRootFor(g, called)
	root.SetArgs(args)
	root.SetIn(stdin)
	root.SetOut(stdout)
	root.SetErr(stderr)
	err := root.Execute()
	if isCobraUsage(err) {
		err = usageError(oneLineSuggestion(err))
	}
	code := exitCode(err)
	if err != nil {
		var ee *exitError
		if !errors.As(err, &ee) || ee.err != nil {
			msg := errorText(err)
			if code == ExitUsage && !config.IsConfigError(err) && !strings.HasPrefix(msg, "ooda:") {
				msg = "ooda: " + msg
			}
			var ce *config.Error
			if errors.As(err, &ce) {
				if ce.NotFound {
					msg = "ooda: " + msg
					if g.found != nil && notFoundHint(*g.found) != "" {
						msg += "\n" + safetext.Text(notFoundHint(*g.found))
					}
				} else {
					msg = "ooda: invalid configuration: " + msg
				}
			}
			fmt.Fprintln(stderr, msg)
		}
	}
	return code
}

// errorText is the message of err as printed: secrets masked and control
// characters escaped, so a value quoted from a state file or a report
// cannot forge a line or drive the terminal. The lines of a message ooda
// builds from several (a configuration's list of problems, joined errors)
// stay lines.
func errorText(err error) string {
	var ce *config.Error
	if errors.As(err, &ce) && len(ce.Issues) > 1 && err.Error() == ce.Error() {
		var b strings.Builder
		fmt.Fprintf(&b, "%s: %d problems:", safetext.Text(ce.File), len(ce.Issues))
		for _, is := range ce.Issues {
			p := is.Path
			if p == "" {
				p = "(root)"
			}
			fmt.Fprintf(&b, "\n  %s: %s", safetext.Text(p), safetext.Text(is.Reason))
		}
		return b.String()
	}
	return safetext.Error(err)
}

// commands are the top-level commands, in the order they are added, each
// with its name (the first word of its Use; none has an alias) and what
// builds it.
var commands = []struct {
	name  string
	build func(*globals) *cobra.Command
}{
	{"cycle", newCycleCmd}, {"halt", newHaltCmd}, {"resume", newResumeCmd}, {"init", newInitCmd},
	{"config", newConfigCmd}, {"demo", newDemoCmd}, {"skill", newSkillCmd}, {"version", newVersionCmd},
	{"status", newStatusCmd}, {"run", newRunCmd}, {"doctor", newDoctorCmd}, {"sim", newSimCmd},
	{"dashboard", newDashboardCmd},
}

// calledCommand returns the name of the top-level command that cobra will
// run for args, or "" when the whole tree is needed: no command (the
// root's help and --version), help and completion (which describe every
// command), or a name no command has (cobra suggests the nearest).
//
// Building one command instead of all thirteen, with their flag sets,
// spares a process that runs a command most of the tree: 269 allocations
// and 49 KB become 38 and 5 KB (BenchmarkNewRootFor), and about fifteen
// page faults of fresh heap. What cobra does with a command line depends
// on the other top-level commands only where this returns "": it finds
// the command by the first argument left once the root's flags are
// stripped (stripFlags in cobra's command.go, which this follows step for
// step; it runs before cobra defines --help and --version, so these are
// taken to have a value), and runs it with its own flags, subcommands and
// help, none of which name its siblings (lazytree_test.go holds this to
// cobra's own search and output).
func calledCommand(args []string) string {
	for len(args) > 0 {
		s := args[0]
		args = args[1:]
		switch {
		case s == "--":
			return ""
		case strings.HasPrefix(s, "--") && !strings.Contains(s, "=") && s != "--json" && s != "--no-color":
			// A flag other than the root's booleans, followed by its value.
			fallthrough
		case strings.HasPrefix(s, "-") && !strings.Contains(s, "=") && len(s) == 2:
			if len(args) <= 1 {
				return ""
			}
			args = args[1:]
		case s != "" && !strings.HasPrefix(s, "-"):
			for _, c := range commands {
				if c.name == s {
					return s
				}
			}
			return ""
		}
	}
	return ""
}

// newRootFor builds the command tree with only the top-level command
// named called, or every command when called is "" (see calledCommand).
func newRootFor(g *globals, called string) *cobra.Command {
	root := &cobra.Command{
		Use:   "ooda",
		Short: "Run an OODA loop (Observe, Orient, Decide, Act, Reflect) over a software project",
		Long: `ooda operates a software project unattended. Each cycle it observes the
project's domains, orients from outcomes, scores which domain needs attention,
runs that domain's skill, and records everything as plain JSON under
agent/state/ beside the code. It stops itself safely: a HALT file, a lock,
crash recovery, breakers and a daily cost cap.

Every command works on the project of the current directory: the nearest
directory, from it upwards to the repository root, holding an ooda
config.json (as git finds its repository), else the current directory;
--project DIR names it instead.

Exit codes: 0 success or a normal skip, 1 internal error, 2 usage or
configuration error, 3 halted, 4 the cycle was recorded but its skill failed.`,
		SilenceUsage:  true,
		SilenceErrors: true,
		Version:       currentVersion().firstLine(),
	}
	root.SetVersionTemplate("{{.Version}}\n")
	pf := root.PersistentFlags()
	pf.StringVar(&g.project, "project", "", "project root (default: the nearest directory from the current one upwards holding an ooda config.json, else the current directory)")
	pf.StringVar(&g.config, "config", "", "read the configuration from this path instead of <project>/config.json")
	pf.StringVar(&g.now, "now", "", "use this RFC 3339 instant as \"now\" (also OODA_NOW; the flag wins)")
	pf.BoolVar(&g.json, "json", false, "print exactly one JSON document on stdout; human output goes to stderr")
	pf.BoolVar(&g.noColor, "no-color", false, "plain output (also when stdout is not a terminal or NO_COLOR is set)")
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return usageError(err) })
	// Before any command prints, whether or not its configuration is valid.
	root.PersistentPreRun = func(*cobra.Command, []string) { g.registerRawSecrets() }
	for _, c := range commands {
		if called == "" || c.name == called {
			root.AddCommand(c.build(g))
		}
	}
	return root
}

// noArgs rejects positional arguments as a usage error. A command made
// of subcommands (config, skill) given a word it does not know says so,
// with the nearest of its subcommands, as the root does for its own.
func noArgs(cmd *cobra.Command, args []string) error {
	if len(args) == 0 {
		return nil
	}
	if cmd.HasAvailableSubCommands() {
		if cmd.SuggestionsMinimumDistance <= 0 {
			// The distance cobra's own suggestions use.
			cmd.SuggestionsMinimumDistance = 2
		}
		return usageError(fmt.Errorf("unknown command %q for %q%s", args[0], cmd.CommandPath(), didYouMean(cmd.SuggestionsFor(args[0]))))
	}
	return usageError(fmt.Errorf("%s takes no arguments, got %q", cmd.CommandPath(), strings.Join(args, " ")))
}

// didYouMean is "; did you mean "a"?" (or "a" or "b") for the names
// suggested, "" for none.
func didYouMean(names []string) string {
	if len(names) == 0 {
		return ""
	}
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = strconv.Quote(n)
	}
	return "; did you mean " + strings.Join(q, " or ") + "?"
}

// cobraSuggestions is how cobra ends an unknown command's message with
// the commands whose names are near it, one per line after a tab.
const cobraSuggestions = "\n\nDid you mean this?\n"

// oneLineSuggestion rewrites cobra's unknown-command error, whose
// suggestions take lines of their own, as one line ending "; did you mean
// "cycle"?": every error is printed with its control characters escaped
// (errorText), which showed the suggestion as a literal "\n\nDid you
// mean this?\n\tcycle\n". Any other error is returned as it is.
func oneLineSuggestion(err error) error {
	msg := err.Error()
	head, rest, ok := strings.Cut(msg, cobraSuggestions)
	if !ok || !strings.HasPrefix(msg, "unknown command ") {
		return err
	}
	var names []string
	for _, l := range strings.Split(rest, "\n") {
		if n := strings.TrimSpace(l); n != "" {
			names = append(names, n)
		}
	}
	return errors.New(head + didYouMean(names))
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
