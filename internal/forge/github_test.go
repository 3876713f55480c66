package forge

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

const testToken = "ghp_testsecret0123456789"

// fakeGitHub serves exactly the requests a test registers, keyed by method,
// path and sorted query; anything else fails the test, so the provider
// cannot make a request nobody planned for.
type fakeGitHub struct {
	t      *testing.T
	srv    *httptest.Server
	prefix string // the API's path below the host ("" or "/api/v3")
	token  string

	mu     sync.Mutex
	routes map[string]http.HandlerFunc
	hits   map[string]int
}

func newFakeGitHub(t *testing.T, prefix, token string) *fakeGitHub {
	f := &fakeGitHub{t: t, prefix: prefix, token: token, routes: map[string]http.HandlerFunc{}, hits: map[string]int{}}
	f.srv = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.srv.Close)
	return f
}

func (f *fakeGitHub) serve(w http.ResponseWriter, r *http.Request) {
	key := r.Method + " " + r.URL.Path
	if q := r.URL.Query().Encode(); q != "" {
		key += "?" + q
	}
	f.mu.Lock()
	h, ok := f.routes[key]
	f.hits[key]++
	f.mu.Unlock()
	if !ok {
		f.t.Errorf("unexpected request %s", key)
		http.Error(w, `{"message":"unexpected"}`, http.StatusTeapot)
		return
	}
	wantAuth := ""
	if f.token != "" {
		wantAuth = "Bearer " + f.token
	}
	if got := r.Header.Get("Authorization"); got != wantAuth {
		f.t.Errorf("%s: Authorization = %q, want %q", key, got, wantAuth)
	}
	if got := r.Header.Get("Accept"); got != "application/vnd.github+json" {
		f.t.Errorf("%s: Accept = %q", key, got)
	}
	if got := r.Header.Get("X-GitHub-Api-Version"); got != "2022-11-28" {
		f.t.Errorf("%s: X-GitHub-Api-Version = %q", key, got)
	}
	if r.Header.Get("User-Agent") == "" {
		f.t.Errorf("%s: no User-Agent", key)
	}
	h(w, r)
}

// on registers a handler for "METHOD /path?query" (path below the prefix).
func (f *fakeGitHub) on(route string, h http.HandlerFunc) {
	method, rest, _ := strings.Cut(route, " ")
	f.routes[method+" "+f.prefix+rest] = h
}

// json registers a fixed answer; link, when not empty, is the query of
// the next page of the same path.
func (f *fakeGitHub) json(route string, status int, body any, link string) {
	f.on(route, func(w http.ResponseWriter, r *http.Request) {
		if link != "" {
			next := f.srv.URL + r.URL.Path + "?" + link
			w.Header().Set("Link", fmt.Sprintf(`<%s>; rel="next", <%s>; rel="last"`, next, next))
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		json.NewEncoder(w).Encode(body)
	})
}

func (f *fakeGitHub) hit(route string) int {
	method, rest, _ := strings.Cut(route, " ")
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.hits[method+" "+f.prefix+rest]
}

func (f *fakeGitHub) client(t *testing.T) *GitHub {
	t.Helper()
	g, err := NewGitHub(GitHubOptions{Repo: "octo/widget", BaseURL: f.srv.URL + f.prefix, Token: f.token})
	if err != nil {
		t.Fatal(err)
	}
	return g
}

type obj = map[string]any

func ts(minutes int) string { return at(minutes).Format(time.RFC3339) }

// headSHA is the head commit the fake server reports for PR n.
func headSHA(n int) string { return fmt.Sprintf("%040x", 0xbeef0000+n) }

func pull(n int, title, ref string, extra obj) obj {
	p := obj{
		"number": n, "title": title, "state": "open", "draft": false,
		"head": obj{"ref": ref, "sha": headSHA(n)}, "labels": []obj{}, "created_at": ts(n),
		"merged_at": nil, "closed_at": nil, "merge_commit_sha": fmt.Sprintf("test%036d", n),
	}
	for k, v := range extra {
		p[k] = v
	}
	return p
}

func TestGitHubStatus(t *testing.T) {
	t.Parallel()
	f := newFakeGitHub(t, "", testToken)
	f.json("GET /repos/octo/widget/pulls?per_page=100&state=open", 200, []obj{
		pull(12, "Add thing", "auto/x/thing", obj{"draft": true, "labels": []obj{{"name": "ooda"}, {"name": "tier-3"}}}),
	}, "page=2&per_page=100&state=open")
	f.json("GET /repos/octo/widget/pulls?page=2&per_page=100&state=open", 200, []obj{
		pull(11, "Older", "auto/x/older", nil),
	}, "")

	var closed []obj
	// Merged at minute 100+n for n = 1..7, listed out of order; two of
	// the closed ones were never merged.
	for _, n := range []int{3, 7, 1, 5, 2, 6, 4} {
		closed = append(closed, pull(n, fmt.Sprintf("merged %d", n), fmt.Sprintf("b%d", n), obj{
			"state": "closed", "merged_at": ts(100 + n), "closed_at": ts(100 + n),
			"merge_commit_sha": fmt.Sprintf("%040d", n),
		}))
	}
	closed = append(closed,
		pull(8, "rejected early", "r8", obj{"state": "closed", "closed_at": ts(50)}),
		pull(9, "rejected late", "r9", obj{"state": "closed", "closed_at": ts(200)}),
	)
	f.json("GET /repos/octo/widget/pulls?direction=desc&per_page=30&sort=updated&state=closed", 200, closed, "")
	f.json("GET /repos/octo/widget/issues?per_page=100&state=open", 200, []obj{
		{"number": 20, "title": "Bug", "labels": []obj{{"name": "bug"}}},
		{"number": 12, "title": "Add thing", "pull_request": obj{"url": "x"}},
	}, "page=2&per_page=100&state=open")
	f.json("GET /repos/octo/widget/issues?page=2&per_page=100&state=open", 200, []obj{
		{"number": 21, "title": "Idea", "labels": []obj{}},
	}, "")

	st, err := f.client(t).Status(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(st.Open) != 2 {
		t.Fatalf("open = %+v", st.Open)
	}
	o := st.Open[0]
	if o.Number != 12 || o.Title != "Add thing" || o.HeadRef != "auto/x/thing" || !o.Draft || o.State != StateOpen ||
		!slices.Equal(o.Labels, []string{"ooda", "tier-3"}) || !o.Created.Equal(at(12)) || o.MergeSHA != "" {
		t.Errorf("open[0] = %+v", o)
	}
	if st.Open[1].Number != 11 {
		t.Errorf("second page not followed: %+v", st.Open)
	}

	var merged []int
	for _, p := range st.Merged {
		merged = append(merged, p.Number)
		if p.State != StateMerged || p.MergeSHA != fmt.Sprintf("%040d", p.Number) || !p.Merged.Equal(at(100+p.Number)) {
			t.Errorf("merged PR = %+v", p)
		}
	}
	if want := []int{7, 6, 5, 4, 3}; !slices.Equal(merged, want) {
		t.Errorf("merged = %v, want %v", merged, want)
	}
	if len(st.Closed) != 2 || st.Closed[0].Number != 9 || st.Closed[1].Number != 8 ||
		st.Closed[0].State != StateClosed || !st.Closed[0].Closed.Equal(at(200)) || st.Closed[0].MergeSHA != "" {
		t.Errorf("closed = %+v", st.Closed)
	}
	if len(st.Issues) != 2 || st.Issues[0].Number != 20 || !slices.Equal(st.Issues[0].Labels, []string{"bug"}) ||
		st.Issues[1].Number != 21 {
		t.Errorf("issues = %+v", st.Issues)
	}
}

func TestGitHubEnterpriseBaseURLAndNoToken(t *testing.T) {
	t.Parallel()
	f := newFakeGitHub(t, "/api/v3", "")
	f.json("GET /repos/octo/widget/pulls?per_page=100&state=open", 200, []obj{}, "")
	f.json("GET /repos/octo/widget/pulls?direction=desc&per_page=30&sort=updated&state=closed", 200, []obj{}, "")
	f.json("GET /repos/octo/widget/issues?per_page=100&state=open", 200, []obj{}, "")
	g, err := NewGitHub(GitHubOptions{Repo: "octo/widget", BaseURL: f.srv.URL + "/api/v3/"})
	if err != nil {
		t.Fatal(err)
	}
	st, err := g.Status(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if st.Open == nil || st.Merged == nil || st.Closed == nil || st.Issues == nil {
		t.Errorf("empty lists must be non-nil: %#v", st)
	}
	if g.Name() != "github octo/widget" {
		t.Errorf("Name = %q", g.Name())
	}
}

func TestGitHubFacts(t *testing.T) {
	t.Parallel()
	f := newFakeGitHub(t, "", testToken)
	f.json("GET /repos/octo/widget/pulls/7", 200, pull(7, "t", "auto/x/seven", obj{
		"draft": true, "additions": 30, "deletions": 4, "changed_files": 3,
	}), "")
	f.json("GET /repos/octo/widget/pulls/7/files?per_page=100", 200,
		[]obj{{"filename": "a.go"}, {"filename": "docs/b.md"}}, "page=2&per_page=100")
	f.json("GET /repos/octo/widget/pulls/7/files?page=2&per_page=100", 200, []obj{{"filename": "c.go"}}, "")

	got, err := f.client(t).Facts(context.Background(), 7)
	if err != nil {
		t.Fatal(err)
	}
	want := Facts{Number: 7, State: StateOpen, Draft: true, HeadRef: "auto/x/seven", HeadSHA: headSHA(7),
		Files: []string{"a.go", "docs/b.md", "c.go"}, ChangedFiles: 3, Additions: 30, Deletions: 4}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("facts = %+v, want %+v", got, want)
	}
}

func TestGitHubFactsState(t *testing.T) {
	t.Parallel()
	f := newFakeGitHub(t, "", testToken)
	f.json("GET /repos/octo/widget/pulls/8", 200, pull(8, "t", "r", obj{"state": "closed", "merged": true, "merged_at": ts(1)}), "")
	f.json("GET /repos/octo/widget/pulls/8/files?per_page=100", 200, []obj{}, "")
	f.json("GET /repos/octo/widget/pulls/9", 200, pull(9, "t", "r", obj{"state": "closed", "merged": false}), "")
	f.json("GET /repos/octo/widget/pulls/9/files?per_page=100", 200, []obj{}, "")
	g := f.client(t)
	for n, want := range map[int]string{8: StateMerged, 9: StateClosed} {
		got, err := g.Facts(context.Background(), n)
		if err != nil || got.State != want || got.Files == nil {
			t.Errorf("Facts(%d) = %+v, %v; want state %s", n, got, err, want)
		}
	}
}

func TestGitHubFactsRefusesTruncatedFileList(t *testing.T) {
	t.Parallel()
	f := newFakeGitHub(t, "", testToken)
	f.json("GET /repos/octo/widget/pulls/7", 200, pull(7, "t", "r", nil), "")
	f.json("GET /repos/octo/widget/pulls/7/files?per_page=100", 200, []obj{{"filename": "x"}}, "page=2&per_page=100")
	for p := 2; p <= maxPages; p++ {
		f.json(fmt.Sprintf("GET /repos/octo/widget/pulls/7/files?page=%d&per_page=100", p), 200,
			[]obj{{"filename": "x"}}, fmt.Sprintf("page=%d&per_page=100", p+1))
	}
	if _, err := f.client(t).Facts(context.Background(), 7); err == nil || !strings.Contains(err.Error(), "pages of files") {
		t.Errorf("err = %v", err)
	}
}

func TestGitHubNotFound(t *testing.T) {
	t.Parallel()
	f := newFakeGitHub(t, "", testToken)
	f.json("GET /repos/octo/widget/pulls/404", 404, obj{"message": "Not Found"}, "")
	_, err := f.client(t).Facts(context.Background(), 404)
	if !errors.Is(err, ErrNotFound) {
		t.Fatalf("err = %v, want ErrNotFound", err)
	}
	var apiErr *APIError
	if !errors.As(err, &apiErr) || apiErr.StatusCode != 404 || apiErr.Path != "/repos/octo/widget/pulls/404" {
		t.Errorf("err = %#v", err)
	}
}

func TestGitHubMergeSquash(t *testing.T) {
	t.Parallel()
	f := newFakeGitHub(t, "", testToken)
	f.on("PUT /repos/octo/widget/pulls/7/merge", func(w http.ResponseWriter, r *http.Request) {
		var body map[string]any
		if err := json.NewDecoder(r.Body).Decode(&body); err != nil || len(body) != 1 || body["merge_method"] != "squash" {
			t.Errorf("merge body = %v, %v", body, err)
		}
		if ct := r.Header.Get("Content-Type"); ct != "application/json" {
			t.Errorf("Content-Type = %q", ct)
		}
		io.WriteString(w, `{"sha":"abc","merged":true,"message":"Pull Request successfully merged"}`)
	})
	f.json("PUT /repos/octo/widget/pulls/8/merge", 405, obj{"message": "Squash merges are not allowed on this repository."}, "")
	f.json("PUT /repos/octo/widget/pulls/9/merge", 405, obj{"message": "Pull Request is not mergeable"}, "")
	f.json("PUT /repos/octo/widget/pulls/10/merge", 404, obj{"message": "Not Found"}, "")
	g := f.client(t)
	ctx := context.Background()

	if err := g.MergeSquash(ctx, 7, ""); err != nil {
		t.Errorf("merge: %v", err)
	}
	err := g.MergeSquash(ctx, 8, "")
	if !errors.Is(err, ErrSquashDisabled) || !strings.Contains(err.Error(), "Squash merges are not allowed") {
		t.Errorf("squash disabled: err = %v", err)
	}
	err = g.MergeSquash(ctx, 9, "")
	var apiErr *APIError
	if err == nil || errors.Is(err, ErrSquashDisabled) || !errors.As(err, &apiErr) || apiErr.StatusCode != 405 {
		t.Errorf("not mergeable: err = %v", err)
	}
	if err := g.MergeSquash(ctx, 10, ""); !errors.Is(err, ErrNotFound) {
		t.Errorf("missing PR: err = %v", err)
	}
	if f.hit("PUT /repos/octo/widget/pulls/8/merge") != 1 {
		t.Error("a refused squash merge was retried")
	}
}

func TestGitHubRateLimit(t *testing.T) {
	t.Parallel()
	f := newFakeGitHub(t, "", testToken)
	f.on("GET /repos/octo/widget/pulls/1", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-RateLimit-Remaining", "0")
		w.Header().Set("X-RateLimit-Reset", "1788000000")
		w.WriteHeader(http.StatusForbidden)
		io.WriteString(w, `{"message":"API rate limit exceeded"}`)
	})
	f.on("GET /repos/octo/widget/pulls/2", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Retry-After", "30")
		w.WriteHeader(http.StatusTooManyRequests)
		io.WriteString(w, `{"message":"You have exceeded a secondary rate limit"}`)
	})
	f.json("GET /repos/octo/widget/pulls/3", 403, obj{"message": "Resource not accessible by integration"}, "")
	g := f.client(t)
	now := time.Date(2026, 9, 1, 0, 0, 0, 0, time.UTC)
	g.now = func() time.Time { return now }
	ctx := context.Background()

	_, err := g.Facts(ctx, 1)
	var rl *RateLimitError
	if !errors.As(err, &rl) || !rl.Reset.Equal(time.Unix(1788000000, 0)) || rl.StatusCode != 403 {
		t.Errorf("primary limit: err = %#v", err)
	}
	_, err = g.Facts(ctx, 2)
	if !errors.As(err, &rl) || !rl.Reset.Equal(now.Add(30*time.Second)) || !strings.Contains(err.Error(), "secondary") {
		t.Errorf("secondary limit: err = %v", err)
	}
	_, err = g.Facts(ctx, 3)
	if errors.As(err, &rl) || !strings.Contains(err.Error(), "403") {
		t.Errorf("plain 403: err = %v", err)
	}
}

func TestGitHubServerErrorNeverShowsToken(t *testing.T) {
	t.Parallel()
	f := newFakeGitHub(t, "", testToken)
	f.json("GET /repos/octo/widget/pulls/5", 500, obj{"message": "Server exploded handling Bearer " + testToken}, "")
	f.on("GET /repos/octo/widget/pulls/6", func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusBadGateway)
		io.WriteString(w, "<html>bad gateway "+testToken+"</html>")
	})
	g := f.client(t)
	_, err := g.Facts(context.Background(), 5)
	if err == nil {
		t.Fatal("no error")
	}
	msg := err.Error()
	for _, want := range []string{"GET", "/repos/octo/widget/pulls/5", "500", "Server exploded"} {
		if !strings.Contains(msg, want) {
			t.Errorf("error %q lacks %q", msg, want)
		}
	}
	if strings.Contains(msg, testToken) {
		t.Errorf("error shows the token: %q", msg)
	}
	_, err = g.Facts(context.Background(), 6)
	if err == nil || strings.Contains(err.Error(), testToken) || !strings.Contains(err.Error(), "bad gateway") {
		t.Errorf("non-JSON error = %v", err)
	}
}

func TestGitHubContextCancel(t *testing.T) {
	t.Parallel()
	f := newFakeGitHub(t, "", testToken)
	arrived := make(chan struct{})
	f.on("GET /repos/octo/widget/pulls/1", func(w http.ResponseWriter, r *http.Request) {
		close(arrived)
		select {
		case <-r.Context().Done():
		case <-time.After(5 * time.Second):
			t.Error("request not cancelled")
		}
	})
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		<-arrived
		cancel()
	}()
	start := time.Now()
	_, err := f.client(t).Facts(ctx, 1)
	if !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v, want context.Canceled", err)
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("took %v", d)
	}
}

