package forge

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/ooda-loop/ooda/internal/gitrepo"
	"github.com/ooda-loop/ooda/internal/secret"
)

// DefaultGitHubURL is the REST API root of github.com. GitHub Enterprise
// Server serves the same API under https://HOST/api/v3.
const DefaultGitHubURL = "https://api.github.com"

const (
	githubAPIVersion = "2022-11-28"
	defaultUserAgent = "ooda"
	defaultTimeout   = 20 * time.Second
	// maxPages bounds every paginated listing, so a huge repository (or a
	// server that keeps answering rel="next") cannot stall a cycle.
	maxPages = 10
	// maxErrorBody bounds what is read of an error answer: only the start
	// of its message is ever quoted.
	maxErrorBody = 64 << 10
	// maxMessage bounds the server text quoted in an error, which ends up
	// in logs.
	maxMessage = 300
	// unknownRetry is how long to back off when GitHub rate-limits without
	// saying until when; its documentation asks for at least a minute.
	unknownRetry = time.Minute
	// shortSHA is the shortest prefix of a commit id accepted as naming it,
	// git's own default abbreviation.
	shortSHA = 7
)

// GitHubOptions configure NewGitHub.
type GitHubOptions struct {
	// Repo is "owner/name".
	Repo string
	// BaseURL is the REST API root; empty means DefaultGitHubURL. A
	// trailing slash is accepted.
	BaseURL string
	// Token authenticates requests; empty means unauthenticated, which
	// works for public repositories at a much lower rate limit.
	Token string
	// HTTPClient sends the requests; nil means a client with a 20 s
	// timeout.
	HTTPClient *http.Client
	// UserAgent identifies the product to GitHub, which rejects requests
	// without one; empty means "ooda".
	UserAgent string
	// MaxResponseBytes bounds one answer (safety.max_read_mib): a larger
	// one is an error naming the request, never read whole. Zero means
	// DefaultMaxResponseBytes; the largest page the API serves is far
	// below it.
	MaxResponseBytes int64
}

// DefaultMaxResponseBytes is the default of GitHubOptions.MaxResponseBytes,
// the default of safety.max_read_mib.
const DefaultMaxResponseBytes = 16 << 20

// GitHub is the Forge of a repository on github.com or GitHub Enterprise,
// spoken to over the REST API.
type GitHub struct {
	owner, name string
	base        *url.URL
	token       string
	client      *http.Client
	userAgent   string
	maxBody     int64
	now         func() time.Time
}

var _ Forge = (*GitHub)(nil)

// NewGitHub checks opts and returns the provider. It does not contact the
// server: an unreachable forge must only cost a cycle a warning, which is
// the caller's decision when a call fails.
func NewGitHub(opts GitHubOptions) (*GitHub, error) {
	owner, name, ok := splitRepo(opts.Repo)
	if !ok {
		return nil, fmt.Errorf("github: repository %q is not \"owner/name\"", opts.Repo)
	}
	raw := strings.TrimRight(opts.BaseURL, "/")
	if raw == "" {
		raw = DefaultGitHubURL
	}
	base, err := url.Parse(raw)
	if err != nil || (base.Scheme != "https" && base.Scheme != "http") || base.Host == "" ||
		base.RawQuery != "" || base.Fragment != "" || base.User != nil {
		return nil, fmt.Errorf("github: base URL %q is not an http(s) URL without query or credentials", opts.BaseURL)
	}
	token := strings.TrimSpace(opts.Token)
	if strings.IndexFunc(token, func(r rune) bool { return r <= ' ' || r == 0x7f || r > unicode.MaxASCII }) >= 0 {
		// The value is deliberately not quoted: it is a secret.
		return nil, errors.New("github: token contains whitespace or non-printable characters")
	}
	if token != "" && !tokenSafeURL(base) {
		return nil, fmt.Errorf("github: base URL %q: a token is only sent over https (or http to a loopback address)", opts.BaseURL)
	}
	client := opts.HTTPClient
	if client == nil {
		client = &http.Client{Timeout: defaultTimeout}
	}
	if token != "" {
		client = withTokenGuard(client, base)
	}
	ua := opts.UserAgent
	if ua == "" {
		ua = defaultUserAgent
	}
	maxBody := opts.MaxResponseBytes
	if maxBody <= 0 {
		maxBody = DefaultMaxResponseBytes
	}
	// Whatever the source (GITHUB_TOKEN, GH_TOKEN, `gh auth token`, an
	// enterprise variable), the token is masked in everything ooda writes.
	secret.Register(token)
	return &GitHub{owner: owner, name: name, base: base, token: token, client: client, userAgent: ua, maxBody: maxBody, now: time.Now}, nil
}

