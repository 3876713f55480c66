package decide

import "strings"

// containsWord is the 3-C keyword fallback: a goal with no explicit domain
// relates to a domain whose name appears in its title or id, with
// underscores and hyphens read as spaces ("test_coverage" matches "Keep test
// coverage >= 80%").
func containsWord(text, domain string) bool {
	if text == "" || domain == "" {
		return false
	}
	norm := func(s string) string {
		s = strings.ToLower(s)
		return strings.NewReplacer("_", " ", "-", " ").Replace(s)
	}
	return strings.Contains(norm(text), norm(domain))
}
