package config

import (
	"path"
	"strings"
)

// MatchPath reports whether a project file matches a path pattern of the
// configuration (safety.protected_paths, safety.risk_rules): a shell-glob
// match of the cleaned path, and "dir/*" or "dir/**" also cover everything
// below dir/ at any depth (SPEC-NOTES §4). A leading "./" is ignored on
// both sides.
func MatchPath(pattern, file string) bool {
	file = strings.TrimPrefix(path.Clean("/"+file), "/")
	pattern = strings.TrimPrefix(pattern, "./")
	if ok, _ := path.Match(pattern, file); ok {
		return true
	}
	for _, suffix := range []string{"/*", "/**"} {
		if dir, ok := strings.CutSuffix(pattern, suffix); ok && strings.HasPrefix(file, dir+"/") {
			return true
		}
	}
	return false
}
