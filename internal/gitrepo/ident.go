package gitrepo

import (
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"io/fs"
	"os"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// identConfig is the configuration git takes an identity from (user.*,
// author.*, committer.*) and the commit encoding; other is a key git
// would refuse or that ooda does not follow (a name without a value, a
// commit encoding other than UTF-8): the commit is then git's to make.
type identConfig struct {
	userName, userEmail           string
	authorName, authorEmail       string
	committerName, committerEmail string
	other                         string
}

// set records one configuration value of the identity; ok is false for a
// key that is not about it.
func (c *identConfig) set(key, val string, hasVal bool) bool {
	var dst *string
	switch key {
	case "user.name":
		dst = &c.userName
	case "user.email":
		dst = &c.userEmail
	case "author.name":
		dst = &c.authorName
	case "author.email":
		dst = &c.authorEmail
	case "committer.name":
		dst = &c.committerName
	case "committer.email":
		dst = &c.committerEmail
	case "user.useconfigonly":
		// It only refuses a name or address git would make up, and
		// then the commit is git's to make anyway.
		return true
	case "i18n.commitencoding":
		if l := strings.ToLower(val); !hasVal || (l != "utf-8" && l != "utf8") {
			c.other = key
		}
		return true
	default:
		return false
	}
	if !hasVal {
		c.other = key // git refuses to start
	}
	*dst = val // the last value wins, as for git
	return true
}

// who is one of the two identities of a commit.
type who struct {
	env         string // "AUTHOR" or "COMMITTER"
	name, email func(identConfig) string
}

var (
	authorWho = who{env: "AUTHOR",
		name: func(c identConfig) string { return c.authorName }, email: func(c identConfig) string { return c.authorEmail }}
	committerWho = who{env: "COMMITTER",
		name: func(c identConfig) string { return c.committerName }, email: func(c identConfig) string { return c.committerEmail }}
)

// gitIdent is the identity line git writes for w — "Name <email> 1700000000
// +0100" — from the environment git would run with and its configuration,
// as git_author_info / git_committer_info make it: GIT_<WHO>_NAME, else
// <who>.name, else user.name (and the same for the address), the date of
// GIT_<WHO>_DATE, else now in the local time zone. ok is false where git
// would make up a name or address (from the password file, the host
// name, $EMAIL), refuse one, or read a date in a format other than its
// own "@<seconds> <+hhmm>": the commit is then git's to make.
func gitIdent(w who, env map[string]string, cfg identConfig, now time.Time) (string, bool) {
	if cfg.other != "" {
		return "", false
	}
	name, ok := env["GIT_"+w.env+"_NAME"]
	if !ok {
		name = w.name(cfg)
		if name == "" {
			name = cfg.userName
		}
	}
	email, ok := env["GIT_"+w.env+"_EMAIL"]
	if !ok {
		email = w.email(cfg)
		if email == "" {
			email = cfg.userEmail
		}
	}
	if name == "" || email == "" || !hasNonCrud(name) {
		return "", false
	}
	date, ok := identDate(env, "GIT_"+w.env+"_DATE", now)
	if !ok {
		return "", false
	}
	return withoutCrud(name) + " <" + withoutCrud(email) + "> " + date, true
}

// crud is what git trims from both ends of a name or an address.
func crud(c byte) bool {
	return c <= 32 || c == '.' || c == ',' || c == ':' || c == ';' || c == '<' || c == '>' || c == '"' || c == '\\' || c == '\''
}

func hasNonCrud(s string) bool {
	for i := 0; i < len(s); i++ {
		if !crud(s[i]) {
			return true
		}
	}
	return false
}

// withoutCrud is git's strbuf_addstr_without_crud: crud trimmed from both
// ends, and the '\n', '<' and '>' that delimit an identity dropped.
func withoutCrud(s string) string {
	for len(s) > 0 && crud(s[0]) {
		s = s[1:]
	}
	for len(s) > 0 && crud(s[len(s)-1]) {
		s = s[:len(s)-1]
	}
	return strings.Map(func(r rune) rune {
		if r == '\n' || r == '<' || r == '>' {
			return -1
		}
		return r
	}, s)
}

// identDate is the date part of an identity: the environment's, in git's
// raw format only, else now in the local time zone (datestamp).
func identDate(env map[string]string, key string, now time.Time) (string, bool) {
	if v := env[key]; v != "" {
		return rawDate(v)
	}
	loc, ok := localZone(env)
	if !ok {
		return "", false
	}
	_, off := now.In(loc).Zone()
	return fmt.Sprintf("%d %s", now.Unix(), tzOffset(off/60)), true
}

// maxZoneFile bounds a time zone file read.
const maxZoneFile = 1 << 20

// localZone is the time zone git's C library takes from TZ, read from
// the same file it reads: /etc/localtime without TZ, the zoneinfo file TZ
// names (or the file it is the path of), UTC for an empty TZ or a missing
// /etc/localtime. ok is false where the two might read it differently: a
// TZ that is a rule rather than a name, TZDIR set, a file Go cannot read.
func localZone(env map[string]string) (*time.Location, bool) {
	tz, set := env["TZ"]
	tz = strings.TrimPrefix(tz, ":")
	var file string
	switch {
	case set && tz == "":
		return time.UTC, true
	case env["TZDIR"] != "":
		return nil, false
	case !set:
		file = "/etc/localtime"
	case strings.HasPrefix(tz, "/"):
		file = tz
	case strings.Contains(tz, "..") || strings.ContainsAny(tz, ",<>"):
		return nil, false
	default:
		file = "/usr/share/zoneinfo/" + tz
	}
	b, err := readZone(file)
	if !set && errors.Is(err, fs.ErrNotExist) {
		return time.UTC, true
	}
	if err != nil {
		return nil, false
	}
	loc, err := time.LoadLocationFromTZData(tz, b)
	if err != nil {
		return nil, false
	}
	return loc, true
}

// readZone reads a time zone file, following links as the C library
// does.
func readZone(name string) ([]byte, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxZoneFile+1))
	if err == nil && len(b) > maxZoneFile {
		err = errNotPlain
	}
	return b, err
}

