package config

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
)

// Names and places ooda keeps for itself. A configured path, domain name or
// skill name is more than a string: ooda writes, deletes, hands to a skill
// or puts into a command line what it names, so each is held to a rule that
// keeps it away from git's files, from ooda's own state and from argv
// options (docs/config.md, docs/security.md).

// evolveDir is where ooda keeps its own state, relative to the project root.
var evolveDir = []string{"agent", "state", "evolve"}

// evolveRel is evolveDir as a path.
var evolveRel = filepath.Join(evolveDir...)

// reservedStateDirs are the directories ooda itself uses directly under
// agent/state/; a domain of one of these names would put its lens.json and
// rotation_cursor.json among them (agent/state/external/*.json is read as
// external signals).
var reservedStateDirs = []string{"evolve", "external"}

// ReservedDomainNames returns the domain names ooda keeps for itself: the
// directories it uses directly under agent/state/.
func ReservedDomainNames() []string { return append([]string(nil), reservedStateDirs...) }

// reservedDomainName returns the reserved directory name that name equals
// (case-insensitively, as on a case-insensitive file system), or "".
func reservedDomainName(name string) string {
	for _, r := range reservedStateDirs {
		if strings.EqualFold(name, r) {
			return r
		}
	}
	return ""
}

// SkillNameRule describes the names a skill may have. A skill name reaches
// a command line ({skill} and {skill_name} in agent.command) and names the
// directory skills/<name>/, so it is a plain name that can be neither an
// option ("--output=…") nor a path, nor carry control or bidirectional
// characters.
const SkillNameRule = `a skill name must be an optional "/" followed by 1 to 64 letters, digits, "_", "-" or ".", starting with a letter or a digit, and not contain ".."`

// plainName reports whether name is in the character set of domain and
// skill names — ^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$ (the tests hold that
// regexp as its oracle) — without the regexp machinery: every loaded
// configuration checks each domain's name twice, and compiling the regexp
// at start-up cost every process 0.2 ms.
func plainName(name string) bool {
	if len(name) == 0 || len(name) > 64 {
		return false
	}
	for i := 0; i < len(name); i++ {
		switch c := name[i]; {
		case 'A' <= c && c <= 'Z', 'a' <= c && c <= 'z', '0' <= c && c <= '9':
		case i > 0 && (c == '_' || c == '.' || c == '-'):
		default:
			return false
		}
	}
	return true
}

// ValidSkillName returns an error (SkillNameRule) unless name is a plain
// skill name: an optional leading "/", then a name of the same form as a
// domain name. Every skill name ooda runs must pass it, whether it comes
// from config.json, a contract's chain_triggers or the command line.
func ValidSkillName(name string) error {
	n := strings.TrimPrefix(name, "/")
	if !plainName(n) || strings.Contains(n, "..") {
		return errors.New(SkillNameRule)
	}
	return nil
}

// pathUse says what ooda does with a configured path, which decides the
// rules it is held to beyond resolving inside the project.
type pathUse int

const (
	// useOutput: a contract's output file, only read by ooda after the
	// skill ran (for chain conditions). Skills legitimately declare
	// ooda's own files there (dev-cycle declares action_queue.json), so
	// only git's files are refused.
	useOutput pathUse = iota
	// useContext: active_context.path, read by ooda, handed to every
	// skill and rewritten by the refresh skill.
	useContext
	// useState: a domain's state file, written by its skill.
	useState
	// useHalt: the HALT file, created by `ooda halt` and deleted by
	// `ooda resume`.
	useHalt
)

// reservedReason returns why the configured path p, resolved as r, may not
// be used as u, or "" when it may. configReal is the config file's path
// with its symlinks followed ("" when unknown).
func (r resolved) reservedReason(p string, u pathUse, configReal string) string {
	var buf [3]string
	rels := r.relsIn(buf[:0])
	if r.inGitDirOf(rels) {
		return fmt.Sprintf("%q is inside a .git directory: git's own files are not ooda's to write, hand to a skill or delete", p)
	}
	if u == useOutput {
		return ""
	}
	if r.inEvolveDirOf(rels) {
		return fmt.Sprintf("%q is inside agent/state/evolve/, where ooda keeps its own state (the lock, state.json, the cost ledger); a skill or `ooda resume` would overwrite or delete it", p)
	}
	if configReal != "" && r.fsys.sameFile(r.real, configReal) {
		return fmt.Sprintf("%q is the configuration file itself", p)
	}
	if u == useHalt {
		// The file may not exist yet; one that exists must be a file
		// `ooda halt` can replace and `ooda resume` can delete: a
		// directory would halt every cycle and fail both. (A state file
		// that is not a regular file is refused when a cycle reads it,
		// with a warning and a gap: it is data, and must not turn every
		// later cycle into a configuration error.)
		if fi, err := r.fsys.Lstat(r.real); err == nil && !fi.Mode().IsRegular() {
			return fmt.Sprintf("%q is %s, not a regular file", p, FileKind(fi.Mode()))
		}
	}
	return ""
}

