package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"

	"github.com/ooda-loop/ooda/internal/judge"
	"github.com/ooda-loop/ooda/internal/notify"
	"github.com/ooda-loop/ooda/internal/orient"
	"github.com/ooda-loop/ooda/internal/record"
	"github.com/ooda-loop/ooda/internal/state"
)

// judgeFor returns the configured judge, or nil without one. A judge is
// a program run in the project: a run log still being made durable
// (saveRunLogAsync) is on disk before it can start.
func (c *cycle) judgeFor() *judge.Judge {
	if len(c.cfg.Judge.Command) > 0 {
		c.awaitRunLog(c.runLog)
	}
	if c.judge != nil || len(c.cfg.Judge.Command) == 0 {
		return c.judge
	}
	j, err := judge.New(c.cfg.Judge, c.store.Root, c.opts.Runner)
	if err != nil {
		c.printf("[WARN] judge: %v", err)
	}
	if j != nil {
		j.HaltFile = c.haltPath()
	}
	c.judge = j
	return j
}

// judgedSummary lets a judge write the 2-E world model; the deterministic
// summary is the default and the answer in a dry run.
func (c *cycle) judgedSummary(ctx context.Context, def string, facts map[string]any) string {
	j := c.judgeFor()
	if j == nil || !j.Enabled() || c.opts.DryRun {
		return def
	}
	r := j.Ask(ctx, judge.Request{Kind: judge.KindOrientSummary, Default: def, Facts: facts,
		Prompt: "Write the loop's world model in 2-3 sentences (at most 500 characters): what changed since the previous summary, what is urgent, what to focus on. Use only the facts given."})
	if r.Error != "" {
		c.printf("[WARN] judge (orient summary): %s; using the default.", r.Error)
	}
	var s string
	if r.Source == judge.SourceJudge && json.Unmarshal(r.Answer, &s) == nil && strings.TrimSpace(s) != "" {
		return orient.Truncate(s, orient.SummaryMax)
	}
	return def
}

// judgedCritique lets a judge write the 5-F critique and lesson; the
// verdict stays the deterministic one.
func (c *cycle) judgedCritique(ctx context.Context, r state.Reflection) state.Reflection {
	j := c.judgeFor()
	if j == nil || !j.Enabled() {
		return r
	}
	type answer struct {
		Critique string `json:"critique"`
		Lesson   string `json:"lesson"`
	}
	resp := j.Ask(ctx, judge.Request{Kind: judge.KindCritique, Default: answer{r.Critique, r.Lesson},
		Facts:  map[string]any{"cycle": r.Cycle, "domain": r.Domain, "skill": r.Skill, "result": r.Result, "verdict": r.Verdict},
		Prompt: "Critique this cycle's decision in one sentence, and give one imperative lesson of at most 20 words for future cycles."})
	if resp.Error != "" {
		c.printf("[WARN] judge (critique): %s; using the default.", resp.Error)
	}
	var a answer
	if resp.Source == judge.SourceJudge && json.Unmarshal(resp.Answer, &a) == nil {
		if strings.TrimSpace(a.Critique) != "" {
			r.Critique = strings.TrimSpace(a.Critique)
		}
		if w := strings.Fields(a.Lesson); len(w) > 0 {
			if len(w) > 20 {
				w = w[:20]
			}
			r.Lesson = strings.Join(w, " ")
		}
	}
	return r
}

// notifyCycle is 6-C7: the events of this cycle worth a human's attention
// go to every configured provider. Secrets are resolved at send time and
// never printed; a failing provider is a warning, never fatal.
func (c *cycle) notifyCycle(ctx context.Context, f record.Facts, resultType string) {
	if len(c.cfg.Notifications) == 0 || string(c.cfg.Notifications) == "null" {
		return
	}
	var msgs []notify.Message
	name := c.cfg.Project.Name
	fields := map[string]string{"cycle": fmt.Sprint(f.Cycle), "domain": orDash(f.Domain), "result": resultType}
	if c.res.HaltCreated {
		reason := ""
		if _, r := c.store.HaltExists(c.cfg.Safety.HaltFile); r != "" {
			reason = r
		}
		msgs = append(msgs, notify.Message{Level: notify.LevelHalt, Title: name + ": loop halted", Text: reason, Fields: fields})
	}
	switch {
	case c.res.RolledBack:
		msgs = append(msgs, notify.Message{Level: notify.LevelHalt, Title: name + ": auto-merge rolled back", Text: fmt.Sprintf("PR #%d failed its post-merge health check and was reverted.", derefInt(f.PRNumber)), Fields: fields})
	case c.res.AutoMerged:
		msgs = append(msgs, notify.Message{Level: notify.LevelInfo, Title: name + ": PR auto-merged", Text: fmt.Sprintf("PR #%d was low-risk and merged; health ok.", derefInt(f.PRNumber)), Fields: fields})
	case f.PRNumber != nil:
		msgs = append(msgs, notify.Message{Level: notify.LevelInfo, Title: name + ": pull request for review", Text: fmt.Sprintf("%s opened PR #%d (Risk Tier %d).", orDash(f.Domain), *f.PRNumber, derefInt(f.RiskTier)), Fields: fields})
	}
	if f.Result == "error" && !c.res.HaltCreated {
		msgs = append(msgs, notify.Message{Level: notify.LevelWarning, Title: name + ": skill failed", Text: f.Error, Fields: fields})
	}
	if len(msgs) == 0 {
		return
	}
	c.send(ctx, msgs)
}

// notifiers holds one notifier per notifications block for the whole
// process: a provider disabled after 3 consecutive failures stays disabled
// for the rest of the process, across the cycles of a session.
var notifiers sync.Map // project root + config -> *notify.Notifier

func (c *cycle) send(ctx context.Context, msgs []notify.Message) {
	if len(c.cfg.Notifications) == 0 || string(c.cfg.Notifications) == "null" || len(msgs) == 0 {
		return
	}
	if c.notifier == nil {
		// Per project and configuration: a session of one project keeps its
		// notifier (and a disabled provider stays disabled), while another
		// project in the same process starts fresh.
		key := c.store.Root + "\x00" + string(c.cfg.Notifications)
		if v, ok := notifiers.Load(key); ok {
			c.notifier = v.(*notify.Notifier)
		} else {
			n, errs := notify.New(c.cfg.Notifications, nil, nil)
			for _, e := range errs {
				c.printf("[WARN] notifications: %v", e)
			}
			v, _ := notifiers.LoadOrStore(key, n)
			c.notifier = v.(*notify.Notifier)
		}
	}
	for _, m := range msgs {
		for _, e := range c.notifier.Send(ctx, m) {
			c.printf("[WARN] notification: %v", e)
		}
	}
}

// notifyHalt tells the providers about a HALT created outside Step 6 (the
// saturation breaker, a corrupt cost ledger), which ends the cycle early.
func (c *cycle) notifyHalt(ctx context.Context) {
	if !c.res.HaltCreated {
		return
	}
	_, reason := c.store.HaltExists(c.cfg.Safety.HaltFile)
	c.send(ctx, []notify.Message{{Level: notify.LevelHalt, Title: c.cfg.Project.Name + ": loop halted", Text: reason,
		Fields: map[string]string{"cycle": fmt.Sprint(c.res.Cycle), "reason": c.res.Reason}}})
}
