package skills

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/ooda-loop/ooda/internal/config"
	"github.com/ooda-loop/ooda/internal/safetext"
)

// Bounds of the health skill. Each one keeps a hostile or mistaken
// configuration, server or state file from making a run slow or large.
const (
	// MaxHealthEndpoints is the most endpoints one run checks: a longer
	// list is refused rather than cut, so no endpoint is silently ignored.
	MaxHealthEndpoints = 50
	// healthBodyLimit is how much of a response body is read (and thrown
	// away) before the connection is closed: the status line and headers
	// are what is judged.
	healthBodyLimit = 64 << 10
	// healthHeaderLimit caps the response headers a server may send.
	healthHeaderLimit = 64 << 10
	// healthWindow is how many recent latencies per endpoint the state
	// file keeps for the p95.
	healthWindow = 20
	// healthParallel is how many endpoints are checked at once.
	healthParallel = 4
	// healthNameMax bounds an endpoint name, which becomes a metric name.
	healthNameMax = 64
	// DefaultHealthSlowMS is the latency above which an answer is slow.
	DefaultHealthSlowMS = 1000
	// DefaultHealthCriticalAfter is how many failed checks in a row make
	// an endpoint critical (the original's chain trigger fires at 3).
	DefaultHealthCriticalAfter = 3
	// maxHealthTimeout caps timeout_seconds: a check is a probe, and the
	// run must end well within the cycle's lock.
	maxHealthTimeout = 300 * time.Second
)

// HealthEndpoint is one entry of health_endpoints, validated, with every
// default applied.
type HealthEndpoint struct {
	// Name identifies the endpoint in the state file, the metrics, the
	// alerts and the summary: the configured name, else the URL's path,
	// else its host.
	Name string
	// URL is the URL as configured; Display is the URL as shown, with any
	// user information replaced by "***".
	URL     *url.URL
	Display string
	// Method is GET or HEAD.
	Method string
	// Expected lists the statuses that count as up; empty means any 2xx.
	Expected []int
	Timeout  time.Duration
	// SlowMS is the latency above which the endpoint is slow.
	SlowMS float64
	// CriticalAfter is how many failed checks in a row raise a critical
	// alert.
	CriticalAfter int
	// Headers are sent with the request; their values may reference
	// environment variables as $NAME, expanded at run time.
	Headers map[string]string
	// Pointer is the entry's JSON pointer in config.json.
	Pointer string
}

// healthRawEndpoint is the object form of a health_endpoints entry.
type healthRawEndpoint struct {
	URL            *string           `json:"url"`
	Name           *string           `json:"name"`
	Method         *string           `json:"method"`
	ExpectedStatus json.RawMessage   `json:"expected_status"`
	TimeoutSeconds *float64          `json:"timeout_seconds"`
	SlowMS         *float64          `json:"slow_ms"`
	CriticalAfter  *int              `json:"critical_after"`
	Headers        map[string]string `json:"headers"`
}

// healthEndpointKeys are the keys of an endpoint object.
var healthEndpointKeys = []string{"url", "name", "method", "expected_status", "timeout_seconds", "slow_ms", "critical_after", "headers"}

