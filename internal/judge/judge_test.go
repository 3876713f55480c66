package judge

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ooda-loop/ooda/internal/config"
	"github.com/ooda-loop/ooda/internal/proc"
)

// project is a temporary project root holding a scripted judge.
type project struct {
	dir string
}

func newProject(t *testing.T) *project {
	t.Helper()
	return &project{dir: t.TempDir()}
}

// judge writes body as the /bin/sh script judge.sh in the project root and
// returns a Judge running it as "./judge.sh", so the relative command also
// shows that it runs in the project root.
func (p *project) judge(t *testing.T, body, timeout string) *Judge {
	t.Helper()
	script := "#!/bin/sh\n" + body
	if err := os.WriteFile(filepath.Join(p.dir, "judge.sh"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	j, err := New(config.Judge{Command: []string{"./judge.sh"}, Timeout: timeout}, p.dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	return j
}

// received is the request the judge copied to stdin.json.
func (p *project) received(t *testing.T) map[string]any {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(p.dir, "stdin.json"))
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("request %s: %v", b, err)
	}
	return m
}

// goalReq is a request whose default is an object.
var goalReq = Request{
	Kind:    KindGoalVerdict,
	Prompt:  "Did cycle 12 achieve its goal?",
	Facts:   map[string]any{"cycle": 12, "result_type": "pr_merged"},
	Default: map[string]any{"achieved": true, "reason": "PR merged", "confidence": 0.6},
}

const goalDefault = `{"achieved":true,"confidence":0.6,"reason":"PR merged"}`

func assertDefault(t *testing.T, r Response, errPart string) {
	t.Helper()
	if r.Source != SourceDefault || string(r.Answer) != goalDefault {
		t.Errorf("got %s from %s, want the default", r.Answer, r.Source)
	}
	if !strings.Contains(r.Error, errPart) {
		t.Errorf("Error %q does not contain %q", r.Error, errPart)
	}
}

func TestJudgeProtocol_AnswerFromJudge(t *testing.T) {
	p := newProject(t)
	// Copy the request, then echo its kind back from inside it.
	j := p.judge(t, `cat > stdin.json
kind=$(sed -n 's/.*"kind":"\([a-z_]*\)".*/\1/p' stdin.json)
printf '{"answer": {"achieved": false, "reason": "%s from %s"}, "note": "ignored"}\n' "$kind" "$(pwd)"
`, "")
	r := j.Ask(context.Background(), goalReq)
	if r.Source != SourceJudge || r.Error != "" {
		t.Fatalf("Response %+v", r)
	}
	var ans struct {
		Achieved bool
		Reason   string
	}
	if err := json.Unmarshal(r.Answer, &ans); err != nil {
		t.Fatal(err)
	}
	dir, _ := filepath.EvalSymlinks(p.dir)
	if ans.Achieved || (ans.Reason != "goal_verdict from "+dir && ans.Reason != "goal_verdict from "+p.dir) {
		t.Errorf("answer %s", r.Answer)
	}

	got := p.received(t)
	want := map[string]any{
		"version": 1.0,
		"kind":    "goal_verdict",
		"prompt":  "Did cycle 12 achieve its goal?",
		"facts":   map[string]any{"cycle": 12.0, "result_type": "pr_merged"},
		"default": map[string]any{"achieved": true, "reason": "PR merged", "confidence": 0.6},
	}
	gb, _ := json.Marshal(got)
	wb, _ := json.Marshal(want)
	if string(gb) != string(wb) {
		t.Errorf("judge received %s\nwant %s", gb, wb)
	}
}

func TestJudgeProtocol_RequestIsOneLineOfJSON(t *testing.T) {
	p := newProject(t)
	j := p.judge(t, `cat > stdin.json; echo '{"answer": "fine"}'`, "")
	r := j.Ask(context.Background(), Request{Kind: KindOrientSummary, Prompt: "Summarise.", Default: "nothing changed"})
	if r.Source != SourceJudge || string(r.Answer) != `"fine"` {
		t.Fatalf("Response %+v", r)
	}
	b, _ := os.ReadFile(filepath.Join(p.dir, "stdin.json"))
	if want := `{"version":1,"kind":"orient_summary","prompt":"Summarise.","facts":{},"default":"nothing changed"}` + "\n"; string(b) != want {
		t.Errorf("stdin %q, want %q", b, want)
	}
}

func TestJudgeProtocol_NoCommandGivesDefault(t *testing.T) {
	j, err := New(config.Judge{}, t.TempDir(), proc.RunnerFunc(func(context.Context, proc.Spec) proc.Result {
		t.Error("a process was started without a judge command")
		return proc.Result{}
	}))
	if err != nil {
		t.Fatal(err)
	}
	var nilJudge *Judge
	for _, j := range []*Judge{j, nilJudge} {
		if j.Enabled() {
			t.Error("Enabled() without a command")
		}
		r := j.Ask(context.Background(), goalReq)
		if r.Source != SourceDefault || string(r.Answer) != goalDefault || r.Error != "" {
			t.Errorf("Response %+v", r)
		}
	}
}

func TestJudgeProtocol_FailuresFallBackToDefault(t *testing.T) {
	for name, tc := range map[string]struct{ script, errPart string }{
		"garbage":        {`echo 'I think yes'`, `output is not a JSON object: "I think yes"`},
		"nothing":        {`cat >/dev/null`, "printed nothing"},
		"exit 1":         {`echo '{"answer": {"achieved": false}}'; exit 1`, "exited with status 1"},
		"declined":       {`echo '{"error": "x"}'`, "declined: x"},
		"error wins":     {`echo '{"answer": {"achieved": false}, "error": "unsure"}'`, "declined: unsure"},
		"no answer":      {`echo '{"verdict": true}'`, `no "answer"`},
		"null answer":    {`echo '{"answer": null}'`, `no "answer"`},
		"wrong type":     {`echo '{"answer": "yes"}'`, "answer is a string, the default is an object"},
		"two documents":  {`echo '{"answer": {}}'; echo '{"answer": {}}'`, "more than the one JSON object"},
		"stderr mixed":   {`echo 'warning: slow' >&2; echo '{"answer": {}}'`, "not a JSON object"},
		"not an object":  {`echo '[{"answer": {}}]'`, "not a JSON object"},
		"trailing stuff": {`echo '{"answer": {}} ok'`, "more than the one JSON object"},
	} {
		t.Run(name, func(t *testing.T) {
			p := newProject(t)
			j := p.judge(t, tc.script, "")
			r := j.Ask(context.Background(), goalReq)
			assertDefault(t, r, tc.errPart)
			if !strings.HasPrefix(r.Error, "judge ./judge.sh") {
				t.Errorf("Error %q does not name the judge", r.Error)
			}
		})
	}
}

func TestJudgeProtocol_Timeout(t *testing.T) {
	p := newProject(t)
	j := p.judge(t, `sleep 30; echo '{"answer": {}}'`, "200ms")
	start := time.Now()
	r := j.Ask(context.Background(), goalReq)
	assertDefault(t, r, "did not answer within 200ms")
	if e := time.Since(start); e > 5*time.Second {
		t.Errorf("Ask took %v", e)
	}
}

func TestJudgeProtocol_OutputLimit(t *testing.T) {
	p := newProject(t)
	// An endless writer must be stopped at the limit, not at the timeout.
	j := p.judge(t, `exec yes '{"answer": {}}'`, "30s")
	start := time.Now()
	r := j.Ask(context.Background(), goalReq)
	assertDefault(t, r, "printed more than 1048576 bytes")
	if e := time.Since(start); e > 10*time.Second {
		t.Errorf("Ask took %v", e)
	}
}

func TestJudgeProtocol_OutputJustUnderLimit(t *testing.T) {
	p := newProject(t)
	// A long string answer still within MaxOutput is accepted.
	j := p.judge(t, `printf '{"answer": "'; head -c 1000000 /dev/zero | tr '\0' a; printf '"}'`, "")
	r := j.Ask(context.Background(), Request{Kind: KindCritique, Default: "lesson"})
	if r.Source != SourceJudge || len(r.Answer) != 1000002 {
		t.Errorf("Source %s, %d bytes, Error %q", r.Source, len(r.Answer), r.Error)
	}
}

func TestJudgeProtocol_CannotStart(t *testing.T) {
	dir := t.TempDir()
	j, err := New(config.Judge{Command: []string{"./missing-judge"}}, dir, nil)
	if err != nil || !j.Enabled() {
		t.Fatal(err)
	}
	assertDefault(t, j.Ask(context.Background(), goalReq), "judge ./missing-judge cannot be started")
}

func TestJudgeProtocol_Canceled(t *testing.T) {
	p := newProject(t)
	j := p.judge(t, `sleep 30`, "")
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(100*time.Millisecond, cancel)
	start := time.Now()
	assertDefault(t, j.Ask(ctx, goalReq), "interrupted")
	if e := time.Since(start); e > 5*time.Second {
		t.Errorf("Ask took %v", e)
	}
}

func TestJudgeProtocol_HaltFile(t *testing.T) {
	p := newProject(t)
	j := p.judge(t, `touch started; echo '{"answer": {}}'`, "")
	j.HaltFile = filepath.Join(p.dir, "HALT")
	if err := os.WriteFile(j.HaltFile, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	assertDefault(t, j.Ask(context.Background(), goalReq), "HALT")
	if _, err := os.Stat(filepath.Join(p.dir, "started")); err == nil {
		t.Error("the judge ran although HALT existed")
	}
}

func TestJudgeProtocol_NullDefaultAcceptsAnyAnswer(t *testing.T) {
	p := newProject(t)
	j := p.judge(t, `echo '{"answer": [1, 2]}'`, "")
	r := j.Ask(context.Background(), Request{Kind: KindArtifactCritic})
	if r.Source != SourceJudge || string(r.Answer) != "[1, 2]" {
		t.Errorf("Response %+v", r)
	}
}

func TestJudgeProtocol_UnencodableDefault(t *testing.T) {
	j, _ := New(config.Judge{Command: []string{"true"}}, t.TempDir(), proc.RunnerFunc(func(context.Context, proc.Spec) proc.Result {
		t.Error("judge asked without a default")
		return proc.Result{}
	}))
	r := j.Ask(context.Background(), Request{Kind: KindCompletion, Default: make(chan int)})
	if r.Source != SourceDefault || string(r.Answer) != "null" || !strings.Contains(r.Error, "cannot be encoded") {
		t.Errorf("Response %+v", r)
	}
}

// TestSpec checks what the runner is asked to do, without a process.
func TestJudgeProtocol_Spec(t *testing.T) {
	var got proc.Spec
	runner := proc.RunnerFunc(func(_ context.Context, s proc.Spec) proc.Result {
		got = s
		s.Output.Write([]byte(`{"answer": {"done": true, "reason": "all goals met"}}`))
		return proc.Result{ExitCode: 0}
	})
	j, err := New(config.Judge{Command: []string{"llm-judge", "--fast"}}, "/srv/project", runner)
	if err != nil {
		t.Fatal(err)
	}
	j.Env = []string{"PATH=/usr/bin"}
	r := j.Ask(context.Background(), Request{Kind: KindCompletion, Default: map[string]any{"done": false, "reason": ""}})
	if r.Source != SourceJudge || string(r.Answer) != `{"done": true, "reason": "all goals met"}` {
		t.Errorf("Response %+v", r)
	}
	if strings.Join(got.Argv, " ") != "llm-judge --fast" || got.Dir != "/srv/project" ||
		got.Timeout != DefaultTimeout || j.Timeout() != DefaultTimeout ||
		strings.Join(got.Env, ",") != "PATH=/usr/bin" || got.Output == nil || got.KillGrace <= 0 {
		t.Errorf("Spec %+v", got)
	}
}

func TestJudgeProtocol_NewErrors(t *testing.T) {
	j, err := New(config.Judge{Command: []string{"judge"}, Timeout: "soon"}, "", nil)
	if err == nil || !strings.Contains(err.Error(), `judge.timeout: "soon"`) || !j.Enabled() || j.Timeout() != DefaultTimeout {
		t.Errorf("bad timeout: %v, enabled %v, timeout %v", err, j.Enabled(), j.Timeout())
	}
	j, err = New(config.Judge{Command: []string{"judge"}, Timeout: "-1s"}, "", nil)
	if err == nil || j.Timeout() != DefaultTimeout {
		t.Errorf("negative timeout: %v", err)
	}
	j, err = New(config.Judge{Command: []string{""}}, "", nil)
	if err == nil || j.Enabled() {
		t.Errorf("empty program: %v, enabled %v", err, j.Enabled())
	}
	j, err = New(config.Judge{Command: []string{"judge"}, Timeout: "90s"}, "", nil)
	if err != nil || j.Timeout() != 90*time.Second {
		t.Errorf("90s: %v, %v", err, j.Timeout())
	}
}
