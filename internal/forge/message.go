package forge

import (
	"strings"
	"unicode/utf8"

	"github.com/ooda-loop/ooda/internal/safetext"
	"github.com/ooda-loop/ooda/internal/secret"
)

// HeadTrailer is the trailer MergeSquash adds when the branch name cannot
// be written into the squash commit as it is (it holds a secret or a
// control character): the merged tip's commit id then identifies the
// branch, since the masked name no longer does.
const HeadTrailer = "Ooda-Head"

// commitLine makes text from outside (a branch tip's subject) one line of
// a commit message: whitespace controls become a space, other controls are
// dropped, invalid UTF-8 becomes U+FFFD, runs of spaces shrink to one, and
// known secrets are masked. The secrets are masked again after the
// controls are gone, so a token split by an escape sequence is masked too.
//
// A "(branch NAME)" in the text would make the squash commit name a second
// branch as merged; it is written "(from branch NAME)" instead.
func commitLine(s string) string {
	s = strings.ToValidUTF8(secret.Redact(s), "\uFFFD")
	var b strings.Builder
	b.Grow(len(s))
	space := false
	for _, r := range s {
		switch {
		case r == '\t' || r == '\n' || r == '\v' || r == '\f' || r == '\r' || r == ' ' ||
			r == 0x2028 || r == 0x2029:
			space = b.Len() > 0
			continue
		case safetext.Unsafe(r):
			continue
		}
		if space {
			b.WriteByte(' ')
			space = false
		}
		b.WriteRune(r)
	}
	out := secret.Redact(b.String())
	return strings.ReplaceAll(out, "(branch ", "(from branch ")
}

// messageBranch is how a branch name is written into ooda's own commit
// message, and whether that is the name itself. A known secret is masked
// ("***") and a control character becomes '?': both are characters git
// refuses in a ref name, so an altered name can never be read back as the
// name of some other branch.
func messageBranch(name string) (shown string, exact bool) {
	shown = strings.ToValidUTF8(secret.Redact(name), "?")
	if strings.IndexFunc(shown, safetext.Unsafe) >= 0 {
		var b strings.Builder
		for _, r := range shown {
			if safetext.Unsafe(r) {
				r = '?'
			}
			b.WriteRune(r)
		}
		shown = b.String()
	}
	// Again, should a secret contain a '?' that stood for a control.
	shown = secret.Redact(shown)
	return shown, shown == name && utf8.ValidString(name)
}
