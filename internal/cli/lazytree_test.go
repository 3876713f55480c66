package cli

import (
	"bytes"
	"io"
	"math/rand"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

func testGlobals() *globals {
	return &globals{stdin: strings.NewReader(""), stdout: io.Discard, stderr: io.Discard}
}

// Each entry of commands builds the command of its name, and no other
// command is added to the root.
func TestCommandsAreNamedAsBuilt(t *testing.T) {
	for _, c := range commands {
		if got := c.build(testGlobals()).Name(); got != c.name {
			t.Errorf("commands entry %q builds %q", c.name, got)
		}
	}
	var names []string
	for _, c := range newRootFor(testGlobals(), "").Commands() {
		names = append(names, c.Name())
	}
	for _, c := range commands {
		if !slices.Contains(names, c.name) {
			t.Errorf("%q is not in the whole tree %v", c.name, names)
		}
	}
	if len(names) != len(commands) {
		t.Errorf("the whole tree has %v, commands has %d entries", names, len(commands))
	}
}

// A command line naming a command builds that command alone; one that
// needs the others builds them all.
func TestOneCommandBuiltForItsCommandLine(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"cycle"}, "cycle"},
		{[]string{"--project", "p", "status", "--json"}, "status"},
		{[]string{"--json", "--no-color", "config", "validate"}, "config"},
		{[]string{"--now=2026-01-02T15:04:05Z", "skill", "enable", "/x"}, "skill"},
		{nil, ""},
		{[]string{"--help"}, ""},
		{[]string{"--help", "cycle"}, ""}, // cobra reads "cycle" as --help's value when it looks for the command
		{[]string{"-h", "cycle"}, ""},
		{[]string{"--version"}, ""},
		{[]string{"help", "cycle"}, ""},
		{[]string{"completion", "bash"}, ""},
		{[]string{"__complete", "cycle", ""}, ""},
		{[]string{"stauts"}, ""},
		{[]string{"--", "cycle"}, ""},
		{[]string{"--project", "cycle"}, ""},
	} {
		got := calledCommand(c.args)
		if got != c.want {
			t.Errorf("calledCommand(%q) = %q, want %q", c.args, got, c.want)
		}
		var built []string
		for _, cmd := range newRootFor(testGlobals(), got).Commands() {
			built = append(built, cmd.Name())
		}
		if got != "" && !slices.Equal(built, []string{got}) || got == "" && len(built) != len(commands) {
			t.Errorf("%q builds %v", c.args, built)
		}
	}
}

// prepare adds what cobra adds to the root before it looks for the
// command (Command.ExecuteC): the help and completion commands.
func prepare(root *cobra.Command) *cobra.Command {
	root.InitDefaultHelpCmd()
	root.InitDefaultCompletionCmd()
	return root
}

// topLevel is the top-level command cmd belongs to, nil for the root.
func topLevel(cmd *cobra.Command) *cobra.Command {
	for cmd != nil && cmd.HasParent() && cmd.Parent().HasParent() {
		cmd = cmd.Parent()
	}
	if cmd == nil || !cmd.HasParent() {
		return nil
	}
	return cmd
}

// TestCalledCommandAsCobraFinds holds calledCommand to cobra's own search:
// whenever it names a command, cobra finds, in the whole tree, that
// command or one of its subcommands, and finds the same one, with the same
// arguments and error, in the tree holding that command alone.
func TestCalledCommandAsCobraFinds(t *testing.T) {
	full := prepare(newRootFor(testGlobals(), ""))
	partial := map[string]*cobra.Command{}
	for _, c := range commands {
		partial[c.name] = prepare(newRootFor(testGlobals(), c.name))
	}
	tokens := []string{
		"cycle", "config", "validate", "skill", "enable", "status", "version", "help", "completion", "__complete",
		"stauts", "x", "--project", "--project=p", "--json", "--json=false", "--no-color", "--now", "--help", "-h",
		"--version", "-v", "--", "-", "", "--bogus", "-x", "-hv", "--dry-run",
	}
	named := 0
	check := func(args []string) {
		called := calledCommand(args)
		found, rest, err := full.Find(args)
		top := topLevel(found)
		if called == "" {
			return
		}
		named++
		if top == nil || top.Name() != called {
			t.Fatalf("calledCommand(%q) = %q, cobra finds %q", args, called, found.CommandPath())
		}
		pfound, prest, perr := partial[called].Find(args)
		if pfound.CommandPath() != found.CommandPath() || !slices.Equal(prest, rest) || (perr == nil) != (err == nil) || perr != nil && perr.Error() != err.Error() {
			t.Fatalf("%q: the whole tree finds %q %q (%v), %q alone finds %q %q (%v)", args, found.CommandPath(), rest, err, called, pfound.CommandPath(), prest, perr)
		}
	}
	// Every command line of up to three of the tokens, then longer ones.
	var walk func(args []string, n int)
	walk = func(args []string, n int) {
		check(args)
		if n == 0 {
			return
		}
		for _, tok := range tokens {
			walk(append(slices.Clip(args), tok), n-1)
		}
	}
	walk(nil, 3)
	r := rand.New(rand.NewSource(1))
	for i := 0; i < 20000; i++ {
		args := make([]string, 4+r.Intn(4))
		for k := range args {
			args[k] = tokens[r.Intn(len(tokens))]
		}
		check(args)
	}
	if named < 1000 {
		t.Errorf("only %d command lines built one command", named)
	}
}