// withTokenGuard returns a copy of c whose redirects carry the
// Authorization header only back to base's host over a URL a token may
// travel to: an https API answering with a redirect to http (or to another
// host) must not receive the token in clear. Go's client forwards the
// header to the same host whatever the scheme.
func withTokenGuard(c *http.Client, base *url.URL) *http.Client {
	guarded := *c
	next := c.CheckRedirect
	guarded.CheckRedirect = func(req *http.Request, via []*http.Request) error {
		if !tokenSafeURL(req.URL) || !strings.EqualFold(req.URL.Host, base.Host) {
			req.Header.Del("Authorization")
		}
		if next != nil {
			return next(req, via)
		}
		// net/http's default policy.
		if len(via) >= 10 {
			return errors.New("stopped after 10 redirects")
		}
		return nil
	}
	return &guarded
}

// splitRepo splits "owner/name", and reports false for anything else.
func splitRepo(repo string) (owner, name string, ok bool) {
	owner, name, ok = strings.Cut(repo, "/")
	if !ok || !validRepoPart(owner) || !validRepoPart(name) {
		return "", "", false
	}
	return owner, name, true
}

func validRepoPart(s string) bool {
	if s == "" || s == "." || s == ".." {
		return false
	}
	for _, r := range s {
		if !(r == '-' || r == '_' || r == '.' || r < unicode.MaxASCII && (unicode.IsLetter(r) || unicode.IsDigit(r))) {
			return false
		}
	}
	return true
}

// Name identifies the provider in logs.
func (g *GitHub) Name() string { return "github " + g.owner + "/" + g.name }

// String keeps the token out of a provider printed with %v or %+v.
func (g *GitHub) String() string { return g.Name() }

// GoString keeps the token out of a provider printed with %#v.
func (g *GitHub) GoString() string { return "forge.GitHub(" + g.owner + "/" + g.name + ")" }

// APIError is a non-2xx answer from the API. It never carries the token.
type APIError struct {
	Method     string
	Path       string // path and query, relative to the host
	StatusCode int
	Message    string // GitHub's "message", or the start of the body
}

// Error names the request and GitHub's answer.
func (e *APIError) Error() string {
	s := fmt.Sprintf("github: %s %s: HTTP %d", e.Method, e.Path, e.StatusCode)
	if e.Message != "" {
		s += ": " + e.Message
	}
	return s
}

// Unwrap lets callers test a 404 with errors.Is(err, ErrNotFound).
func (e *APIError) Unwrap() error {
	if e.StatusCode == http.StatusNotFound {
		return ErrNotFound
	}
	return nil
}

// RateLimitError is returned instead of waiting when GitHub rate-limits a
// request: a cycle must not stall, so the caller decides what to skip.
type RateLimitError struct {
	// Reset is when GitHub allows requests again (from Retry-After or
	// X-RateLimit-Reset, whichever is later; a minute from the answer when
	// neither says).
	Reset      time.Time
	Method     string
	Path       string
	StatusCode int
	Message    string
}

// Error names the request and when to try again.
func (e *RateLimitError) Error() string {
	s := fmt.Sprintf("github: %s %s: rate limited (HTTP %d) until %s", e.Method, e.Path, e.StatusCode, e.Reset.UTC().Format(time.RFC3339))
	if e.Message != "" {
		s += ": " + e.Message
	}
	return s
}

// ghPull is the subset of a pull request object that ooda reads. Null
// timestamps decode to the zero time.
type ghPull struct {
	Number int    `json:"number"`
	Title  string `json:"title"`
	State  string `json:"state"`
	Draft  bool   `json:"draft"`
	Merged bool   `json:"merged"` // only in the single-PR answer
	Head   struct {
		Ref string `json:"ref"`
		SHA string `json:"sha"`
	} `json:"head"`
	Labels []struct {
		Name string `json:"name"`
	} `json:"labels"`
	CreatedAt      time.Time `json:"created_at"`
	MergedAt       time.Time `json:"merged_at"`
	ClosedAt       time.Time `json:"closed_at"`
	MergeCommitSHA string    `json:"merge_commit_sha"`
	Additions      int       `json:"additions"`
	Deletions      int       `json:"deletions"`
	ChangedFiles   int       `json:"changed_files"`
}

// pr is the listing's view of a pull request. GitHub only serves branch
// names and commit ids that git accepts; anything else (a hostile or
// broken server) is dropped to "", so it cannot reach git or a log line as
// a name: the PR then belongs to no domain.
func (p ghPull) pr() PR {
	head := p.Head.Ref
	if !gitrepo.ValidBranchName(head) {
		head = ""
	}
	out := PR{
		Number:  p.Number,
		Title:   p.Title,
		HeadRef: head,
		State:   StateOpen,
		Draft:   p.Draft,
		Labels:  labelNames(p.Labels),
		Created: p.CreatedAt,
		Closed:  p.ClosedAt,
	}
	switch {
	case !p.MergedAt.IsZero() || p.Merged:
		out.State = StateMerged
		out.Merged = p.MergedAt
		// Only a merged PR's merge_commit_sha names a commit on the base
		// branch; for an open PR it is a throw-away test merge.
		if gitrepo.ValidSHA(p.MergeCommitSHA) {
			out.MergeSHA = p.MergeCommitSHA
		}
	case p.State == "closed":
		out.State = StateClosed
	}
	return out
}

func labelNames(ls []struct {
	Name string `json:"name"`
}) []string {
	if len(ls) == 0 {
		return nil
	}
	out := make([]string, len(ls))
	for i, l := range ls {
		out[i] = l.Name
	}
	return out
}

// Status lists open PRs, the 5 most recently merged and 5 most recently
// closed-unmerged PRs, and open issues.
func (g *GitHub) Status(ctx context.Context) (Status, error) {
	st := Status{Open: []PR{}, Merged: []PR{}, Closed: []PR{}, Issues: []Issue{}}

	open, err := g.OpenPRs(ctx)
	if err != nil {
		return Status{}, err
	}
	st.Open = open

	// One page of the most recently updated closed PRs holds the newest
	// merges and rejections in practice; the API cannot filter on merged.
	var closed []ghPull
	if err := g.getJSON(ctx, g.repoPath("pulls"), url.Values{
		"state": {"closed"}, "sort": {"updated"}, "direction": {"desc"}, "per_page": {"30"},
	}, &closed); err != nil {
		return Status{}, err
	}
	for _, p := range closed {
		pr := p.pr()
		switch pr.State {
		case StateMerged:
			st.Merged = append(st.Merged, pr)
		case StateClosed:
			st.Closed = append(st.Closed, pr)
		}
	}
	st.Merged = newest(st.Merged, func(p PR) time.Time { return p.Merged })
	st.Closed = newest(st.Closed, func(p PR) time.Time { return p.Closed })

	type ghIssue struct {
		Number int    `json:"number"`
		Title  string `json:"title"`
		Labels []struct {
			Name string `json:"name"`
		} `json:"labels"`
		PullRequest json.RawMessage `json:"pull_request"`
	}
	issues, _, err := getPages[ghIssue](ctx, g, g.repoPath("issues"), url.Values{"state": {"open"}, "per_page": {"100"}})
	if err != nil {
		return Status{}, err
	}
	for _, is := range issues {
		// The issues endpoint also lists pull requests, marked by this key.
		if is.PullRequest != nil {
			continue
		}
		st.Issues = append(st.Issues, Issue{Number: is.Number, Title: is.Title, Labels: labelNames(is.Labels)})
	}
	return st, nil
}

// OpenPRs lists the open PRs alone: after a skill ran, only a new PR can
// have appeared that the cycle must see, so the merged and closed ones and
// the issues are not asked for again.
func (g *GitHub) OpenPRs(ctx context.Context) ([]PR, error) {
	open, _, err := getPages[ghPull](ctx, g, g.repoPath("pulls"), url.Values{"state": {"open"}, "per_page": {"100"}})
	if err != nil {
		return nil, err
	}
	prs := []PR{}
	for _, p := range open {
		prs = append(prs, p.pr())
	}
	return prs, nil
}

// statusKeep is how many merged and closed PRs 1-B keeps.
const statusKeep = 5

// newest sorts prs newest first by the time at picks (ties by descending
// number, for a stable order) and keeps statusKeep of them.
func newest(prs []PR, at func(PR) time.Time) []PR {
	sort.SliceStable(prs, func(i, j int) bool {
		ti, tj := at(prs[i]), at(prs[j])
		if !ti.Equal(tj) {
			return ti.After(tj)
		}
		return prs[i].Number > prs[j].Number
	})
	if len(prs) > statusKeep {
		prs = prs[:statusKeep]
	}
	return prs
}

// Facts re-reads a PR and its changed files from GitHub.
func (g *GitHub) Facts(ctx context.Context, number int) (Facts, error) {
	p, err := g.pull(ctx, number)
	if err != nil {
		return Facts{}, err
	}
	// The merge gate pins the merge to this head and names the branch:
	// neither may be anything git would not produce.
	if err := gitrepo.CheckBranchName(p.Head.Ref); err != nil {
		return Facts{}, fmt.Errorf("github: PR #%d: head.ref: %w", number, err)
	}
	if !gitrepo.ValidSHA(p.Head.SHA) {
		return Facts{}, fmt.Errorf("github: PR #%d: head.sha: %q is not a commit SHA", number, p.Head.SHA)
	}
	type ghFile struct {
		Filename         string `json:"filename"`
		PreviousFilename string `json:"previous_filename"`
	}
	path := g.repoPath("pulls", strconv.Itoa(number), "files")
	files, truncated, err := getPages[ghFile](ctx, g, path, url.Values{"per_page": {"100"}})
	if err != nil {
		return Facts{}, err
	}
	if truncated {
		// A partial file list could hide a protected path from the merge
		// gate, so it is no fact at all.
		return Facts{}, fmt.Errorf("github: PR #%d lists more than %d pages of files", number, maxPages)
	}
	f := Facts{
		Number:       p.Number,
		State:        p.pr().State,
		Draft:        p.Draft,
		HeadRef:      p.Head.Ref,
		HeadSHA:      p.Head.SHA,
		Files:        make([]string, 0, len(files)),
		ChangedFiles: p.ChangedFiles,
		Additions:    p.Additions,
		Deletions:    p.Deletions,
	}
	for _, file := range files {
		f.Files = append(f.Files, file.Filename)
		// A rename touches its old path too: moving a file out of a
		// protected directory must still meet the protected-path check.
		if file.PreviousFilename != "" && file.PreviousFilename != file.Filename {
			f.Files = append(f.Files, file.PreviousFilename)
		}
	}
	return f, nil
}

func (g *GitHub) pull(ctx context.Context, number int) (ghPull, error) {
	if number <= 0 {
		return ghPull{}, fmt.Errorf("github: PR #%d: %w", number, ErrNotFound)
	}
	var p ghPull
	err := g.getJSON(ctx, g.repoPath("pulls", strconv.Itoa(number)), nil, &p)
	return p, err
}

// MergeSquash squash-merges a PR. A refusal of the squash method is
// ErrSquashDisabled; nothing else is ever tried. With headSHA, GitHub
// itself refuses (409) when the head moved since the facts were read.
func (g *GitHub) MergeSquash(ctx context.Context, number int, headSHA string) error {
	if number <= 0 {
		return fmt.Errorf("github: PR #%d: %w", number, ErrNotFound)
	}
	var res struct {
		Merged  bool   `json:"merged"`
		Message string `json:"message"`
	}
	if headSHA != "" && !gitrepo.ValidSHA(headSHA) {
		return fmt.Errorf("github: PR #%d: head %q is not a commit SHA", number, headSHA)
	}
	body := map[string]string{"merge_method": "squash"}
	if headSHA != "" {
		body["sha"] = headSHA
	}
	err := g.do(ctx, http.MethodPut, g.repoPath("pulls", strconv.Itoa(number), "merge"), nil, body, &res)
	var apiErr *APIError
	if errors.As(err, &apiErr) && apiErr.StatusCode == http.StatusConflict {
		return fmt.Errorf("%w: %w", ErrHeadMoved, err)
	}
	if errors.As(err, &apiErr) && apiErr.StatusCode == http.StatusMethodNotAllowed && squashRefused(apiErr.Message) {
		return fmt.Errorf("%w: %w", ErrSquashDisabled, err)
	}
	if err != nil {
		return err
	}
	if !res.Merged {
		return fmt.Errorf("github: PR #%d was not merged: %s", number, g.redact(clip(res.Message)))
	}
	return nil
}

