package config

import "testing"

// TestDomainBranchPrefixDefaults loads domains running the same skill in
// a row, another skill between them, a prefix of their own and no skill,
// and requires each default prefix to be its own skill's.
func TestDomainBranchPrefixDefaults(t *testing.T) {
	root, path := project(t, `{"domains": {
		"a": {"primary_skill": "/x"}, "b": {"primary_skill": "x"}, "c": {"primary_skill": "/y"},
		"d": {"primary_skill": "/x", "branch_prefix": "mine/"}, "e": {"primary_skill": "/x"}, "f": {"status": "disabled"}},
		"skills": {"/x": {"builtin": "noop"}, "/y": {"builtin": "noop"}}}`)
	c, err := LoadProject(path, root)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"a": "auto/x/", "b": "auto/x/", "c": "auto/y/", "d": "mine/", "e": "auto/x/", "f": ""}
	for _, d := range c.Domains {
		if d.BranchPrefix != want[d.Name] {
			t.Errorf("domain %s: branch prefix %q, want %q", d.Name, d.BranchPrefix, want[d.Name])
		}
	}
}
