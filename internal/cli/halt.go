package cli

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/ooda-loop/ooda/internal/config"
	"github.com/ooda-loop/ooda/internal/safetext"
	"github.com/ooda-loop/ooda/internal/secret"
	"github.com/ooda-loop/ooda/internal/state"
)

func newHaltCmd(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "halt [REASON...]",
		Short: "Create the HALT file: every later cycle stops before doing any work",
		Long: `Create the HALT file (safety.halt_file, default agent/safety/HALT) with the
reason and a UTC timestamp. Every cycle checks it first and stops with exit 3
while it exists; a running skill is stopped within seconds. Remove it with
'ooda resume'. Run from a subdirectory, both act on the project found
upwards (the nearest directory holding an ooda config.json), never on a
HALT file of the subdirectory's own.`,
		RunE: func(cmd *cobra.Command, args []string) error { return runHalt(g, strings.Join(args, " ")) },
	}
}

func newResumeCmd(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "resume",
		Short: "Remove the HALT file so cycles run again",
		Args:  noArgs,
		RunE:  func(cmd *cobra.Command, _ []string) error { return runResume(g) },
	}
}

// haltFile resolves the HALT file. The HALT switch must work even when the
// configuration is broken: then the default path is used, with a warning.
func haltFile(g *globals) (string, *state.Store, error) {
	root, err := g.root()
	if err != nil {
		return "", nil, err
	}
	st := state.New(root)
	cfg, err := g.loadConfig()
	if err != nil {
		var ce *config.Error
		if e, ok := err.(*config.Error); ok {
			ce = e
		}
		if ce == nil {
			return "", nil, err
		}
		def := config.Default().Safety.HaltFile
		if d, derr := g.discover(); derr == nil && ce.NotFound && notFoundHint(d) != "" {
			// A HALT file where no project is stops nothing: say where
			// the search looked, so a halt meant for a project reaches it.
			// One warning: the search says that no config was found.
			fmt.Fprintf(g.stderr, "ooda: warning: %s; using the default HALT file %s\n", safetext.Text(notFoundHint(d)), def)
			return def, st, nil
		}
		fmt.Fprintf(g.stderr, "ooda: warning: %s; using the default HALT file %s\n", errorText(err), def)
		return def, st, nil
	}
	return cfg.Safety.HaltFile, st, nil
}

func runHalt(g *globals, reason string) error {
	clk, err := g.clock()
	if err != nil {
		return err
	}
	hf, st, err := haltFile(g)
	if err != nil {
		return err
	}
	if strings.TrimSpace(reason) == "" {
		reason = "Manual halt (ooda halt)."
	}
	if err := st.WriteHalt(hf, reason, clk.Now()); err != nil {
		return err
	}
	if g.json {
		return g.printJSON(map[string]any{"halt": map[string]any{"active": true, "reason": reason, "file": st.Path(hf)}})
	}
	fmt.Fprintf(g.stdout, "HALT file created at %s: %s\nEvery cycle now stops before doing any work. Resume with: ooda resume\n", safetext.Text(st.Path(hf)), safetext.Text(reason))
	return nil
}

func runResume(g *globals) error {
	hf, st, err := haltFile(g)
	if err != nil {
		return err
	}
	_, prev := st.HaltExists(hf)
	removed, err := st.RemoveHalt(hf)
	if err != nil {
		return err
	}
	if g.json {
		return g.printJSON(map[string]any{"halt": map[string]any{"active": false, "removed": removed, "previous_reason": strp(prev), "file": st.Path(hf)}})
	}
	if removed {
		fmt.Fprintf(g.stdout, "HALT file removed (%s). Cycles will run again.\n%s", safetext.Text(st.Path(hf)), quoteHalt(prev))
	} else {
		fmt.Fprintf(g.stdout, "No HALT file at %s; nothing to resume.\n", safetext.Text(st.Path(hf)))
	}
	return nil
}

// quoteHalt shows a former HALT file under "It said:", one indented line
// per line of it, each masked and escaped. The content was written by
// whoever created the file (a script, a breaker quoting a report), so no
// line of it may start at the left margin, where it could pass for a line
// of ooda's own ("[Record] …").
func quoteHalt(content string) string {
	content = strings.TrimRight(secret.Redact(content), "\n")
	if content == "" {
		return "It said nothing.\n"
	}
	var b strings.Builder
	b.WriteString("It said:\n")
	for _, line := range strings.Split(content, "\n") {
		b.WriteString("  ")
		b.WriteString(safetext.Escape(line))
		b.WriteString("\n")
	}
	return b.String()
}