// TestOneCommandTreeSameOutput runs command lines through the tree built
// for them and through the whole tree: the exit code, stdout and stderr
// are the same, for every command's help and flag errors and for the
// command lines that show the root, help and completion.
func TestOneCommandTreeSameOutput(t *testing.T) {
	dir := t.TempDir()
	var lines [][]string
	var paths func(cmd *cobra.Command, path []string)
	paths = func(cmd *cobra.Command, path []string) {
		for _, sub := range cmd.Commands() {
			p := append(slices.Clip(path), sub.Name())
			lines = append(lines, append(slices.Clip(p), "--help"), append(slices.Clip(p), "-h"), append(slices.Clip(p), "--bogus-flag"))
			paths(sub, p)
		}
	}
	paths(newRootFor(testGlobals(), ""), nil)
	if len(lines) < 3*len(commands) {
		t.Fatalf("the walk of the tree found %d command lines", len(lines))
	}
	lines = append(lines,
		[]string{}, []string{"--help"}, []string{"-h"}, []string{"--version"}, []string{"-v"},
		[]string{"help"}, []string{"help", "cycle"}, []string{"help", "config", "validate"},
		[]string{"stauts"}, []string{"cycel", "--help"}, []string{"--bogus", "cycle"},
		[]string{"--project"}, []string{"--help", "cycle"}, []string{"-h", "status"}, []string{"--", "cycle"},
		[]string{"version"}, []string{"--json", "version"}, []string{"version", "--json"}, []string{"version", "extra"},
		[]string{"completion", "bash"}, []string{"completion", "zsh"}, []string{"completion", "fish", "--no-descriptions"},
		[]string{"__complete", ""}, []string{"__complete", "c"}, []string{"__complete", "cycle", "--"},
		[]string{"__complete", "config", ""}, []string{"__complete", "skill", "en"}, []string{"__completeNoDesc", "s"},
		[]string{"--project", dir, "status"}, []string{"--project", dir, "status", "--json"},
		[]string{"--project", dir, "config", "validate"}, []string{"--project", dir, "skill", "list"},
		[]string{"--project", dir, "cycle", "--dry-run"}, []string{"--project", dir, "cycle", "--now", "yesterday"},
		[]string{"--project", dir, "run", "--every", "x"}, []string{"--project", dir, "halt", "--bogus"},
	)
	for _, args := range lines {
		var lazyOut, lazyErr, fullOut, fullErr bytes.Buffer
		lazyCode := Main(args, strings.NewReader(""), &lazyOut, &lazyErr)
		fullCode := mainWith(args, strings.NewReader(""), &fullOut, &fullErr, "")
		if lazyCode != fullCode || lazyOut.String() != fullOut.String() || lazyErr.String() != fullErr.String() {
			t.Errorf("ooda %q (tree for %q):\nexit %d, stdout %q, stderr %q\nwith the whole tree: exit %d, stdout %q, stderr %q",
				args, calledCommand(args), lazyCode, lazyOut.String(), lazyErr.String(), fullCode, fullOut.String(), fullErr.String())
		}
	}
}

// BenchmarkNewRootFor shows what building one command instead of the whole
// tree saves each process.
func BenchmarkNewRootFor(b *testing.B) {
	for _, called := range []string{"", "cycle"} {
		name := called
		if name == "" {
			name = "whole"
		}
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				newRootFor(testGlobals(), called)
			}
		})
	}
}
