package cli

import (
	"bytes"
	"strings"
	"testing"
)

// TestMistypedCommandSuggestsOnOneLine: a mistyped command, at the top
// or under a command made of subcommands, is a usage error of one line
// naming the nearest commands — cobra's own suggestion took lines of its
// own, which the escaping of every error printed as a literal
// "\n\nDid you mean this?\n\tcycle\n". A name typed with control
// characters stays escaped.
func TestMistypedCommandSuggestsOnOneLine(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"cyle"}, `ooda: unknown command "cyle" for "ooda"; did you mean "cycle"?`},
		{[]string{"skil"}, `ooda: unknown command "skil" for "ooda"; did you mean "skill" or "sim"?`},
		{[]string{"frobnicate"}, `ooda: unknown command "frobnicate" for "ooda"`},
		{[]string{"config", "vaildate"}, `ooda: unknown command "vaildate" for "ooda config"; did you mean "validate"?`},
		{[]string{"skill", "lst"}, `ooda: unknown command "lst" for "ooda skill"; did you mean "list"?`},
		{[]string{"config", "frobnicate"}, `ooda: unknown command "frobnicate" for "ooda config"`},
		{[]string{"cycle", "extra"}, `ooda: ooda cycle takes no arguments, got "extra"`},
		{[]string{"\x1b[31mcyle"}, `ooda: unknown command "\x1b[31mcyle" for "ooda"`},
	} {
		var out, errb bytes.Buffer
		code := Main(append([]string{"--project", dir}, c.args...), strings.NewReader(""), &out, &errb)
		if code != ExitUsage || errb.String() != c.want+"\n" || out.Len() != 0 {
			t.Errorf("ooda %q: exit %d, stdout %q, stderr %q; want exit %d and stderr %q", c.args, code, out.String(), errb.String(), ExitUsage, c.want+"\n")
		}
	}
}
