package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/ooda-loop/ooda/examples"
	"github.com/ooda-loop/ooda/internal/engine"
	"github.com/ooda-loop/ooda/internal/forge"
	"github.com/ooda-loop/ooda/internal/proc"
	"github.com/ooda-loop/ooda/internal/safetext"
	"github.com/ooda-loop/ooda/internal/secret"
)

// serviceDemoCycles is the length of the service example's story: a first
// look, the bug noticed twice (health, then tests), the fix as a pull
// request, your merge seen by the loop, the recovery.
const serviceDemoCycles = 8

// The service example's planted bug: a teammate's change drops the
// quantity from the cart's total. The scripted agent
// (examples/service/scripts/fix-agent.sh) puts it back.
const (
	serviceGood        = "total += it.PriceCents * it.Qty\n"
	serviceBug         = "total += it.PriceCents\n"
	serviceBugSubject  = "cart: simplify Total"
	serviceHealthHolde = "http://127.0.0.1:8080/health"
	serviceGoMod       = "module example.com/shop\n\ngo 1.22\n"
)

// serviceDemoTools checks that what the service example runs is
// installed: git for its repository and pull requests, go for its tests
// and linters.
func serviceDemoTools() error {
	for _, tool := range []string{"git", "go"} {
		if _, err := proc.LookPath(tool); err != nil {
			return fmt.Errorf("ooda demo: the example service needs %s on PATH (%v); `ooda demo --example quickstart` needs only sh", tool, err)
		}
	}
	return nil
}

// demoService stands in for the running shop service: its /health
// answers 200, or 500 while the demo says the deployed code is broken.
type demoService struct {
	broken atomic.Bool
	srv    *http.Server
	url    string
}

func startDemoService() (*demoService, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("ooda demo: cannot serve the example's health check on 127.0.0.1: %w", err)
	}
	s := &demoService{url: "http://" + ln.Addr().String() + "/health"}
	mux := http.NewServeMux()
	mux.HandleFunc("/health", func(w http.ResponseWriter, _ *http.Request) {
		if s.broken.Load() {
			http.Error(w, "cart totals are wrong", http.StatusInternalServerError)
			return
		}
		_, _ = w.Write([]byte("ok\n"))
	})
	s.srv = &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = s.srv.Serve(ln) }()
	return s, nil
}

// runService tells the service example's story: each cycle is real, the
// people around the loop are played by the demo between cycles, and each
// step says so.
func (d *demoRun) runService(ctx context.Context) error {
	if err := copyExample(examples.Service, exampleService, d.dir); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(d.dir, "go.mod"), []byte(serviceGoMod), 0o644); err != nil {
		return err
	}
	svc, err := startDemoService()
	if err != nil {
		return err
	}
	defer svc.srv.Close()
	cfgPath := filepath.Join(d.dir, "config.json")
	raw, err := os.ReadFile(cfgPath)
	if err != nil {
		return err
	}
	if err := os.WriteFile(cfgPath, bytes.Replace(raw, []byte(serviceHealthHolde), []byte(svc.url), 1), 0o644); err != nil {
		return err
	}
	d.load()
	if d.cfg == nil {
		return fmt.Errorf("ooda demo: %s does not load", cfgPath)
	}
	for _, args := range [][]string{
		{"init", "-q", "-b", "main"},
		// The identity and settings are the demo repository's own: the
		// user's signing or hooks must not get in the way of a throw-away
		// project.
		{"config", "user.name", "ooda demo"},
		{"config", "user.email", "demo@example.invalid"},
		{"config", "commit.gpgsign", "false"},
		{"config", "core.hooksPath", "/dev/null"},
		{"add", "-A"},
		{"commit", "-q", "-m", "The shop service"},
	} {
		if err := d.git(ctx, args...); err != nil {
			return err
		}
	}
	root, err := filepath.Abs(d.dir)
	if err != nil {
		return err
	}
	fg, err := forge.Select(ctx, d.cfg, root)
	if err != nil || fg == nil {
		return fmt.Errorf("ooda demo: the example's plain-git forge: %v", err)
	}
	d.forge = fg

	fmt.Fprintf(d.out, `ooda demo: the whole loop, %d cycles, on a tiny shop service in %s

The project is a Go service (cart.go, its tests, a /health endpoint) in a git
repository, watched by ooda's built-in skills: health, tests, lint and backlog;
dev-cycle turns the top action into a pull request. The demo serves the
service's health check and plays the people around the loop: a teammate who
pushes a bug, and you, who merge the fix. The coding agent is a script
(scripts/fix-agent.sh). The clock is simulated, %s between cycles.
No network, no language model. Health check: %s

`, d.o.cycles, d.dir, shortDuration(d.o.every), svc.url)

	n := &serviceNarrator{d: d}
	for i := 1; i <= d.o.cycles; i++ {
		if i == 2 {
			if err := d.plantBug(ctx); err != nil {
				return err
			}
			svc.broken.Store(true)
		}
		if i > 1 {
			merged, err := d.mergeOpenPR(ctx, fg)
			if err != nil {
				return err
			}
			if merged {
				svc.broken.Store(false)
				n.merged = true
			}
		}
		n.step = i
		if _, err := d.cycle(ctx, n); err != nil {
			return err
		}
		d.clk.Advance(d.o.every)
	}
	return nil
}

