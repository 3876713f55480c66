package engine

import (
	"encoding/json"
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ooda-loop/ooda/internal/notify"
	"github.com/ooda-loop/ooda/internal/state"
)

// The engine's edges, end to end: notifications leave the process over
// HTTP (6-C7) and judgments go to a judge command. Servers are local
// httptest servers; judges are /bin/sh scripts.

// hook records what a notification endpoint received and answers with
// status.
type hook struct {
	mu     sync.Mutex
	status int
	body   string // response body
	reqs   []hookReq
}

type hookReq struct {
	Path string
	Body []byte
}

func newHook(t *testing.T, status int, body string) (*hook, *httptest.Server) {
	h := &hook{status: status, body: body}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		h.mu.Lock()
		h.reqs = append(h.reqs, hookReq{Path: r.URL.Path, Body: b})
		h.mu.Unlock()
		w.WriteHeader(h.status)
		_, _ = io.WriteString(w, h.body)
	}))
	t.Cleanup(srv.Close)
	return h, srv
}

func (h *hook) requests() []hookReq {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]hookReq(nil), h.reqs...)
}

// failingProject is one domain whose skill always fails, with the given
// notifications object and max_silent_failures.
func failingProject(t *testing.T, notifications string, maxSilent int) string {
	cfg := `{"project": {"name": "demo"},
	  "domains": {"only": {"weight": 1, "primary_skill": "/fail", "fallback": true}},
	  "skills": {"/fail": {"command": ["/bin/sh", "skill.sh"]}},
	  "progressive_complexity": {"current_level": 2},
	  "safety": {"skill_allowlist": ["/fail"], "first_cycle_observe_only": false, "max_silent_failures": ` + itoa(maxSilent) + `},
	  "notifications": ` + notifications + `}`
	return project(t, cfg, map[string]string{"skill.sh": "echo boom >&2; exit 1\n"})
}

func itoa(n int) string {
	b, _ := json.Marshal(n)
	return string(b)
}

// 4-B + 6-C7: the third consecutive failure creates the HALT, and the
// webhook receives a halt notification whose text is the HALT's reason.
// The two failures before it are announced as warnings.
func TestNotify_SilentFailureHaltReachesTheWebhook(t *testing.T) {
	h, srv := newHook(t, http.StatusOK, "")
	t.Setenv("HOOK_URL", srv.URL+"/hook")
	dir := failingProject(t, `{"webhook": {"enabled": true, "url": "$HOOK_URL"}}`, 3)
	for i := 0; i < 3; i++ {
		res, out := run(t, dir, t0.Add(time.Duration(i)*time.Hour), false)
		if res.Result != "error" || res.HaltCreated != (i == 2) {
			t.Fatalf("cycle %d: %+v\n%s", i+1, res, out)
		}
		if strings.Contains(out, "[WARN] notification") {
			t.Errorf("cycle %d: delivery failed:\n%s", i+1, out)
		}
	}
	reqs := h.requests()
	if len(reqs) != 3 {
		t.Fatalf("webhook got %d requests, want 3 (2 warnings, 1 halt)", len(reqs))
	}
	var msgs []notify.Message
	for _, r := range reqs {
		var m notify.Message
		if err := json.Unmarshal(r.Body, &m); err != nil || r.Path != "/hook" {
			t.Fatalf("request %s %q: %v", r.Path, r.Body, err)
		}
		msgs = append(msgs, m)
	}
	for i, m := range msgs[:2] {
		if m.Level != notify.LevelWarning || m.Title != "demo: skill failed" || m.Fields["cycle"] != itoa(i+1) {
			t.Errorf("warning %d = %+v", i+1, m)
		}
	}
	halt, err := os.ReadFile(filepath.Join(dir, "agent/safety/HALT"))
	if err != nil {
		t.Fatal(err)
	}
	m := msgs[2]
	if m.Level != notify.LevelHalt || m.Title != "demo: loop halted" || m.Text != strings.TrimSpace(string(halt)) ||
		!strings.HasPrefix(m.Text, "3 consecutive skill executions failed.") || m.Fields["cycle"] != "3" || m.Fields["domain"] != "only" {
		t.Errorf("halt notification = %+v\nHALT file: %q", m, halt)
	}
}

