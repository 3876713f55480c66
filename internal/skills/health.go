package skills

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"os"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/ooda-loop/ooda/internal/act"
	"github.com/ooda-loop/ooda/internal/config"
	"github.com/ooda-loop/ooda/internal/safetext"
	"github.com/ooda-loop/ooda/internal/secret"
	"github.com/ooda-loop/ooda/internal/state"
)

func init() {
	register("health", Health{}, builtinContract("observe",
		"Check the HTTP endpoints of health_endpoints: status, latency, consecutive failures, alerts.", true))
}

// Health is the built-in "health" skill: it checks every URL of
// health_endpoints over HTTP and records, in the domain's state file, which
// answered as expected, how fast, and for how many runs in a row each has
// failed (docs/builtin-health.md).
type Health struct{}

// Describe names the executor.
func (Health) Describe() string { return "builtin health" }

// healthResult is one endpoint's check.
type healthResult struct {
	ep         HealthEndpoint
	ok         bool
	answered   bool
	statusCode int
	latencyMS  float64
	slow       bool
	refused    bool
	problem    string // why it failed, shown in the alert and summary
}

// Execute checks the endpoints and writes the state file and the report.
func (h Health) Execute(ctx context.Context, r act.Request) act.Response {
	start := time.Now()
	resp := act.Response{OK: true, Executor: h.Describe()}
	done := func() act.Response { resp.Elapsed = time.Since(start); return resp }
	fail := func(msg string) act.Response {
		resp.OK, resp.Error = false, msg
		healthLogf(r.Output, "health: %s\n", msg)
		return done()
	}
	e := newBuiltinEnv(r)
	cfg, now, store, statePath, reportPath := e.cfg, e.now, e.store, e.statePath, e.reportPath

	if len(cfg.HealthEndpoints) == 0 {
		f := false
		msg := "no health endpoints to check: list the URLs in health_endpoints in config.json (docs/builtin-health.md)"
		healthLogf(r.Output, "health: %s\n", msg)
		if err := healthWriteReport(store, reportPath, healthReport{HadOutput: &f, Summary: msg, CostUSD: 0}); err != nil {
			return fail(err.Error())
		}
		return done()
	}
	eps, err := ParseHealthEndpoints(cfg.HealthEndpoints, cfg.HealthCheckTimeout)
	if err != nil {
		// A monitor that skipped a mistyped endpoint would report healthy
		// while watching less than the user thinks.
		return fail(strings.ReplaceAll(err.Error(), "\n", "; "))
	}
	headers, warnings := healthExpandHeaders(eps, healthSkillPolicy(cfg, r.Skill), r.Skill)
	resp.Warnings = warnings

	prev := healthReadPrevious(store, statePath, r.Output)

	// The user information of a URL is a credential too: masked wherever
	// a message might echo it.
	for _, ep := range eps {
		if u := ep.URL.User; u != nil {
			pw, _ := u.Password()
			secret.Register(u.Username(), pw)
		}
	}

	parent := ctx
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	if r.Timeout > 0 {
		ctx, cancel = context.WithTimeout(ctx, r.Timeout)
		defer cancel()
	}
	halted := healthWatchHalt(ctx, r.HaltFile, cancel)

	client := h.client()
	results := make([]healthResult, len(eps))
	sem := make(chan struct{}, healthParallel)
	var wg sync.WaitGroup
	for i, ep := range eps {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			results[i] = healthCheck(ctx, client, ep, headers[i])
		}()
	}
	wg.Wait()
	if halted() {
		resp.Halted = true
		return fail("stopped: HALT file appeared during execution")
	}
	if parent.Err() != nil {
		resp.Canceled = true
		return fail("stopped: cycle canceled")
	}
	for _, res := range results {
		healthLogf(r.Output, "%s\n", res.logLine())
	}

	st, rep := healthEvaluate(results, prev, now)
	if statePath == "" {
		healthLogf(r.Output, "health: warning: no state file (OODA_STATE_FILE is empty): consecutive failures cannot be counted\n")
	} else if err := healthWriteJSON(store, statePath, st); err != nil {
		return fail(err.Error())
	}
	if err := healthWriteReport(store, reportPath, rep); err != nil {
		return fail(err.Error())
	}
	return done()
}

// client is the HTTP client of one run. Redirects are never followed: a
// 3xx answer is judged as it is, so a health URL cannot send the check (and
// its headers) to another host. Keep-alives are off: every check measures
// a whole connection, and nothing lingers after the run.
func (Health) client() *http.Client {
	return &http.Client{
		Transport: &http.Transport{
			Proxy:                  http.ProxyFromEnvironment,
			DialContext:            (&net.Dialer{KeepAlive: -1}).DialContext,
			TLSClientConfig:        &tls.Config{MinVersion: tls.VersionTLS12},
			DisableKeepAlives:      true,
			MaxResponseHeaderBytes: healthHeaderLimit,
			ForceAttemptHTTP2:      true,
		},
		CheckRedirect: func(*http.Request, []*http.Request) error {
			return http.ErrUseLastResponse
		},
	}
}

// healthCheck makes one request within the endpoint's timeout. Latency
// is the time to the response headers; at most healthBodyLimit bytes of
// the body are read, so a server streaming without end costs nothing.
func healthCheck(ctx context.Context, client *http.Client, ep HealthEndpoint, headers map[string]string) healthResult {
	res := healthResult{ep: ep}
	ctx, cancel := context.WithTimeout(ctx, ep.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, ep.Method, ep.URL.String(), nil)
	if err != nil {
		res.problem = "invalid request: " + healthClean(err.Error())
		return res
	}
	req.Header.Set("User-Agent", "ooda-health/1")
	for k, v := range headers {
		if strings.EqualFold(k, "Host") {
			req.Host = v
			continue
		}
		req.Header.Set(k, v)
	}
	begin := time.Now()
	r, err := client.Do(req)
	if err != nil {
		res.problem, res.refused = healthDescribeError(err, ep.Timeout)
		return res
	}
	res.latencyMS = healthRoundMS(time.Since(begin))
	_, _ = io.CopyN(io.Discard, r.Body, healthBodyLimit)
	r.Body.Close()
	res.answered = true
	res.statusCode = r.StatusCode
	res.ok = healthExpected(ep.Expected, r.StatusCode)
	if !res.ok {
		res.problem = fmt.Sprintf("HTTP %d, expected %s", r.StatusCode, healthExpectedText(ep.Expected))
		if r.StatusCode >= 300 && r.StatusCode < 400 {
			res.problem = fmt.Sprintf("HTTP %d redirect, not followed; expected %s", r.StatusCode, healthExpectedText(ep.Expected))
		}
	}
	res.slow = res.latencyMS > ep.SlowMS
	return res
}

// healthDescribeError says why no answer came, in a few words; refused is set
// for a connection refused, which means nothing listens at all.
func healthDescribeError(err error, timeout time.Duration) (string, bool) {
	var dnsErr *net.DNSError
	var netErr net.Error
	switch {
	case errors.Is(err, syscall.ECONNREFUSED):
		return "connection refused", true
	case errors.Is(err, context.DeadlineExceeded), errors.As(err, &netErr) && netErr.Timeout():
		return "no answer within " + healthFormatDuration(timeout), false
	case errors.As(err, &dnsErr):
		return "cannot resolve " + healthClean(dnsErr.Name), false
	case errors.Is(err, syscall.ECONNRESET):
		return "connection reset", false
	case errors.Is(err, context.Canceled):
		return "check canceled", false
	}
	// The url.Error wrapping names the URL, user information included.
	var ue interface{ Unwrap() error }
	if errors.As(err, &ue) && ue.Unwrap() != nil {
		err = ue.Unwrap()
	}
	return healthClean(err.Error()), false
}

// healthExpected is the endpoint's rule: one of the listed codes, or any
// 2xx when none is listed.
func healthExpected(expected []int, code int) bool {
	if len(expected) == 0 {
		return code >= 200 && code <= 299
	}
	return slices.Contains(expected, code)
}

func healthExpectedText(expected []int) string {
	if len(expected) == 0 {
		return "2xx"
	}
	parts := make([]string, len(expected))
	for i, c := range expected {
		parts[i] = strconv.Itoa(c)
	}
	return strings.Join(parts, " or ")
}

// logLine is the result as the run log shows it.
func (res healthResult) logLine() string {
	verdict := "up"
	switch {
	case !res.ok:
		verdict = "FAILED: " + res.problem
	case res.slow:
		verdict = fmt.Sprintf("up, slow (over %s)", healthFormatMS(res.ep.SlowMS))
	}
	if res.answered {
		return fmt.Sprintf("%s %s %s -> %d in %s: %s", res.ep.Name, res.ep.Method, res.ep.Display, res.statusCode, healthFormatMS(res.latencyMS), verdict)
	}
	return fmt.Sprintf("%s %s %s: %s", res.ep.Name, res.ep.Method, res.ep.Display, verdict)
}