// git runs git in the demo's repository as of the simulated clock, with
// the environment a skill gets (no credentials).
func (d *demoRun) git(ctx context.Context, args ...string) error {
	at := d.clk.Now().Format(time.RFC3339)
	env := append(secret.ChildEnv(os.Environ(), nil, false),
		"GIT_AUTHOR_DATE="+at, "GIT_COMMITTER_DATE="+at, "GIT_TERMINAL_PROMPT=0")
	var out bytes.Buffer
	res := proc.Exec{}.Run(ctx, proc.Spec{Argv: append([]string{"git"}, args...), Dir: d.dir, Env: env,
		Timeout: 30 * time.Second, Output: &out, Light: true})
	if res.StartErr != nil || res.ExitCode != 0 {
		return fmt.Errorf("ooda demo: git %s in %s: exit %d %v: %s", strings.Join(args, " "), d.dir, res.ExitCode, res.StartErr, safetext.Text(strings.TrimSpace(out.String())))
	}
	return nil
}

// plantBug plays the teammate: a commit on main that breaks cart.go.
func (d *demoRun) plantBug(ctx context.Context) error {
	p := filepath.Join(d.dir, "cart.go")
	b, err := os.ReadFile(p)
	if err != nil {
		return err
	}
	if !bytes.Contains(b, []byte(serviceGood)) {
		return fmt.Errorf("ooda demo: %s does not hold the line the demo changes", p)
	}
	if err := os.WriteFile(p, bytes.Replace(b, []byte(serviceGood), []byte(serviceBug), 1), 0o644); err != nil {
		return err
	}
	if err := d.git(ctx, "commit", "-q", "-m", serviceBugSubject, "--", "cart.go"); err != nil {
		return err
	}
	fmt.Fprintf(d.out, `▶ A teammate pushes a change to main: %q. It has a bug: Total
  forgets the quantity. The new code is deployed, and /health now answers
  500. (The demo plays the teammate.)

`, serviceBugSubject)
	return nil
}

// mergeOpenPR plays you: the open pull request, if any, is reviewed and
// squash-merged through the forge, as a person merging it would.
func (d *demoRun) mergeOpenPR(ctx context.Context, fg forge.Forge) (bool, error) {
	st, err := fg.Status(ctx)
	if err != nil {
		return false, fmt.Errorf("ooda demo: listing the pull requests: %w", err)
	}
	if len(st.Open) == 0 {
		return false, nil
	}
	pr := st.Open[0]
	facts, err := fg.Facts(ctx, pr.Number)
	if err != nil {
		return false, fmt.Errorf("ooda demo: reading PR #%d: %w", pr.Number, err)
	}
	if err := fg.MergeSquash(ctx, pr.Number, facts.HeadSHA); err != nil {
		return false, fmt.Errorf("ooda demo: merging PR #%d: %w", pr.Number, err)
	}
	fmt.Fprintf(d.out, `▶ You review pull request #%d %q
  (branch %s: %s, +%d −%d lines)
  and merge it. The fix is deployed: /health answers 200 again. (The demo
  plays you. Nothing merges by itself unless you turn on
  safety.enable_auto_merge.)

`, pr.Number, safetext.Text(pr.Title), safetext.Text(pr.HeadRef), safetext.Text(strings.Join(facts.Files, ", ")), facts.Additions, facts.Deletions)
	return true, nil
}

// serviceNarrator says what each cycle of the service example did, in
// words a person who has never read the spec follows.
type serviceNarrator struct {
	d      *demoRun
	step   int
	merged bool
}