// 6-C7 on the saturation HALT of 2-A2: it is a HALT the engine creates
// like the silent-failure one, so it is notified like it.
func TestNotify_SaturationHaltReachesTheWebhook(t *testing.T) {
	h, srv := newHook(t, http.StatusOK, "")
	t.Setenv("HOOK_URL", srv.URL+"/hook")
	dir := quietProject(t, nil)
	cfgPath := filepath.Join(dir, "config.json")
	b, _ := os.ReadFile(cfgPath)
	// A low halt threshold keeps the run short: cycle 4 sees 3 cycles
	// without output.
	cfg := strings.Replace(string(b), `"progressive_complexity"`, `"saturation": {"warn_threshold": 5, "boost_threshold": 10, "halt_threshold": 3, "auto_halt": true},
	  "notifications": {"webhook": {"enabled": true, "url": "$HOOK_URL"}}, "progressive_complexity"`, 1)
	write(t, cfgPath, cfg)
	for k := 1; k <= 3; k++ {
		mustComplete(t, dir, t0.Add(time.Duration(k-1)*time.Hour))
	}
	res, out := run(t, dir, t0.Add(3*time.Hour), false)
	if !res.HaltCreated {
		t.Fatalf("cycle 4 must halt: %+v\n%s", res, out)
	}
	var halts []notify.Message
	for _, r := range h.requests() {
		var m notify.Message
		if json.Unmarshal(r.Body, &m) == nil && m.Level == notify.LevelHalt {
			halts = append(halts, m)
		}
	}
	if len(halts) != 1 || !strings.HasPrefix(halts[0].Text, "Observation saturation: 3 cycles") {
		t.Errorf("the saturation HALT was not notified: halt messages %+v", halts)
	}
}