// ParseHealthEndpoints reads health_endpoints: each entry a URL string or
// an object {url, name, method, expected_status, timeout_seconds, slow_ms,
// critical_after, headers}. defaultTimeout is
// health_check_timeout_seconds (10 when not positive). Every problem is
// reported, each naming its JSON pointer in config.json; an entry with a
// problem is left out of the result.
func ParseHealthEndpoints(raws []json.RawMessage, defaultTimeout float64) ([]HealthEndpoint, error) {
	if len(raws) > MaxHealthEndpoints {
		return nil, fmt.Errorf("config.json /health_endpoints: %d endpoints, more than the %d one run checks; split them across domains or remove some", len(raws), MaxHealthEndpoints)
	}
	if !(defaultTimeout > 0) || math.IsInf(defaultTimeout, 0) {
		defaultTimeout = 10
	}
	var errs []error
	var out []HealthEndpoint
	names := map[string]int{}
	for i, raw := range raws {
		ptr := "/health_endpoints/" + strconv.Itoa(i)
		bad := func(field, format string, a ...any) {
			errs = append(errs, fmt.Errorf("config.json %s%s: %s", ptr, field, fmt.Sprintf(format, a...)))
		}
		var re healthRawEndpoint
		var s string
		if json.Unmarshal(raw, &s) == nil {
			re.URL = &s
		} else {
			var fields map[string]json.RawMessage
			if json.Unmarshal(raw, &fields) != nil {
				bad("", "%s is not a URL string or an object {url, name, method, expected_status, timeout_seconds, slow_ms, critical_after, headers}", healthClean(string(raw)))
				continue
			}
			// A mistyped key ("expected_stauts") would silently check
			// something else than the user meant; "__doc__" keys are
			// comments.
			unknown := false
			for _, k := range slices.Sorted(maps.Keys(fields)) {
				if !slices.Contains(healthEndpointKeys, k) && !strings.HasPrefix(k, "__") {
					bad(config.Pointer(k), "unknown key (known: %s)", strings.Join(healthEndpointKeys, ", "))
					unknown = true
				}
			}
			if unknown {
				continue
			}
			if err := json.Unmarshal(raw, &re); err != nil {
				bad("", "%s", healthClean(err.Error()))
				continue
			}
		}
		before := len(errs)
		ep := HealthEndpoint{Method: "GET", SlowMS: DefaultHealthSlowMS, CriticalAfter: DefaultHealthCriticalAfter, Pointer: ptr}
		if re.URL == nil {
			bad("", `has no "url"`)
			continue
		}
		u, err := checkHealthURL(*re.URL)
		if err != nil {
			bad(healthURLField(raw), "%s", err)
			continue
		}
		ep.URL, ep.Display = u, healthDisplayURL(u)
		if re.Method != nil {
			switch m := strings.ToUpper(strings.TrimSpace(*re.Method)); m {
			case "GET", "HEAD":
				ep.Method = m
			default:
				bad("/method", "%s is not GET or HEAD", strconv.QuoteToASCII(*re.Method))
			}
		}
		if len(re.ExpectedStatus) > 0 && string(re.ExpectedStatus) != "null" {
			codes, err := healthParseExpected(re.ExpectedStatus)
			if err != nil {
				bad("/expected_status", "%s", err)
			}
			ep.Expected = codes
		}
		timeout := defaultTimeout
		if re.TimeoutSeconds != nil {
			timeout = *re.TimeoutSeconds
			if !(timeout > 0) {
				bad("/timeout_seconds", "%s must be more than 0", healthNum(timeout))
			}
		}
		ep.Timeout = time.Duration(timeout * float64(time.Second))
		if ep.Timeout > maxHealthTimeout || timeout > maxHealthTimeout.Seconds() {
			ep.Timeout = maxHealthTimeout
		}
		if ep.Timeout <= 0 {
			ep.Timeout = time.Millisecond
		}
		if re.SlowMS != nil {
			if !(*re.SlowMS > 0) || math.IsInf(*re.SlowMS, 0) {
				bad("/slow_ms", "%s must be a number of milliseconds more than 0", healthNum(*re.SlowMS))
			}
			ep.SlowMS = *re.SlowMS
		}
		if re.CriticalAfter != nil {
			if *re.CriticalAfter < 1 || *re.CriticalAfter > 1000 {
				bad("/critical_after", "%d must be from 1 to 1000", *re.CriticalAfter)
			}
			ep.CriticalAfter = *re.CriticalAfter
		}
		for k, v := range re.Headers {
			if !healthHeaderName(k) {
				bad("/headers"+config.Pointer(k), "%s is not a header name", strconv.QuoteToASCII(k))
			}
			if strings.ContainsAny(v, "\r\n\x00") {
				bad("/headers"+config.Pointer(k), "the value holds a line break or NUL")
			}
		}
		ep.Headers = re.Headers
		name := healthDefaultName(u)
		if re.Name != nil {
			name = strings.TrimSpace(*re.Name)
			if name == "" || len(name) > healthNameMax || strings.ContainsFunc(name, safetext.Unsafe) {
				bad("/name", "%s must be 1 to %d printable characters", strconv.QuoteToASCII(*re.Name), healthNameMax)
			}
		}
		if len(errs) > before {
			continue
		}
		// Two entries for one path (two hosts' /health) must not share
		// their failure counts.
		if n := names[name]; n > 0 {
			names[name] = n + 1
			name = fmt.Sprintf("%s#%d", name, n+1)
		} else {
			names[name] = 1
		}
		ep.Name = name
		out = append(out, ep)
	}
	return out, errors.Join(errs...)
}

