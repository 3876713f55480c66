package state

import (
	"testing"
)

// confidence.json keeps its key order when a score changes, at the top and
// inside the domain entry that changed: the changed values are written
// where they were, keys the file lacked go at the end, and every domain
// whose score did not change is written back as it was read (1.0, 0.10,
// null, its key order, its & and <).
func TestKeptMore_ConfidenceKeyOrder(t *testing.T) {
	now := FormatTime(testNow)
	cases := []struct {
		name, file, want string
	}{{
		name: "nested",
		file: `{"updated_by": "framework & co",
		  "domains": {
		    "test_coverage": {"last_updated": "2026-04-01T00:00:00Z", "score": 1.0, "recent_outcomes": [], "note": "<quiet>"},
		    "service_health": {"recent_outcomes": [{"type": "merged", "pr": 3, "date": "2026-04-02", "delta": 0.10}], "score": 0.50, "last_updated": null},
		    "backlog": null,
		    "implementation": 0.70
		  },
		  "schema_version": "1.0.0", "z_last": true}`,
		want: `{"updated_by":"framework & co","domains":{` +
			`"test_coverage":{"last_updated":"2026-04-01T00:00:00Z","score":1.0,"recent_outcomes":[],"note":"<quiet>"},` +
			`"service_health":{"recent_outcomes":[{"type":"merged","pr":3,"date":"2026-04-02","delta":0.10}],"score":0.6,"last_updated":"` + now + `"},` +
			`"backlog":null,"implementation":0.70,` +
			`"ux_evolution":{"score":0.5,"last_updated":"` + now + `"}},` +
			`"schema_version":"1.0.0","z_last":true}`,
	}, {
		name: "flat",
		file: `{"test_coverage": 1.0, "service_health": 0.50, "updated_by": "a & b", "backlog": "0.7", "implementation": null}`,
		want: `{"test_coverage":1.0,"service_health":0.6,"updated_by":"a & b","backlog":"0.7","implementation":null,"schema_version":"1.0.0","ux_evolution":0.5}`,
	}}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := New(t.TempDir())
			writeFile(t, s.EvolvePath(ConfidenceFile), c.file)
			conf := loadClean(t, s).Confidence
			if err := s.SaveConfidence(conf); err != nil {
				t.Fatal(err)
			}
			if got, want := keptCompact(t, []byte(readString(t, s.EvolvePath(ConfidenceFile)))), keptCompact(t, []byte(c.file)); got != want &&
				// A file without schema_version gains it, at its end.
				got != want[:len(want)-1]+`,"schema_version":"1.0.0"}` {
				t.Errorf("written back unchanged:\n got  %s\n want %s", got, want)
			}
			conf = loadClean(t, s).Confidence
			conf.Set("service_health", 0.6, testNow)
			conf.Set("ux_evolution", 0.5, testNow)
			if err := s.SaveConfidence(conf); err != nil {
				t.Fatal(err)
			}
			if got := keptCompact(t, []byte(readString(t, s.EvolvePath(ConfidenceFile)))); got != c.want {
				t.Errorf("after two scores changed:\n got  %s\n want %s", got, c.want)
			}
		})
	}
}

// A confidence.json no one wrote before starts with its schema version.
func TestKeptMore_NewConfidenceFile(t *testing.T) {
	s := New(t.TempDir())
	c := NewConfidence()
	c.Set("backlog", 0.5, testNow)
	c.Set("a_first", 0.4, testNow)
	if err := s.SaveConfidence(c); err != nil {
		t.Fatal(err)
	}
	want := `{"schema_version":"1.0.0","domains":{"a_first":{"score":0.4,"last_updated":"` + FormatTime(testNow) + `"},"backlog":{"score":0.5,"last_updated":"` + FormatTime(testNow) + `"}}}`
	if got := keptCompact(t, []byte(readString(t, s.EvolvePath(ConfidenceFile)))); got != want {
		t.Errorf("new file:\n got  %s\n want %s", got, want)
	}
}