// squashRefused tells a disabled merge method apart from the other 405s
// ("Pull Request is not mergeable", failing required checks), which are
// about this PR rather than about the repository's settings.
func squashRefused(msg string) bool {
	m := strings.ToLower(msg)
	return strings.Contains(m, "squash") || strings.Contains(m, "not allowed")
}

// Reverted reports whether a commit on the default branch since the merge
// reverts it: its subject starts with `Revert "` and it names the PR
// ("#12") or the merge commit (its id or a prefix of 7 or more digits).
// When pr lacks its merge time or commit, they are read from GitHub, so a
// PR known only by number can be checked.
func (g *GitHub) Reverted(ctx context.Context, pr PR) (bool, error) {
	if pr.Merged.IsZero() || !gitrepo.ValidSHA(pr.MergeSHA) {
		p, err := g.pull(ctx, pr.Number)
		if err != nil {
			return false, err
		}
		full := p.pr()
		if full.State != StateMerged {
			return false, nil
		}
		pr.Merged, pr.MergeSHA = full.Merged, full.MergeSHA
	}
	type ghCommit struct {
		SHA    string `json:"sha"`
		Commit struct {
			Message string `json:"message"`
		} `json:"commit"`
	}
	var commits []ghCommit
	if err := g.getJSON(ctx, g.repoPath("commits"), url.Values{
		"since":    {pr.Merged.UTC().Format(time.RFC3339)},
		"per_page": {"100"},
	}, &commits); err != nil {
		return false, err
	}
	for _, c := range commits {
		if isRevertOf(c.Commit.Message, pr.Number, pr.MergeSHA) {
			return true, nil
		}
	}
	return false, nil
}

// isRevertOf recognises both git's message (`Revert "subject"` … "This
// reverts commit <sha>.") and GitHub's revert button, whose subject quotes
// the PR title and so carries "(#n)".
func isRevertOf(msg string, number int, sha string) bool {
	if !strings.HasPrefix(msg, `Revert "`) {
		return false
	}
	if number > 0 && mentionsNumber(msg, number) {
		return true
	}
	return mentionsSHA(msg, sha)
}

// mentionsNumber finds "#n" not followed by another digit, so #12 is not
// found in #123.
func mentionsNumber(msg string, n int) bool {
	needle := "#" + strconv.Itoa(n)
	for i := 0; ; {
		j := strings.Index(msg[i:], needle)
		if j < 0 {
			return false
		}
		end := i + j + len(needle)
		if end == len(msg) || msg[end] < '0' || msg[end] > '9' {
			return true
		}
		i = end
	}
}

// mentionsSHA finds a whole hexadecimal word of at least shortSHA digits
// that is a prefix of sha.
func mentionsSHA(msg, sha string) bool {
	sha = strings.ToLower(sha)
	if len(sha) < shortSHA {
		return false
	}
	isHex := func(c byte) bool { return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F' }
	isWord := func(c byte) bool { return isHex(c) || c >= 'g' && c <= 'z' || c >= 'G' && c <= 'Z' || c == '_' }
	for i := 0; i < len(msg); {
		if !isHex(msg[i]) || (i > 0 && isWord(msg[i-1])) {
			i++
			continue
		}
		j := i
		for j < len(msg) && isHex(msg[j]) {
			j++
		}
		if (j == len(msg) || !isWord(msg[j])) && j-i >= shortSHA && j-i <= len(sha) &&
			strings.HasPrefix(sha, strings.ToLower(msg[i:j])) {
			return true
		}
		i = j
	}
	return false
}

// repoPath is the API path of the repository, or of something below it.
// Every part is a validated owner or name, a number or a fixed word, so
// none needs escaping.
func (g *GitHub) repoPath(parts ...string) string {
	return "/repos/" + g.owner + "/" + g.name + "/" + strings.Join(parts, "/")
}

// getJSON GETs path (relative to the base URL) into out.
func (g *GitHub) getJSON(ctx context.Context, path string, q url.Values, out any) error {
	return g.do(ctx, http.MethodGet, path, q, nil, out)
}

// getPages follows rel="next" links from path for at most maxPages pages;
// truncated says that more were on offer.
func getPages[T any](ctx context.Context, g *GitHub, path string, q url.Values) (items []T, truncated bool, err error) {
	u := g.url(path, q)
	for page := 0; page < maxPages; page++ {
		var batch []T
		var hdr http.Header
		if err := g.send(ctx, http.MethodGet, u, nil, &batch, &hdr); err != nil {
			return nil, false, err
		}
		items = append(items, batch...)
		next := nextLink(hdr.Get("Link"))
		if next == "" {
			return items, false, nil
		}
		nu, err := u.Parse(next)
		if err != nil {
			return nil, false, fmt.Errorf("github: %s: bad pagination link: %w", u.Path, err)
		}
		// The token goes wherever the link points, so it may only point
		// back at the API it came from.
		if nu.Scheme != g.base.Scheme || nu.Host != g.base.Host {
			return nil, false, fmt.Errorf("github: %s: pagination link leaves %s", u.Path, g.base.Host)
		}
		u = nu
	}
	return items, true, nil
}

// nextLink extracts the rel="next" target of an RFC 8288 Link header.
func nextLink(h string) string {
	for h != "" {
		lt := strings.IndexByte(h, '<')
		if lt < 0 {
			return ""
		}
		gt := strings.IndexByte(h[lt:], '>')
		if gt < 0 {
			return ""
		}
		target := h[lt+1 : lt+gt]
		rest := h[lt+gt+1:]
		params := rest
		if k := strings.IndexByte(rest, ','); k >= 0 {
			params, rest = rest[:k], rest[k+1:]
		} else {
			rest = ""
		}
		for _, p := range strings.Split(params, ";") {
			k, v, ok := strings.Cut(strings.TrimSpace(p), "=")
			if !ok || !strings.EqualFold(strings.TrimSpace(k), "rel") {
				continue
			}
			for _, rel := range strings.Fields(strings.Trim(strings.TrimSpace(v), `"`)) {
				if strings.EqualFold(rel, "next") {
					return target
				}
			}
		}
		h = rest
	}
	return ""
}

func (g *GitHub) url(path string, q url.Values) *url.URL {
	u := *g.base
	u.Path = strings.TrimRight(g.base.Path, "/") + path
	u.RawPath = ""
	u.RawQuery = q.Encode()
	return &u
}

func (g *GitHub) do(ctx context.Context, method, path string, q url.Values, body, out any) error {
	return g.send(ctx, method, g.url(path, q), body, out, nil)
}

// send performs one request and decodes a 2xx JSON answer into out; hdr,
// when not nil, receives the response headers.
func (g *GitHub) send(ctx context.Context, method string, u *url.URL, body, out any, hdr *http.Header) error {
	where := u.RequestURI()
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return fmt.Errorf("github: %s %s: %w", method, where, err)
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, u.String(), rd)
	if err != nil {
		return fmt.Errorf("github: %s %s: %w", method, where, err)
	}
	req.Header.Set("Accept", "application/vnd.github+json")
	req.Header.Set("X-GitHub-Api-Version", githubAPIVersion)
	req.Header.Set("User-Agent", g.userAgent)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if g.token != "" {
		req.Header.Set("Authorization", "Bearer "+g.token)
	}
	resp, err := g.client.Do(req)
	if err != nil {
		if ctxErr := ctx.Err(); ctxErr != nil {
			return fmt.Errorf("github: %s %s: %w", method, where, ctxErr)
		}
		// Transport errors quote the URL, which never holds the token.
		return fmt.Errorf("github: %s %s: %w", method, where, err)
	}
	defer resp.Body.Close()
	if hdr != nil {
		*hdr = resp.Header
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		// A failed read leaves the message short; the status says enough.
		data, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
		msg := g.redact(errorMessage(data))
		if rl := g.rateLimit(resp, method, where, msg); rl != nil {
			return rl
		}
		return &APIError{Method: method, Path: where, StatusCode: resp.StatusCode, Message: msg}
	}
	tooLarge := func() error {
		return fmt.Errorf("github: %s %s: the answer is larger than %s (safety.max_read_mib)", method, where, gitrepo.SizeText(g.maxBody))
	}
	if resp.ContentLength > g.maxBody {
		return tooLarge()
	}
	// One byte past the limit tells a body of exactly the limit from a
	// larger one; an endless body costs at most that much memory.
	data, err := io.ReadAll(io.LimitReader(resp.Body, g.maxBody+1))
	if err != nil {
		return fmt.Errorf("github: %s %s: reading the answer: %w", method, where, err)
	}
	if int64(len(data)) > g.maxBody {
		return tooLarge()
	}
	if out == nil {
		return nil
	}
	if err := json.Unmarshal(data, out); err != nil {
		return fmt.Errorf("github: %s %s: decoding the answer: %w", method, where, err)
	}
	return nil
}

