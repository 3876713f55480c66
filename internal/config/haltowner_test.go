package config

import "testing"

// TestHaltFileNamesTheLastFieldSharingIt shares the HALT file with two
// domains' state files, and with the active context too, and requires the
// error to name the last of them in the file's order (the active context
// after every domain), as it always has.
func TestHaltFileNamesTheLastFieldSharingIt(t *testing.T) {
	for _, tt := range []struct{ name, raw, want string }{
		{"two domains", `{"domains": {"b": {"primary_skill": "/a", "state_file": "x.json"}, "a": {"primary_skill": "/a", "state_file": "x.json"}, "c": {"primary_skill": "/a"}},
			"safety": {"halt_file": "x.json"}}`, "is also /domains/a/state_file"},
		{"domains and the active context", `{"active_context": {"path": "x.json"}, "domains": {"b": {"primary_skill": "/a", "state_file": "x.json"}},
			"safety": {"halt_file": "./x.json"}}`, "is also /active_context/path"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ce := loadErr(t, tt.raw)
			if !hasIssue(ce, "/safety/halt_file", tt.want) {
				t.Errorf("want /safety/halt_file: %q, got %v", tt.want, ce)
			}
		})
	}
}