func TestGitHubPaginationStaysOnHost(t *testing.T) {
	t.Parallel()
	f := newFakeGitHub(t, "", testToken)
	f.on("GET /repos/octo/widget/pulls?per_page=100&state=open", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Link", `<https://elsewhere.example/steal?page=2>; rel="next"`)
		io.WriteString(w, "[]")
	})
	if _, err := f.client(t).Status(context.Background()); err == nil || !strings.Contains(err.Error(), "pagination link") {
		t.Errorf("err = %v", err)
	}
}

func TestGitHubReverted(t *testing.T) {
	t.Parallel()
	const sha = "0123456789abcdef0123456789abcdef01234567"
	merged := at(60)
	since := "per_page=100&since=" + strings.ReplaceAll(merged.Format(time.RFC3339), ":", "%3A")
	commit := func(msg string) obj { return obj{"sha": "f00", "commit": obj{"message": msg}} }

	for _, c := range []struct {
		name    string
		commits []obj
		want    bool
	}{
		{"none", []obj{commit("Add thing (#7)"), commit("Fix #7 follow-up")}, false},
		{"other PR", []obj{commit("Revert \"Other (#70)\"\n\nReverts octo/widget#70"), commit("Revert \"x (#17)\"")}, false},
		{"by number", []obj{commit("Revert \"Add thing (#7)\" (#9)\n\nThis reverts commit 999.")}, true},
		{"by full sha", []obj{commit("Revert \"Add thing\"\n\nThis reverts commit " + sha + ".")}, true},
		{"by short sha", []obj{commit("Revert \"Add thing\"\n\nThis reverts commit 0123456.")}, true},
		{"too short sha", []obj{commit("Revert \"Add thing\"\n\nThis reverts commit 012345.")}, false},
		{"not a revert", []obj{commit("Mention " + sha + " and #7")}, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			f := newFakeGitHub(t, "", testToken)
			f.json("GET /repos/octo/widget/commits?"+since, 200, c.commits, "")
			got, err := f.client(t).Reverted(context.Background(),
				PR{Number: 7, State: StateMerged, Merged: merged, MergeSHA: sha})
			if err != nil || got != c.want {
				t.Errorf("Reverted = %v, %v; want %v", got, err, c.want)
			}
		})
	}

	t.Run("looked up by number", func(t *testing.T) {
		t.Parallel()
		f := newFakeGitHub(t, "", testToken)
		f.json("GET /repos/octo/widget/pulls/7", 200, pull(7, "Add thing", "b", obj{
			"state": "closed", "merged": true, "merged_at": merged.Format(time.RFC3339), "merge_commit_sha": sha,
		}), "")
		f.json("GET /repos/octo/widget/commits?"+since, 200, []obj{commit("Revert \"Add thing\"\n\nThis reverts commit " + sha[:10] + ".")}, "")
		got, err := f.client(t).Reverted(context.Background(), PR{Number: 7})
		if err != nil || !got {
			t.Errorf("Reverted = %v, %v", got, err)
		}
	})

	t.Run("never merged", func(t *testing.T) {
		t.Parallel()
		f := newFakeGitHub(t, "", testToken)
		f.json("GET /repos/octo/widget/pulls/7", 200, pull(7, "x", "b", obj{"state": "closed"}), "")
		got, err := f.client(t).Reverted(context.Background(), PR{Number: 7})
		if err != nil || got {
			t.Errorf("Reverted = %v, %v", got, err)
		}
	})
}

func TestNewGitHubValidation(t *testing.T) {
	t.Parallel()
	for _, o := range []GitHubOptions{
		{Repo: "octo"},
		{Repo: "octo/widget/extra"},
		{Repo: "/widget"},
		{Repo: "octo/../x"},
		{Repo: "octo/widget", BaseURL: "ftp://example.com"},
		{Repo: "octo/widget", BaseURL: "https://user:pw@example.com"},
		{Repo: "octo/widget", Token: "two words"},
	} {
		if _, err := NewGitHub(o); err == nil {
			t.Errorf("NewGitHub(%+v) accepted", o)
		} else if o.Token != "" && strings.Contains(err.Error(), o.Token) {
			t.Errorf("error shows the token: %v", err)
		}
	}
	g, err := NewGitHub(GitHubOptions{Repo: "octo/widget", Token: testToken})
	if err != nil {
		t.Fatal(err)
	}
	if s := fmt.Sprintf("%v %+v %#v %s", g, g, g, g); strings.Contains(s, testToken) {
		t.Errorf("printing the provider shows the token: %s", s)
	}
	g, err = NewGitHub(GitHubOptions{Repo: "octo/widget"})
	if err != nil || g.base.String() != DefaultGitHubURL || g.client.Timeout != 20*time.Second || g.userAgent != "ooda" {
		t.Errorf("defaults: %+v, %v", g, err)
	}
}

func TestTokenFromEnv(t *testing.T) {
	t.Parallel()
	env := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }
	gh := func(out string, err error) func(string, ...string) ([]byte, error) {
		return func(name string, args ...string) ([]byte, error) {
			if name != "gh" || !slices.Equal(args, []string{"auth", "token"}) {
				t.Errorf("ran %s %v", name, args)
			}
			return []byte(out), err
		}
	}
	noRun := func(string, ...string) ([]byte, error) {
		t.Error("gh run although a variable was set")
		return nil, nil
	}
	for _, c := range []struct {
		name string
		env  map[string]string
		run  func(string, ...string) ([]byte, error)
		want string
	}{
		{"GITHUB_TOKEN first", map[string]string{"GITHUB_TOKEN": "a", "GH_TOKEN": "b"}, noRun, "a"},
		{"GH_TOKEN second", map[string]string{"GITHUB_TOKEN": " ", "GH_TOKEN": "b\n"}, noRun, "b"},
		{"gh auth token", nil, gh("gho_xyz\n", nil), "gho_xyz"},
		{"gh fails", nil, gh("", errors.New("not logged in")), ""},
		{"gh prints prose", nil, gh("You are not logged into any GitHub hosts.\n", nil), ""},
	} {
		if got := TokenFromEnv(env(c.env), c.run); got != c.want {
			t.Errorf("%s: TokenFromEnv = %q, want %q", c.name, got, c.want)
		}
	}
}

func TestRepoFromRemote(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"git@github.com:octo/widget.git":               "octo/widget",
		"git@github.com:octo/widget":                   "octo/widget",
		"https://github.com/octo/widget":               "octo/widget",
		"https://github.com/octo/widget.git":           "octo/widget",
		"https://github.com/octo/widget/":              "octo/widget",
		"https://token@github.com/octo/widget.git":     "octo/widget",
		"ssh://git@ghe.example.com/octo/widget.git":    "octo/widget",
		"ssh://git@ghe.example.com:2222/octo/my.repo":  "octo/my.repo",
		"git://github.com/octo/widget.git":             "octo/widget",
		"  https://github.com/octo/widget.git\n":       "octo/widget",
		"/srv/git/widget.git":                          "",
		"file:///srv/octo/widget.git":                  "",
		"../widget":                                    "",
		"https://gitlab.com/group/sub/widget.git":      "",
		"https://github.com/octo":                      "",
		"C:/repos/widget":                              "",
		"git@github.com:":                              "",
		"https://github.com/octo/widget.git?x=1#frag":  "octo/widget",
		"ssh://git@ghe.example.com/octo/widget.git/x/": "",
	} {
		got, ok := RepoFromRemote(in)
		if got != want || ok != (want != "") {
			t.Errorf("RepoFromRemote(%q) = %q, %v; want %q", in, got, ok, want)
		}
	}
}