// healthURLField is the pointer suffix of an entry's URL: "" for a string entry.
func healthURLField(raw json.RawMessage) string {
	if strings.HasPrefix(strings.TrimSpace(string(raw)), "{") {
		return "/url"
	}
	return ""
}

// checkHealthURL accepts an absolute http or https URL with a host; the
// error shows the URL without its user information.
func checkHealthURL(s string) (*url.URL, error) {
	u, err := url.Parse(strings.TrimSpace(s))
	if err != nil {
		return nil, fmt.Errorf("not a URL (%s)", safetext.Text(healthRedactURL(err.Error())))
	}
	shown := strconv.QuoteToASCII(healthDisplayURL(u))
	switch strings.ToLower(u.Scheme) {
	case "http", "https":
	default:
		return nil, fmt.Errorf("%s is not an http or https URL", shown)
	}
	if u.Host == "" || u.Hostname() == "" {
		return nil, fmt.Errorf("%s has no host", shown)
	}
	return u, nil
}

// healthDisplayURL is the URL as every output shows it: user information (a
// password, or a token as the user name) becomes "***".
func healthDisplayURL(u *url.URL) string {
	if u == nil {
		return ""
	}
	if u.User == nil {
		return u.String()
	}
	c := *u
	c.User = nil
	s := c.String()
	if i := strings.Index(s, "://"); i >= 0 {
		return s[:i+3] + "***@" + s[i+3:]
	}
	return s
}

// healthRedactURL hides the user information of any URL within a message
// (url.Parse quotes the whole input in its errors).
func healthRedactURL(s string) string {
	i := strings.Index(s, "://")
	if i < 0 {
		return s
	}
	rest := s[i+3:]
	end := strings.IndexAny(rest, "/?#\" ")
	if end < 0 {
		end = len(rest)
	}
	if at := strings.LastIndex(rest[:end], "@"); at >= 0 {
		return s[:i+3] + "***" + rest[at:]
	}
	return s
}

// healthParseExpected reads expected_status: a status code or a list of them.
func healthParseExpected(raw json.RawMessage) ([]int, error) {
	var one int
	if json.Unmarshal(raw, &one) == nil {
		if one < 100 || one > 599 {
			return nil, fmt.Errorf("%d is not an HTTP status (100 to 599)", one)
		}
		return []int{one}, nil
	}
	var many []int
	if err := json.Unmarshal(raw, &many); err != nil || len(many) == 0 {
		return nil, fmt.Errorf("%s is not a status code or a non-empty list of them", safetext.Text(string(raw)))
	}
	for _, c := range many {
		if c < 100 || c > 599 {
			return nil, fmt.Errorf("%d is not an HTTP status (100 to 599)", c)
		}
	}
	return many, nil
}

// healthHeaderName is an HTTP token (RFC 9110 §5.6.2).
func healthHeaderName(s string) bool {
	if s == "" || len(s) > 256 {
		return false
	}
	for _, c := range []byte(s) {
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		case strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0:
		default:
			return false
		}
	}
	return true
}

// healthDefaultName is the URL's path ("/api/health"), or its host when
// the path is empty or "/": short, and stable while the URL is.
func healthDefaultName(u *url.URL) string {
	name := u.EscapedPath()
	if name == "" || name == "/" {
		name = u.Host
	}
	if len(name) > healthNameMax {
		name = strings.ToValidUTF8(name[:healthNameMax], "")
	}
	return strings.Map(func(r rune) rune {
		if safetext.Unsafe(r) {
			return '_'
		}
		return r
	}, name)
}

func healthNum(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }
