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
	return strings.Contains(normalizer.Replace(strings.ToLower(text)), normalizer.Replace(strings.ToLower(domain)))
}

var normalizer = strings.NewReplacer("_", " ", "-", " ")