// rateLimit recognises GitHub's primary (remaining 0) and secondary
// (Retry-After) rate limits, which are answered with 403 or 429.
func (g *GitHub) rateLimit(resp *http.Response, method, where, msg string) *RateLimitError {
	if resp.StatusCode != http.StatusForbidden && resp.StatusCode != http.StatusTooManyRequests {
		return nil
	}
	retryAfter := strings.TrimSpace(resp.Header.Get("Retry-After"))
	if strings.TrimSpace(resp.Header.Get("X-RateLimit-Remaining")) != "0" && retryAfter == "" {
		return nil
	}
	now := g.now()
	var reset time.Time
	if s, err := strconv.ParseInt(strings.TrimSpace(resp.Header.Get("X-RateLimit-Reset")), 10, 64); err == nil && s > 0 {
		reset = time.Unix(s, 0)
	}
	if retryAfter != "" {
		var at time.Time
		if secs, err := strconv.Atoi(retryAfter); err == nil && secs >= 0 {
			at = now.Add(time.Duration(secs) * time.Second)
		} else if t, err := http.ParseTime(retryAfter); err == nil {
			at = t
		}
		if at.After(reset) {
			reset = at
		}
	}
	if reset.IsZero() {
		reset = now.Add(unknownRetry)
	}
	return &RateLimitError{Reset: reset.UTC(), Method: method, Path: where, StatusCode: resp.StatusCode, Message: msg}
}

// errorMessage is GitHub's "message" field, or the start of a body that is
// not the API's JSON (a proxy's error page, say).
func errorMessage(data []byte) string {
	var e struct {
		Message string `json:"message"`
	}
	if json.Unmarshal(data, &e) == nil && e.Message != "" {
		return clip(e.Message)
	}
	return clip(strings.Join(strings.Fields(string(data)), " "))
}

func clip(s string) string {
	s = strings.TrimSpace(s)
	if len(s) > maxMessage {
		s = strings.ToValidUTF8(s[:maxMessage], "") + "…"
	}
	return s
}

// redact removes the token from text that came from the server, since that
// text is quoted in errors and errors are logged.
func (g *GitHub) redact(s string) string {
	if g.token == "" {
		return s
	}
	return strings.ReplaceAll(s, g.token, "[redacted]")
}

// TokenFromEnv finds a GitHub token the way gh does: GITHUB_TOKEN, then
// GH_TOKEN, then `gh auth token`. It returns "" when there is none, since
// an unauthenticated client still works for public repositories. Nil
// lookup and run mean os.Getenv and running the command.
func TokenFromEnv(lookup func(string) string, run func(name string, args ...string) ([]byte, error)) string {
	if lookup == nil {
		lookup = os.Getenv
	}
	if run == nil {
		run = runCommand
	}
	for _, k := range []string{"GITHUB_TOKEN", "GH_TOKEN"} {
		if v := strings.TrimSpace(lookup(k)); v != "" {
			return v
		}
	}
	out, err := run("gh", "auth", "token")
	if err != nil {
		return ""
	}
	tok := strings.TrimSpace(string(out))
	if strings.ContainsFunc(tok, unicode.IsSpace) {
		// Not a token: some message printed where the token should be.
		return ""
	}
	return tok
}

func runCommand(name string, args ...string) ([]byte, error) {
	return runOutput(context.Background(), "", append([]string{name}, args...), append(os.Environ(), "GH_PROMPT_DISABLED=1"), 10*time.Second)
}

// isLoopback reports whether host (a URL's Hostname, without brackets or
// port) is the local machine: an IP address in 127.0.0.0/8 or ::1, or
// exactly "localhost". A name such as "127.attacker.example" or
// "localhost.attacker.example" is resolved by DNS, which anyone may point
// anywhere, so it is not.
func isLoopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// tokenSafeURL reports whether a token may travel to u: over https, or
// over plain http to a loopback address (a test server, a local proxy).
func tokenSafeURL(u *url.URL) bool {
	switch strings.ToLower(u.Scheme) {
	case "https":
		return true
	case "http":
		return isLoopback(u.Hostname())
	}
	return false
}

