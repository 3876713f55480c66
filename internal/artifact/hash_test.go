package artifact

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

const baseRubric = `{"bar": 0.70, "bar_coast": 0.85, "__doc__": "latency rubric",
  "dimensions": [{"name": "latency", "weight": 2, "capture_method": "command", "capture_command": "sh load.sh",
    "targets": [{"metric": "p95_ms", "op": "<=", "value": 200}]}]}`

func mustHash(t *testing.T, raw string) string {
	t.Helper()
	h, err := Hash(json.RawMessage(raw))
	if err != nil {
		t.Fatalf("Hash(%s): %v", raw, err)
	}
	return h
}

// Re-indenting config.json, reordering keys, or respelling a number or a
// string keeps the hash, so such edits do not HALT.
func Test5G_RubricHashIgnoresLayout(t *testing.T) {
	want := mustHash(t, baseRubric)
	if len(want) != 64 {
		t.Fatalf("hash %q is not SHA-256 hex", want)
	}
	var indented, compact bytes.Buffer
	if err := json.Indent(&indented, []byte(baseRubric), "  ", "\t\t"); err != nil {
		t.Fatal(err)
	}
	if err := json.Compact(&compact, []byte(baseRubric)); err != nil {
		t.Fatal(err)
	}
	same := []string{
		indented.String(),
		compact.String(),
		// keys reordered, numbers respelled, a character escaped
		`{"dimensions": [{"targets": [{"value": 2e2, "op": "<=", "metric": "p95_ms"}], "capture_command": "sh load.sh",
		  "capture_method": "command", "weight": 2.0, "name": "l\u0061tency"}], "__doc__": "latency rubric", "bar_coast": 0.850, "bar": 7e-1}`,
	}
	for _, s := range same {
		if got := mustHash(t, s); got != want {
			t.Errorf("layout change altered the hash:\n%s", s)
		}
		in, err := CheckIntegrity("quality_rubric", json.RawMessage(s), want)
		if err != nil || in.Halt != "" || in.Record {
			t.Errorf("a re-laid-out rubric: %+v %v", in, err)
		}
	}
}

// Any change of meaning changes the hash.
func Test5G_RubricHashChangesWithMeaning(t *testing.T) {
	base := mustHash(t, baseRubric)
	changes := map[string][2]string{
		"bar lowered":       {`"bar": 0.70`, `"bar": 0.40`},
		"weight changed":    {`"weight": 2`, `"weight": 3`},
		"target loosened":   {`"value": 200`, `"value": 2000`},
		"op flipped":        {`"op": "<="`, `"op": ">="`},
		"command swapped":   {`"sh load.sh"`, `"echo '{\"p95_ms\":1}'"`},
		"doc edited":        {`"latency rubric"`, `"latency rubric!"`},
		"dimension renamed": {`"latency", "weight"`, `"Latency", "weight"`},
		"key added":         {`"bar": 0.70,`, `"bar": 0.70, "plateau_eps": 0.05,`},
		"number as string":  {`"value": 200`, `"value": "200"`},
	}
	for name, c := range changes {
		mutated := strings.Replace(baseRubric, c[0], c[1], 1)
		if mutated == baseRubric {
			t.Fatalf("%s: replacement did not apply", name)
		}
		if mustHash(t, mutated) == base {
			t.Errorf("%s: hash unchanged", name)
		}
	}
}

func Test5G_IntegrityRecordsHashOnFirstUse(t *testing.T) {
	in, err := CheckIntegrity("quality_rubric", json.RawMessage(baseRubric), "")
	if err != nil || !in.Record || in.Halt != "" || in.Hash != mustHash(t, baseRubric) {
		t.Errorf("first use: %+v %v", in, err)
	}
	in, err = CheckIntegrity("quality_rubric", json.RawMessage(baseRubric), "SHA256:"+strings.ToUpper(in.Hash))
	if err != nil || in.Record || in.Halt != "" {
		t.Errorf("recorded hash in another spelling: %+v %v", in, err)
	}
}

// The loop lowers its own bar: the recorded hash no longer matches, HALT.
func Test5G_IntegrityMutatedRubricHalts(t *testing.T) {
	recorded := mustHash(t, baseRubric)
	mutated := strings.Replace(baseRubric, `"bar": 0.70`, `"bar": 0.10`, 1)
	in, err := CheckIntegrity("domains.build.quality_rubric", json.RawMessage(mutated), recorded)
	if err != nil {
		t.Fatal(err)
	}
	if in.Halt == "" || in.Record {
		t.Fatalf("mutated rubric did not HALT: %+v", in)
	}
	for _, want := range []string{"config.json domains.build.quality_rubric", "checkpoints.json rubric_hash", recorded[:16]} {
		if !strings.Contains(in.Halt, want) {
			t.Errorf("HALT reason %q lacks %q", in.Halt, want)
		}
	}
	// A recorded value that is not a hash is not echoed into the HALT.
	in, _ = CheckIntegrity("quality_rubric", json.RawMessage(baseRubric), "\x1b[2Jfake")
	if in.Halt == "" || strings.Contains(in.Halt, "\x1b") {
		t.Errorf("hostile recorded hash: %q", in.Halt)
	}
	if _, err := CheckIntegrity("quality_rubric", json.RawMessage(`{"bar":`), recorded); err == nil || !strings.HasPrefix(err.Error(), "quality_rubric: ") {
		t.Errorf("unhashable rubric: %v", err)
	}
}