// inGitDir reports whether the path, as written or as resolved, has a
// component named .git (any case: on a case-insensitive file system .GIT
// is the same directory), or lies in the directory the project's own .git
// resolves to.
func (r resolved) inGitDir() bool { return r.inGitDirOf(r.rels()) }

// inGitDirOf is inGitDir with r.rels() computed already.
func (r resolved) inGitDirOf(rels []string) bool {
	for _, rel := range rels {
		for rest := rel; rest != ""; {
			var c string
			c, rest = nextComponent(rest)
			if strings.EqualFold(c, ".git") {
				return true
			}
		}
	}
	return r.inResolved(".git")
}

// nextComponent splits p at its first separator ('/' or the OS's):
// the component before it and the rest after it. Empty components are
// returned as they come; splitPath's callers skip them, and no empty
// string is ".git" or a component of agent/state/evolve.
func nextComponent(p string) (c, rest string) {
	for i := 0; i < len(p); i++ {
		if p[i] == '/' || p[i] == filepath.Separator {
			return p[:i], p[i+1:]
		}
	}
	return p, ""
}

// inEvolveDir reports whether the path, as written or as resolved, is
// agent/state/evolve or below it, also when a symlink elsewhere in the
// project leads there or agent/state/evolve is itself a symlink.
func (r resolved) inEvolveDir() bool { return r.inEvolveDirOf(r.rels()) }

// inEvolveDirOf is inEvolveDir with r.rels() computed already.
func (r resolved) inEvolveDirOf(rels []string) bool {
	for _, rel := range rels {
		rest, match := rel, true
		for _, d := range evolveDir {
			// splitPath drops empty components: skip them here too.
			var c string
			for c == "" && rest != "" {
				c, rest = nextComponent(rest)
			}
			if !strings.EqualFold(c, d) {
				match = false
				break
			}
		}
		if match {
			return true
		}
	}
	return r.inResolved(evolveRel)
}

// rels returns the path relative to the project root in its resolved and
// its written form (the latter when it lies in the root as written).
func (r resolved) rels() []string { return r.relsIn(make([]string, 0, 3)) }

// relsIn is rels appended to out. A form equal to one before it is left
// out: the rules are functions of the string alone, and a path with no
// symlink in a root with none (every default state file) has one form
// three times over.
func (r resolved) relsIn(out []string) []string {
	add := func(rel string) {
		if !slices.Contains(out, rel) {
			out = append(out, rel)
		}
	}
	if rel, err := relPath(r.realRoot, r.real); err == nil {
		add(rel)
	}
	for _, root := range [2]string{r.absRoot, r.realRoot} {
		if within(root, r.full) {
			if rel, err := relPath(root, r.full); err == nil {
				add(rel)
			}
		}
	}
	return out
}

// relPath is filepath.Rel(dir, p) for clean absolute paths, without
// cleaning them again when p lies below dir (the usual case).
func relPath(dir, p string) (string, error) {
	if runtime.GOOS != "windows" && within(dir, p) {
		rest := p[len(dir):]
		if rest[0] == filepath.Separator {
			rest = rest[1:]
		}
		return rest, nil
	}
	return filepath.Rel(dir, p)
}

// inResolved reports whether the resolved path is the project's dir
// (relative to the root) or lies below it, dir's own symlinks followed.
func (r resolved) inResolved(dir string) bool {
	d, err := r.fsys.resolveUnder(r.absRoot, dir)
	if err != nil {
		return false
	}
	return r.real == d || within(d, r.real)
}

// sameFile reports whether a and b name one file: the same path, or (both
// existing) the same inode, so a hard link or a case variant on a
// case-insensitive file system is caught too.
func (l *lookups) sameFile(a, b string) bool {
	if a == b {
		return true
	}
	fa, err := l.Stat(a)
	if err != nil {
		return false
	}
	fb, err := l.Stat(b)
	return err == nil && os.SameFile(fa, fb)
}

// realPath returns the absolute path of p with its symlinks followed, or p
// made absolute when that fails; "" for an empty p.
func (l *lookups) realPath(p string) string {
	if p == "" {
		return ""
	}
	abs, err := filepath.Abs(p)
	if err != nil {
		return p
	}
	if r, err := l.resolvePath(abs); err == nil {
		return r
	}
	return abs
}

// ErrReservedPath is wrapped by the errors of ResolveOutputFile that refuse
// a path for naming files that are not the skill's to declare.
var ErrReservedPath = errors.New("reserved path")

// ResolveOutputFile resolves a contract's output file as ResolveInProject
// does and also refuses one inside a .git directory: ooda reads output
// files after the skill ran, and git's files (.git/config may hold
// credentials) are nobody's output.
func ResolveOutputFile(root, p string) (string, error) {
	r, err := resolveIn(root, p)
	if err != nil {
		return "", err
	}
	if reason := r.reservedReason(p, useOutput, ""); reason != "" {
		return "", reservedPathError(reason)
	}
	return r.real, nil
}

// reservedPathError is a refusal of ResolveOutputFile; it reads as its
// reason alone and matches ErrReservedPath.
type reservedPathError string

func (e reservedPathError) Error() string        { return string(e) }
func (e reservedPathError) Is(target error) bool { return target == ErrReservedPath }