func TestGitHubMergeSquashPinsTheCheckedHead(t *testing.T) {
	t.Parallel()
	f := newFakeGitHub(t, "", testToken)
	f.on("PUT /repos/octo/widget/pulls/7/merge", func(w http.ResponseWriter, r *http.Request) {
		var body map[string]any
		if err := json.NewDecoder(r.Body).Decode(&body); err != nil || body["sha"] != headSHA(7) || body["merge_method"] != "squash" {
			t.Errorf("merge body = %v, %v", body, err)
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusConflict)
		io.WriteString(w, `{"message":"Head branch was modified. Review and try the merge again."}`)
	})
	err := f.client(t).MergeSquash(context.Background(), 7, headSHA(7))
	if !errors.Is(err, ErrHeadMoved) {
		t.Errorf("err = %v, want ErrHeadMoved", err)
	}
}

func TestGitHubReviews(t *testing.T) {
	t.Parallel()
	f := newFakeGitHub(t, "", testToken)
	f.json("GET /repos/octo/widget/pulls/7/reviews?per_page=100", 200, []obj{
		{"id": 1, "user": obj{"login": "ana"}, "state": "CHANGES_REQUESTED", "body": "Please add a test."},
		{"id": 2, "user": obj{"login": "bo"}, "state": "APPROVED", "body": ""},
	}, "")
	rs, err := f.client(t).Reviews(context.Background(), 7)
	if err != nil || len(rs) != 2 || rs[0].User != "ana" || rs[0].State != "CHANGES_REQUESTED" || rs[0].Body != "Please add a test." || rs[1].ID != 2 {
		t.Errorf("reviews = %+v, %v", rs, err)
	}
}

func TestGitHubTokenOnlyForItsHostAndOverHTTPS(t *testing.T) {
	env := map[string]string{"GITHUB_TOKEN": "gh-public", "GH_ENTERPRISE_TOKEN": "ghe-token"}
	lookup := func(k string) string { return env[k] }
	var asked []string
	run := func(name string, args ...string) ([]byte, error) {
		asked = append(asked, strings.Join(args, " "))
		return []byte("from-gh\n"), nil
	}
	if tok, err := TokenForHost("https://api.github.com", lookup, run); err != nil || tok != "gh-public" {
		t.Errorf("github.com: %q %v", tok, err)
	}
	if tok, err := TokenForHost("https://ghe.example.com/api/v3", lookup, run); err != nil || tok != "ghe-token" {
		t.Errorf("enterprise: %q %v (a github.com token must never go to another host)", tok, err)
	}
	delete(env, "GH_ENTERPRISE_TOKEN")
	if tok, _ := TokenForHost("https://ghe.example.com/api/v3", lookup, run); tok != "from-gh" || asked[len(asked)-1] != "auth token --hostname=ghe.example.com" {
		t.Errorf("enterprise via gh: %q, asked %v", tok, asked)
	}
	if _, err := TokenForHost("http://evil.example.com", lookup, run); err == nil || !strings.Contains(err.Error(), "only sent over https") {
		t.Errorf("plain http: %v", err)
	}
	if tok, err := TokenForHost("http://127.0.0.1:8080", lookup, run); err != nil || tok != "from-gh" {
		t.Errorf("loopback http (tests): %q %v", tok, err)
	}
}

func TestGitHubFactsIncludeRenamedFromPaths(t *testing.T) {
	t.Parallel()
	f := newFakeGitHub(t, "", testToken)
	f.json("GET /repos/octo/widget/pulls/3", 200, pull(3, "Move", "auto/x/m", obj{"additions": 1, "deletions": 1, "changed_files": 1}), "")
	f.json("GET /repos/octo/widget/pulls/3/files?per_page=100", 200, []obj{
		{"filename": "docs/old-deploy.yml", "previous_filename": ".github/workflows/deploy.yml", "status": "renamed"},
	}, "")
	facts, err := f.client(t).Facts(context.Background(), 3)
	if err != nil || !slices.Equal(facts.Files, []string{"docs/old-deploy.yml", ".github/workflows/deploy.yml"}) {
		t.Errorf("files = %v, %v", facts.Files, err)
	}
}