func (n *serviceNarrator) header(res engine.Result, log string) string {
	title := n.title(res)
	line := fmt.Sprintf("── Cycle %d of %d · %s ", n.step, n.d.o.cycles, title)
	if w := 78 - len([]rune(line)); w > 0 {
		line += strings.Repeat("─", w)
	}
	return line + "\n"
}

// title is the cycle's header: what happened, from the engine's own
// result and the winning domain's state file.
func (n *serviceNarrator) title(res engine.Result) string {
	if res.Status != engine.StatusCompleted {
		return "skipped (" + res.Reason + ")"
	}
	if res.ResultType == "observe" {
		return "First look: the loop reads the project, changes nothing yet"
	}
	if res.ResultType == "error" {
		return "A skill failed: the loop records why"
	}
	status, raw := n.domainState(res.Domain)
	switch res.Domain {
	case "service_health":
		switch {
		case status != "healthy" && res.ResultType != "futile":
			return "The service fails its health check: the loop notices"
		case status != "healthy":
			return "The service still fails its health check"
		case res.ResultType != "futile":
			return "The service is healthy again"
		}
		return "The service is healthy: nothing new"
	case "test_coverage":
		var ts string
		_ = json.Unmarshal(raw["test_status"], &ts)
		if ts != "" {
			status = ts
		}
		switch {
		case status == "failed" && res.ResultType == "action_extracted":
			return "The tests fail: the loop notices and queues a fix"
		case status == "failed":
			return "The tests still fail"
		case jsonNumber(raw["fixed_count"]) > 0 || strings.Contains(res.Summary, "fixed"):
			return "The tests pass again"
		}
		return "The tests pass"
	case "code_quality":
		if jsonNumber(raw["findings"]) > 0 {
			return "The linters find something to fix"
		}
		return "The linters (go vet, gofmt) find nothing"
	case "backlog":
		return "No issue tracker here: nothing to plan"
	case "implementation":
		if res.PRNumber != nil {
			return "It asks the coding agent for a fix: a pull request"
		}
		return "It asks the coding agent for a fix"
	}
	return res.Domain
}

// resultWords say what a result type means.
var resultWords = map[string]string{
	"observe":          "looked only: the first cycle never acts",
	"action_extracted": "the skill reported something new: a change, or work for the action queue",
	"pr_created":       "opened a pull request for a person to review",
	"futile":           "ran and found nothing new, so that domain waits longer next time",
	"error":            "the skill failed; the loop records a gap and goes on",
}

func (n *serviceNarrator) after(res engine.Result, log string) string {
	var b strings.Builder
	if n.merged {
		// Orient's own lines about the pull request your merge closed:
		// the confidence it raised and the outcome it corrected.
		var seen []string
		for _, l := range strings.Split(log, "\n") {
			if strings.HasPrefix(l, "[Orient] PR #") || strings.HasPrefix(l, "[Orient] Outcome back-annotated") || strings.HasPrefix(l, "[Orient] Action queue") {
				seen = append(seen, "    "+safetext.Text(strings.TrimPrefix(l, "[Orient] "))+"\n")
			}
		}
		if len(seen) > 0 {
			b.WriteString("  The loop saw your merge:\n" + strings.Join(seen, ""))
			n.merged = false
		}
	}
	if words, ok := resultWords[res.ResultType]; ok {
		fmt.Fprintf(&b, "  In plain words: %s = %s.\n", res.ResultType, words)
	}
	return b.String()
}

// domainState reads the status and the raw fields of a domain's state
// file; "" and nil when it has none.
func (n *serviceNarrator) domainState(domain string) (string, map[string]json.RawMessage) {
	spec, ok := n.d.cfg.Domains.Get(domain)
	if !ok || spec.StateFile == "" {
		return "", nil
	}
	ds, err := n.d.st.ReadDomainState(spec.StateFile)
	if err != nil {
		return "", nil
	}
	return ds.Status, ds.Raw
}

// jsonNumber is a state file's number, 0 when absent or not a number.
func jsonNumber(raw json.RawMessage) float64 {
	if len(raw) == 0 {
		return 0
	}
	f, err := strconv.ParseFloat(string(bytes.TrimSpace(raw)), 64)
	if err != nil {
		return 0
	}
	return f
}

// shortDuration is a duration as a person writes it: 4h, 90m, 1h30m.
func shortDuration(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}
