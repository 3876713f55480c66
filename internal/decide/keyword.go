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
	return strings.Contains(keyword(text), keyword(domain))
}

// keyword is a text as the keyword fallback compares it: lower case, with
// underscores and hyphens as spaces.
func keyword(s string) string { return normalizer.Replace(strings.ToLower(s)) }

var normalizer = strings.NewReplacer("_", " ", "-", " ")
