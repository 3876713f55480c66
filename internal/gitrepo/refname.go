package gitrepo

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// Values that ooda passes to git but did not get from git itself — a
// checkpoint's commit, a branch named in a commit message or by a forge —
// are checked here first: git would take a value that starts with '-' as an
// option (--output=FILE writes a file), and one with ".." or "@{" as a
// range or a reflog lookup.

// ValidSHA reports whether s is a full object name: 40 (SHA-1) or 64
// (SHA-256) hexadecimal digits. An abbreviation is refused too, since it
// can name a different object once the repository grows.
func ValidSHA(s string) bool {
	if len(s) != 40 && len(s) != 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F') {
			return false
		}
	}
	return true
}

// CheckRefName returns why s is not a full ref name ("refs/heads/main"),
// or nil. The rules are those of `git check-ref-format`: at least two
// components; no component that is empty, begins with '.' or ends with
// ".lock"; no "..", "@{", control character, space, or any of ~^:?*[\ ;
// not "@", not beginning or ending with '/', not ending with '.'. It is
// stricter in one way: the name must be valid UTF-8, since it is kept in
// JSON state.
func CheckRefName(s string) error {
	if why := refNameProblem(s); why != "" {
		return fmt.Errorf("%q is not a ref name: %s", s, why)
	}
	if !strings.Contains(s, "/") {
		return fmt.Errorf("%q is not a ref name: it has a single component", s)
	}
	return nil
}

// CheckBranchName returns why s is not a branch name, or nil. A branch
// name is one that `git check-ref-format --branch` accepts as itself:
// refs/heads/<s> is a ref name (CheckRefName), s does not begin with '-'
// and is not "HEAD". It is stricter than git in two ways: "@", which git
// reads as HEAD, is refused, and the name must be valid UTF-8.
func CheckBranchName(s string) error {
	switch {
	case s == "":
		return fmt.Errorf("%q is not a branch name: it is empty", s)
	case strings.HasPrefix(s, "-"):
		return fmt.Errorf("%q is not a branch name: it begins with '-'", s)
	case s == "HEAD" || s == "@":
		return fmt.Errorf("%q is not a branch name: git reads it as the current commit", s)
	}
	if why := refNameProblem("refs/heads/" + s); why != "" {
		return fmt.Errorf("%q is not a branch name: %s", s, why)
	}
	return nil
}

// ValidBranchName reports whether CheckBranchName accepts s.
func ValidBranchName(s string) bool { return CheckBranchName(s) == nil }

// refNameProblem is git's check_refname_format without its options (no
// "*" pattern, no normalisation), plus valid UTF-8.
func refNameProblem(s string) string {
	switch {
	case s == "":
		return "it is empty"
	case s == "@":
		return `it is "@"`
	case !utf8.ValidString(s):
		return "it is not valid UTF-8"
	case strings.HasPrefix(s, "/") || strings.HasSuffix(s, "/"):
		return "it begins or ends with '/'"
	case strings.HasSuffix(s, "."):
		return "it ends with '.'"
	case strings.Contains(s, ".."):
		return `it contains ".."`
	case strings.Contains(s, "@{"):
		return `it contains "@{"`
	}
	for _, r := range s {
		switch {
		case r < 0x20 || r == 0x7f:
			return "it contains a control character"
		case r == ' ':
			return "it contains a space"
		case strings.ContainsRune(`~^:?*[\`, r):
			return fmt.Sprintf("it contains %q", r)
		}
	}
	for _, c := range strings.Split(s, "/") {
		switch {
		case c == "":
			return `it contains "//"`
		case strings.HasPrefix(c, "."):
			return fmt.Sprintf("its component %q begins with '.'", c)
		case strings.HasSuffix(c, ".lock"):
			return fmt.Sprintf("its component %q ends with \".lock\"", c)
		}
	}
	return ""
}
