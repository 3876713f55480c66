package record

import (
	"path/filepath"
	"strings"
)

// ProjectRelative returns s, a text about to be recorded (an error
// message), with every absolute path inside one of roots written relative
// to it: "fork/exec /home/ann/app/scripts/x.sh: no such file" becomes
// "fork/exec scripts/x.sh: no such file", and the root itself ".". The
// state files and the CHANGELOG are committed and shared: one machine's
// directory layout (a user name, a home directory) has no place in them,
// and the relative path is what every checkout can open.
//
// Give the project root as ooda uses it and, when they differ, as the
// operating system resolved it (a root under a symlinked /tmp appears in
// an error in either form). A root counts only where it starts a path —
// at the start of s or after a character no path is made of — and ends
// one or continues it with a separator: the root /srv/app leaves
// /srv/application and /x/srv/app alone.
func ProjectRelative(s string, roots ...string) string {
	for _, root := range roots {
		s = relativeTo(s, root)
	}
	return s
}

func relativeTo(s, root string) string {
	if root == "" || !filepath.IsAbs(root) {
		return s
	}
	root = filepath.Clean(root)
	sep := string(filepath.Separator)
	if root == sep || !strings.Contains(s, root) {
		return s
	}
	var b strings.Builder
	for {
		i := strings.Index(s, root)
		if i < 0 {
			b.WriteString(s)
			return b.String()
		}
		end := i + len(root)
		if i > 0 && pathByte(s[i-1]) {
			// Inside a longer path: /x/srv/app.
			b.WriteString(s[:end])
			s = s[end:]
			continue
		}
		switch {
		case strings.HasPrefix(s[end:], sep) && end+len(sep) < len(s) && pathByte(s[end+len(sep)]):
			// A path inside the root: drop the root and its separator.
			b.WriteString(s[:i])
			s = s[end+len(sep):]
		case end == len(s) || !pathByte(s[end]) || strings.HasPrefix(s[end:], sep):
			// The root itself (perhaps with a trailing separator).
			b.WriteString(s[:i])
			b.WriteString(".")
			s = s[end:]
		default:
			// Another directory that starts with the root's name:
			// /srv/application.
			b.WriteString(s[:end])
			s = s[end:]
		}
	}
}

// pathByte reports whether c is a byte a path in a message is commonly
// made of: letters, digits, the separator and the punctuation of file
// names, and every byte of a non-ASCII character.
func pathByte(c byte) bool {
	switch {
	case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c >= 0x80:
		return true
	}
	return strings.IndexByte("/._-~+@", c) >= 0 || c == filepath.Separator
}
