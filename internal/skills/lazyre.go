package skills

import (
	"regexp"
	"sync"
)

// lazyRE is a regular expression compiled on its first use. The parsers of
// this package hold some fifty of them; compiled at start-up they cost
// every ooda process, a cycle that runs no built-in skill included, about
// a millisecond.
type lazyRE struct {
	pattern string
	once    sync.Once
	re      *regexp.Regexp
}

// lazyPatterns are every lazyRE, for the test that compiles them all: a
// bad pattern must still fail the tests, not a user's run.
var lazyPatterns []*lazyRE

// lazyRegexp declares a regular expression to compile on first use; like
// regexp.MustCompile, it panics if the pattern is invalid.
func lazyRegexp(pattern string) *lazyRE {
	l := &lazyRE{pattern: pattern}
	lazyPatterns = append(lazyPatterns, l)
	return l
}

func (l *lazyRE) get() *regexp.Regexp {
	l.once.Do(func() { l.re = regexp.MustCompile(l.pattern) })
	return l.re
}

// FindStringSubmatch is regexp.Regexp.FindStringSubmatch.
func (l *lazyRE) FindStringSubmatch(s string) []string { return l.get().FindStringSubmatch(s) }

// FindSubmatch is regexp.Regexp.FindSubmatch.
func (l *lazyRE) FindSubmatch(b []byte) [][]byte { return l.get().FindSubmatch(b) }

// FindAllStringSubmatch is regexp.Regexp.FindAllStringSubmatch.
func (l *lazyRE) FindAllStringSubmatch(s string, n int) [][]string {
	return l.get().FindAllStringSubmatch(s, n)
}

// MatchString is regexp.Regexp.MatchString.
func (l *lazyRE) MatchString(s string) bool { return l.get().MatchString(s) }

// ReplaceAllString is regexp.Regexp.ReplaceAllString.
func (l *lazyRE) ReplaceAllString(src, repl string) string {
	return l.get().ReplaceAllString(src, repl)
}

// ReplaceAll is regexp.Regexp.ReplaceAll.
func (l *lazyRE) ReplaceAll(src, repl []byte) []byte { return l.get().ReplaceAll(src, repl) }