// 6-C7: secrets are $ENV references resolved at send time and never
// printed. The Telegram server even quotes the token back in its error;
// neither the engine's output nor any file it writes may contain it.
func TestNotify_TelegramTokenNeverShownOrStored(t *testing.T) {
	const token = "7781234567:AAF-distinctive-Secret-Token_zz9"
	h, srv := newHook(t, http.StatusUnauthorized, `{"ok":false,"description":"Unauthorized: bot`+token+` was revoked"}`)
	t.Setenv("TG_TOKEN", token)
	t.Setenv("TG_CHAT", "424242")
	dir := failingProject(t, `{"telegram": {"enabled": true, "bot_token": "$TG_TOKEN", "chat_id": "$TG_CHAT", "api_url": "`+srv.URL+`"}}`, 3)
	var all strings.Builder
	for i := 0; i < 3; i++ {
		_, out := run(t, dir, t0.Add(time.Duration(i)*time.Hour), false)
		all.WriteString(out)
	}
	reqs := h.requests()
	if len(reqs) == 0 || reqs[0].Path != "/bot"+token+"/sendMessage" || !strings.Contains(string(reqs[0].Body), `"chat_id":"424242"`) {
		t.Fatalf("telegram was not called with the resolved token: %+v", reqs)
	}
	out := all.String()
	if !strings.Contains(out, "[WARN] notification: telegram: POST "+srv.URL+"/bot[REDACTED]/sendMessage: HTTP 401") {
		t.Errorf("the failure is not reported (redacted):\n%s", out)
	}
	if strings.Contains(out, token) || strings.Contains(out, "AAF-distinctive") {
		t.Errorf("the token appears in the engine's output:\n%s", out)
	}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if strings.Contains(string(b), token) || strings.Contains(string(b), "AAF-distinctive") {
			t.Errorf("the token is stored in %s", p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// 6-C7: "3 consecutive failures disable a provider for the rest of the
// process". RunCycle is called in-process, many times (a session loop, the
// demo, this test), so the process here spans the cycles: after the third
// failed delivery the webhook must not be called again.
//
// The engine builds its Notifier inside the cycle (cycle.notifier), so
// each cycle starts with fresh failure counts: with at most two messages
// per cycle the provider is never disabled, and a dead endpoint costs one
// warning (and up to one request timeout) per cycle forever.
func TestNotify_FailingProviderDisabledAfterThreeFailures(t *testing.T) {
	h, srv := newHook(t, http.StatusInternalServerError, "upstream down")
	t.Setenv("HOOK_URL", srv.URL+"/hook")
	// No HALT during the run: every cycle fails its skill and sends one
	// "skill failed" warning.
	dir := failingProject(t, `{"webhook": {"enabled": true, "url": "$HOOK_URL"}}`, 100)
	var warned []int
	disabledAt := 0
	for k := 1; k <= 5; k++ {
		res, out := run(t, dir, t0.Add(time.Duration(k-1)*time.Hour), false)
		if res.Status != StatusCompleted || res.Result != "error" {
			t.Fatalf("a failing provider is never fatal: cycle %d %+v\n%s", k, res, out)
		}
		if strings.Contains(out, "[WARN] notification: webhook: POST $HOOK_URL: HTTP 500") {
			warned = append(warned, k)
		}
		if strings.Contains(out, "disabled for the rest of this process after 3 consecutive failures") && disabledAt == 0 {
			disabledAt = k
		}
	}
	if n := len(h.requests()); n != 3 || disabledAt != 3 || len(warned) != 3 {
		t.Errorf("webhook called %d times (want 3), disabled at cycle %d (want 3), failure warnings in cycles %v (want [1 2 3])", n, disabledAt, warned)
	}
}

// A judge that answers orient summaries with a fixed sentence and
// critiques with a fixed lesson, and declines anything else. It logs the
// kinds it was asked.
const fixedJudge = `#!/bin/sh
in=$(cat)
case "$in" in
*'"kind":"orient_summary"'*)
  echo orient_summary >> judge-calls.txt
  printf '{"answer": "Judge: service_health is the only thing worth a look today."}\n' ;;
*'"kind":"critique"'*)
  echo critique >> judge-calls.txt
  printf '{"answer": {"critique": "The scan was cheap and on target.", "lesson": "Keep service_health scans short and run them first."}}\n' ;;
*)
  printf '{"error": "not my kind"}\n' ;;
esac
`

func judgeConfig() string {
	return strings.Replace(threeDomains, `"progressive_complexity"`, `"judge": {"command": ["/bin/sh", "judge.sh"], "timeout": "20s"}, "progressive_complexity"`, 1)
}

// 2-E and 5-F with a judge: the judge's sentence is the decision-log
// entry's orient_summary and its lesson is the reflection's; the verdict
// stays deterministic.
func TestJudge_ScriptedSummaryIsTheOrientSummary(t *testing.T) {
	const sentence = "Judge: service_health is the only thing worth a look today."
	dir := project(t, judgeConfig(), map[string]string{"skill.sh": skillScript, "judge.sh": fixedJudge})
	res, out := mustComplete(t, dir, t0)
	if !strings.Contains(out, "[Orient] "+sentence) {
		t.Errorf("the judged summary is not printed:\n%s", out)
	}
	st := loadState(t, dir)
	if e := st.DecisionLog[len(st.DecisionLog)-1]; e.OrientSummary != sentence || e.Cycle != res.Cycle {
		t.Errorf("decision entry orient_summary = %q", e.OrientSummary)
	}
	var rs state.Reflections
	evolveJSON(t, dir, "reflections.json", &rs)
	if len(rs.Reflections) != 1 {
		t.Fatalf("reflections = %+v", rs.Reflections)
	}
	r := rs.Reflections[0]
	if r.Lesson != "Keep service_health scans short and run them first." || r.Critique != "The scan was cheap and on target." || r.Verdict != "hit" {
		t.Errorf("reflection = %+v", r)
	}
	calls, _ := os.ReadFile(filepath.Join(dir, "judge-calls.txt"))
	if string(calls) != "orient_summary\ncritique\n" {
		t.Errorf("judge calls = %q", calls)
	}
	// A dry run answers with the default and never starts the judge.
	_, out = run(t, dir, t0.Add(time.Hour), true)
	calls2, _ := os.ReadFile(filepath.Join(dir, "judge-calls.txt"))
	if string(calls2) != string(calls) || strings.Contains(out, sentence) {
		t.Errorf("a dry run asked the judge: calls %q\n%s", calls2, out)
	}
}

// A judge that prints garbage is ignored: the deterministic summary (the
// same one a twin project without a judge gets) is recorded, a warning
// says why, and the cycle completes.
func TestJudge_GarbageFallsBackToTheDeterministicSummary(t *testing.T) {
	garbage := "#!/bin/sh\ncat > /dev/null\necho 'Sure! Here is my answer: the loop is fine :)'\n"
	dir := project(t, judgeConfig(), map[string]string{"skill.sh": skillScript, "judge.sh": garbage})
	twin := project(t, threeDomains, map[string]string{"skill.sh": skillScript})
	res, out := run(t, dir, t0, false)
	if res.Status != StatusCompleted || res.Result != "success" {
		t.Fatalf("the cycle must complete: %+v\n%s", res, out)
	}
	if !strings.Contains(out, "[WARN] judge (orient summary): judge /bin/sh: output is not a JSON object") ||
		!strings.Contains(out, "[WARN] judge (critique):") {
		t.Errorf("the fallback is not explained:\n%s", out)
	}
	mustComplete(t, twin, t0)
	got, want := loadState(t, dir).DecisionLog[0], loadState(t, twin).DecisionLog[0]
	if got.OrientSummary == "" || got.OrientSummary != want.OrientSummary {
		t.Errorf("orient_summary = %q, want the deterministic %q", got.OrientSummary, want.OrientSummary)
	}
	var a, b state.Reflections
	evolveJSON(t, dir, "reflections.json", &a)
	evolveJSON(t, twin, "reflections.json", &b)
	if len(a.Reflections) != 1 || len(b.Reflections) != 1 || a.Reflections[0].Lesson != b.Reflections[0].Lesson || a.Reflections[0].Critique != b.Reflections[0].Critique {
		t.Errorf("critique with a garbage judge %+v, without a judge %+v", a.Reflections, b.Reflections)
	}
}
