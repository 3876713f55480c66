package forge

import (
	"errors"
	"strings"
)

// errConfigSyntax is a configuration file git itself would refuse.
var errConfigSyntax = errors.New("bad config line")

// parseGitConfig reads a git configuration file as git's own parser does
// (config.c: git_parse_source, get_base_var, get_value, parse_value) and
// calls visit with every variable in file order: its full name
// ("section.subsection.key", the section and the key lowercased, the
// subsection as written when quoted) and its value; hasValue is false for
// a key without "=" (a boolean true). Anything git would refuse is an
// error, so that a caller relying on this reading never takes a file git
// fails on for one it reads.
func parseGitConfig(data []byte, visit func(name, value string, hasValue bool)) error {
	p := configParser{data: data}
	// A UTF-8 byte order mark is skipped, a partial one refused.
	if len(p.data) >= 3 && string(p.data[:3]) == "\xef\xbb\xbf" {
		p.pos = 3
	} else if len(p.data) > 0 && p.data[0] == 0xef {
		return errConfigSyntax
	}
	var section []byte
	comment := false
	for {
		c := p.next()
		if c == '\n' {
			if p.eof {
				return nil
			}
			comment = false
			continue
		}
		if comment || gitSpace(c) {
			continue
		}
		if c == '#' || c == ';' {
			comment = true
			continue
		}
		if c == '[' {
			name, err := p.baseVar()
			if err != nil || len(name) == 0 {
				return errConfigSyntax
			}
			section = append(name, '.')
			continue
		}
		if !gitAlpha(c) {
			return errConfigSyntax
		}
		if len(section) == 0 {
			// A key before any section: git has no name for it.
			return errConfigSyntax
		}
		name := append(append([]byte{}, section...), lower(c))
		for {
			c = p.next()
			if p.eof || !gitKeyChar(c) {
				break
			}
			name = append(name, lower(c))
		}
		for c == ' ' || c == '\t' {
			c = p.next()
		}
		if c == '\n' {
			visit(string(name), "", false)
			if p.eof {
				return nil
			}
			continue
		}
		if c != '=' {
			return errConfigSyntax
		}
		value, ok := p.value()
		if !ok {
			return errConfigSyntax
		}
		visit(string(name), value, true)
		if p.eof {
			return nil
		}
	}
}

type configParser struct {
	data []byte
	pos  int
	eof  bool
}

// next is git's get_next_char: "\r\n" reads as "\n", and the end of the
// file as a final "\n" with eof set.
func (p *configParser) next() byte {
	if p.pos >= len(p.data) {
		p.eof = true
		return '\n'
	}
	c := p.data[p.pos]
	p.pos++
	if c == '\r' && p.pos < len(p.data) && p.data[p.pos] == '\n' {
		p.pos++
		return '\n'
	}
	return c
}

// baseVar reads a section header after its '[': "[name]" (lowercased,
// dots allowed) or `[name "subsection"]` (the subsection as written, with
// backslash escapes taken literally).
func (p *configParser) baseVar() ([]byte, error) {
	var name []byte
	for {
		c := p.next()
		if p.eof {
			return nil, errConfigSyntax
		}
		if c == ']' {
			return name, nil
		}
		if gitSpace(c) {
			return p.extendedBaseVar(name, c)
		}
		if !gitKeyChar(c) && c != '.' {
			return nil, errConfigSyntax
		}
		name = append(name, lower(c))
	}
}

func (p *configParser) extendedBaseVar(name []byte, c byte) ([]byte, error) {
	for {
		if c == '\n' {
			return nil, errConfigSyntax
		}
		c = p.next()
		if !gitSpace(c) {
			break
		}
	}
	if c != '"' {
		return nil, errConfigSyntax
	}
	name = append(name, '.')
	for {
		c := p.next()
		if c == '\n' {
			return nil, errConfigSyntax
		}
		if c == '"' {
			break
		}
		if c == '\\' {
			if c = p.next(); c == '\n' {
				return nil, errConfigSyntax
			}
		}
		name = append(name, c)
	}
	if p.next() != ']' {
		return nil, errConfigSyntax
	}
	return name, nil
}

// value is git's parse_value: leading blanks dropped, trailing ones too
// unless quoted, inner runs of blanks kept (each as a space), '#' and ';'
// start a comment outside quotes, a backslash escapes \ " t b n or the end
// of the line.
func (p *configParser) value() (string, bool) {
	var b strings.Builder
	quote, comment := false, false
	space := 0
	for {
		c := p.next()
		if c == '\n' {
			if quote {
				return "", false
			}
			return b.String(), true
		}
		if comment {
			continue
		}
		if gitSpace(c) && !quote {
			if b.Len() > 0 {
				space++
			}
			continue
		}
		if !quote && (c == ';' || c == '#') {
			comment = true
			continue
		}
		for ; space > 0; space-- {
			b.WriteByte(' ')
		}
		if c == '\\' {
			switch c = p.next(); c {
			case '\n':
				continue
			case 't':
				c = '\t'
			case 'b':
				c = '\b'
			case 'n':
				c = '\n'
			case '\\', '"':
			default:
				return "", false
			}
			b.WriteByte(c)
			continue
		}
		if c == '"' {
			quote = !quote
			continue
		}
		b.WriteByte(c)
	}
}

// gitSpace is git's isspace: space, tab, newline and carriage return only.
func gitSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

func gitAlpha(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }

func gitKeyChar(c byte) bool { return gitAlpha(c) || c >= '0' && c <= '9' || c == '-' }

func lower(c byte) byte {
	if c >= 'A' && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}