// rawDate reads "@<seconds> <+|-><hhmm>" as git's parse_date reads it
// (match_object_header_date) and writes it back as git does; ok is false
// for every other format git also reads.
func rawDate(v string) (string, bool) {
	rest, ok := strings.CutPrefix(v, "@")
	if !ok {
		return "", false
	}
	secs, zone, ok := strings.Cut(rest, " ")
	if !ok || secs == "" || len(secs) > 19 || strings.Trim(secs, "0123456789") != "" {
		return "", false
	}
	stamp, err := strconv.ParseUint(secs, 10, 64)
	if err != nil || len(zone) != 5 || (zone[0] != '+' && zone[0] != '-') || strings.Trim(zone[1:], "0123456789") != "" {
		return "", false
	}
	n, _ := strconv.Atoi(zone[1:])
	mins := n/100*60 + n%100
	if zone[0] == '-' {
		mins = -mins
	}
	return fmt.Sprintf("%d %s", stamp, tzOffset(mins)), true
}

// tzOffset writes an offset in minutes as git's date_string does.
func tzOffset(mins int) string {
	sign := '+'
	if mins < 0 {
		mins, sign = -mins, '-'
	}
	return fmt.Sprintf("%c%02d%02d", sign, mins/60, mins%60)
}

// commitObject is the body of the commit `git commit-tree -p <parent> -m
// <msg> <tree>` writes with these identities; ok is false when git would
// change it (a message with a NUL byte is refused; bytes that are not
// UTF-8 are converted).
func commitObject(tree, parent, author, committer, msg string) ([]byte, bool) {
	if strings.IndexByte(msg, 0) >= 0 {
		return nil, false
	}
	var b strings.Builder
	fmt.Fprintf(&b, "tree %s\n", tree)
	if parent != "" {
		fmt.Fprintf(&b, "parent %s\n", parent)
	}
	fmt.Fprintf(&b, "author %s\ncommitter %s\n\n%s", author, committer, msg)
	if msg != "" && !strings.HasSuffix(msg, "\n") {
		b.WriteByte('\n')
	}
	body := []byte(b.String())
	if !gitUTF8(body) {
		return nil, false
	}
	return body, true
}

// gitUTF8 reports whether git's commit takes b as UTF-8 as it is: valid
// UTF-8 without the noncharacters (U+xxFFFE, U+xxFFFF, U+FDD0–U+FDEF) git
// also rejects.
func gitUTF8(b []byte) bool {
	for len(b) > 0 {
		r, n := utf8.DecodeRune(b)
		if (r == utf8.RuneError && n == 1) || r&0xfffe == 0xfffe || (r >= 0xfdd0 && r <= 0xfdef) {
			return false
		}
		b = b[n:]
	}
	return true
}

// writeCommit stores the commit body and returns its name.
func writeCommit(lw objectWriter, newHash func() hash.Hash, body []byte) (string, error) {
	oid := hex.EncodeToString(hashObject(newHash, "commit", body))
	if err := lw.write(oid, "commit", body); err != nil {
		return "", err
	}
	return oid, nil
}