// healthSkillPolicy is the environment policy of the skills entry that runs
// this built-in, if any: the same env_passthrough and inherit_env that
// decide what a command skill sees decide which variables a header may
// reference.
func healthSkillPolicy(cfg *config.Config, skill string) config.EnvPolicy {
	key := config.SkillKey(skill)
	for _, n := range cfg.SkillNames() {
		if config.SkillKey(n) == key {
			return cfg.Skills[n].EnvPolicy
		}
	}
	return config.EnvPolicy{}
}

// healthExpandHeaders expands $NAME in header values against the environment
// the skill may see (secret.ChildEnv under its policy), and registers
// each value used as a secret, so that it is masked wherever it might be
// echoed. A credential the policy withholds expands to empty, with a
// warning naming the header, as a command skill's env does.
func healthExpandHeaders(eps []HealthEndpoint, policy config.EnvPolicy, skill string) ([]map[string]string, []string) {
	visible := map[string]string{}
	for _, kv := range secret.ChildEnv(os.Environ(), policy.EnvPassthrough, policy.InheritEnv) {
		k, v, _ := strings.Cut(kv, "=")
		visible[k] = v
	}
	var warnings []string
	out := make([]map[string]string, len(eps))
	for i, ep := range eps {
		if len(ep.Headers) == 0 {
			continue
		}
		out[i] = map[string]string{}
		keys := make([]string, 0, len(ep.Headers))
		for k := range ep.Headers {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			field := "config.json " + ep.Pointer + "/headers" + config.Pointer(k)
			v := os.Expand(ep.Headers[k], func(name string) string {
				val, ok := visible[name]
				switch {
				case ok:
					secret.Register(val)
				case secret.IsCredential(name) && os.Getenv(name) != "":
					warnings = append(warnings, fmt.Sprintf("%s: $%s is a credential not in env_passthrough of skills./%s; it expands to empty", field, name, config.SkillKey(skill)))
				default:
					warnings = append(warnings, fmt.Sprintf("%s: $%s is not set; it expands to empty", field, name))
				}
				return val
			})
			if strings.ContainsAny(v, "\r\n\x00") {
				warnings = append(warnings, fmt.Sprintf("%s: the expanded value holds a line break or NUL; the header is not sent", field))
				continue
			}
			out[i][k] = v
		}
	}
	return out, warnings
}

// healthWatchHalt cancels the run when the HALT file appears (checked every
// half second, as for a command skill); the returned function reports
// whether it did.
func healthWatchHalt(ctx context.Context, haltFile string, cancel context.CancelFunc) func() bool {
	var mu sync.Mutex
	seen := false
	if haltFile == "" {
		return func() bool { return false }
	}
	check := func() bool {
		if _, err := os.Stat(haltFile); err == nil {
			mu.Lock()
			seen = true
			mu.Unlock()
			cancel()
			return true
		}
		return false
	}
	if check() {
		return func() bool { return true }
	}
	go func() {
		t := time.NewTicker(500 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				if check() {
					return
				}
			}
		}
	}()
	return func() bool {
		mu.Lock()
		defer mu.Unlock()
		return seen
	}
}

// healthWriteJSON writes v to a file of the project (see writeJSON).
func healthWriteJSON(store *state.Store, path string, v any) error {
	return writeJSON(store, "health", path, v)
}

func healthWriteReport(store *state.Store, path string, rep healthReport) error {
	if path == "" {
		return nil
	}
	return healthWriteJSON(store, path, rep)
}

func healthLogf(w io.Writer, format string, a ...any) {
	if w != nil {
		fmt.Fprint(w, secret.Redact(fmt.Sprintf(format, a...)))
	}
}

// healthClean is outside text made fit for one line of a state file or the
// run log: masked, escaped, and cut.
func healthClean(s string) string {
	s = safetext.Text(healthRedactURL(s))
	if len(s) > 200 {
		s = strings.ToValidUTF8(s[:200], "") + "…"
	}
	return s
}

func healthRoundMS(d time.Duration) float64 {
	return math.Round(float64(d)/float64(time.Millisecond)*10) / 10
}

// healthFormatMS shows a latency: "120 ms", "1.8 s".
func healthFormatMS(ms float64) string {
	if ms >= 1000 {
		return strconv.FormatFloat(math.Round(ms/100)/10, 'f', -1, 64) + " s"
	}
	return strconv.FormatFloat(math.Round(ms), 'f', -1, 64) + " ms"
}

func healthFormatDuration(d time.Duration) string {
	return healthFormatMS(float64(d) / float64(time.Millisecond))
}