// RepoFromRemote extracts "owner/name" from a git remote URL in any of the
// forms git accepts for a hosted repository: scp-like
// (git@github.com:o/r.git), https://host/o/r(.git), ssh://git@host[:port]/o/r.git
// and git://host/o/r.git. Local paths and URLs whose path is not exactly
// two segments are not hosted repositories, so they report false.
func RepoFromRemote(remote string) (string, bool) {
	remote = strings.TrimSpace(remote)
	var path string
	if i := strings.Index(remote, "://"); i >= 0 {
		u, err := url.Parse(remote)
		if err != nil || u.Host == "" {
			return "", false
		}
		switch strings.ToLower(u.Scheme) {
		case "https", "http", "ssh", "git", "git+ssh", "ssh+git":
		default:
			return "", false
		}
		path = u.Path
	} else {
		// scp-like syntax: [user@]host:path, where host has no slash. Like
		// git, a one-letter "host" is taken for a Windows drive.
		colon := strings.IndexByte(remote, ':')
		if colon <= 1 || strings.ContainsRune(remote[:colon], '/') {
			return "", false
		}
		path = remote[colon+1:]
	}
	path = strings.Trim(path, "/")
	path = strings.TrimSuffix(path, ".git")
	owner, name, ok := strings.Cut(path, "/")
	if !ok || !validRepoPart(owner) || !validRepoPart(name) {
		return "", false
	}
	return owner + "/" + name, true
}

// Reviews lists a PR's reviews, oldest first (2-B2 feedback).
func (g *GitHub) Reviews(ctx context.Context, number int) ([]Review, error) {
	if number <= 0 {
		return nil, fmt.Errorf("github: PR #%d: %w", number, ErrNotFound)
	}
	type ghReview struct {
		ID   int64 `json:"id"`
		User struct {
			Login string `json:"login"`
		} `json:"user"`
		State string `json:"state"`
		Body  string `json:"body"`
	}
	items, _, err := getPages[ghReview](ctx, g, g.repoPath("pulls", strconv.Itoa(number), "reviews"), url.Values{"per_page": {"100"}})
	if err != nil {
		return nil, err
	}
	out := make([]Review, 0, len(items))
	for _, r := range items {
		out = append(out, Review{ID: r.ID, User: r.User.Login, State: r.State, Body: r.Body})
	}
	return out, nil
}

// TokenForHost returns the credential for the GitHub API at apiURL, and an
// error when the URL is not safe to send one to. github.com credentials
// (GITHUB_TOKEN, GH_TOKEN, `gh auth token`) go to api.github.com only; a
// GitHub Enterprise host gets GH_ENTERPRISE_TOKEN (or GITHUB_ENTERPRISE_TOKEN)
// or `gh auth token --hostname HOST`. A token is never sent over plain
// http, except to a loopback address.
func TokenForHost(apiURL string, lookup func(string) string, run func(name string, args ...string) ([]byte, error)) (string, error) {
	if lookup == nil {
		lookup = os.Getenv
	}
	if run == nil {
		run = runCommand
	}
	if apiURL == "" {
		apiURL = DefaultGitHubURL
	}
	u, err := url.Parse(apiURL)
	if err != nil || u.Host == "" {
		return "", fmt.Errorf("forge.api_url %q is not a URL", apiURL)
	}
	host := strings.ToLower(u.Hostname())
	if !tokenSafeURL(u) {
		return "", fmt.Errorf("forge.api_url %q: a token is only sent over https (or http to a loopback address)", apiURL)
	}
	if host == "api.github.com" {
		return TokenFromEnv(lookup, run), nil
	}
	for _, k := range []string{"GH_ENTERPRISE_TOKEN", "GITHUB_ENTERPRISE_TOKEN"} {
		if v := strings.TrimSpace(lookup(k)); v != "" {
			return v, nil
		}
	}
	// One argument, so a host can never be read as another option.
	out, err := run("gh", "auth", "token", "--hostname="+u.Hostname())
	if err != nil {
		return "", nil
	}
	tok := strings.TrimSpace(string(out))
	if strings.ContainsFunc(tok, unicode.IsSpace) {
		return "", nil
	}
	return tok, nil
}
