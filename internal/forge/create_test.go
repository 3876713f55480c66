package forge

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// A draft PR is POSTed with head, base, a one-line title and draft true;
// a repository without drafts (422 naming them) gets a ready PR on the
// second try, and any other refusal is the error.
func TestGitHubCreateDraft(t *testing.T) {
	var bodies []map[string]any
	noDrafts := true
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.URL.Path != "/repos/octo/widget/pulls" {
			http.NotFound(w, r)
			return
		}
		var b map[string]any
		_ = json.NewDecoder(r.Body).Decode(&b)
		bodies = append(bodies, b)
		switch {
		case b["head"] == "auto/x/exists":
			w.WriteHeader(http.StatusUnprocessableEntity)
			w.Write([]byte(`{"message": "Validation Failed: A pull request already exists for octo:auto/x/exists."}`))
		case b["draft"] == true && noDrafts:
			w.WriteHeader(http.StatusUnprocessableEntity)
			w.Write([]byte(`{"message": "Draft pull requests are not supported in this repository."}`))
		default:
			w.WriteHeader(http.StatusCreated)
			json.NewEncoder(w).Encode(map[string]any{"number": 7, "state": "open", "draft": b["draft"],
				"title": b["title"], "head": map[string]string{"ref": b["head"].(string)}})
		}
	}))
	defer srv.Close()
	g, err := NewGitHub(GitHubOptions{Repo: "octo/widget", BaseURL: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	pr, err := g.CreateDraft(ctx, NewPR{Head: "auto/x/one", Base: "main", Title: "Fix\nit \x1b[31mnow", Body: "why"})
	if err != nil || pr.Number != 7 || pr.Draft || pr.HeadRef != "auto/x/one" {
		t.Fatalf("%+v %v", pr, err)
	}
	if len(bodies) != 2 || bodies[0]["draft"] != true || bodies[1]["draft"] != false || bodies[0]["title"] != "Fix it [31mnow" || bodies[0]["base"] != "main" {
		t.Fatalf("requests %v", bodies)
	}
	noDrafts = false
	if pr, err := g.CreateDraft(ctx, NewPR{Head: "auto/x/two", Base: "main", Title: "t"}); err != nil || !pr.Draft {
		t.Fatalf("%+v %v", pr, err)
	}
	_, err = g.CreateDraft(ctx, NewPR{Head: "auto/x/exists", Base: "main", Title: "t"})
	var apiErr *APIError
	if !errors.As(err, &apiErr) || apiErr.StatusCode != http.StatusUnprocessableEntity {
		t.Fatalf("err %v", err)
	}
	n := len(bodies)
	if _, err := g.CreateDraft(ctx, NewPR{Head: "--upload-pack=x", Base: "main"}); err == nil || len(bodies) != n {
		t.Fatalf("an invalid head was sent: %v", err)
	}
}

// On plain git the branch is the PR: found open under a prefix, refused
// outside the prefixes, unknown when it does not exist, and not open when
// it has no commit of its own.
func TestGitCreateDraft(t *testing.T) {
	r := newRepo(t, "main")
	r.commit(at(0), "init", "a.txt", "a\n")
	r.git("branch", "auto/x/empty")
	r.git("checkout", "-q", "-b", "auto/x/work")
	r.commit(at(1), "Do the work", "b.txt", "b\n")
	r.git("checkout", "-q", "main")
	g := newGit(t, r.dir, "auto/x/")
	ctx := context.Background()
	pr, err := g.CreateDraft(ctx, NewPR{Head: "auto/x/work", Base: "main"})
	if err != nil || pr.Number != BranchNumber("auto/x/work") || pr.State != StateOpen || pr.Title != "Do the work" {
		t.Fatalf("%+v %v", pr, err)
	}
	if _, err := g.CreateDraft(ctx, NewPR{Head: "feature/y", Base: "main"}); err == nil || !strings.Contains(err.Error(), "under none of the branch prefixes") {
		t.Errorf("outside the prefixes: %v", err)
	}
	if _, err := g.CreateDraft(ctx, NewPR{Head: "auto/x/missing", Base: "main"}); !errors.Is(err, ErrNotFound) {
		t.Errorf("missing: %v", err)
	}
	if _, err := g.CreateDraft(ctx, NewPR{Head: "auto/x/empty", Base: "main"}); err == nil || !strings.Contains(err.Error(), "merged, not open") {
		t.Errorf("empty branch: %v", err)
	}
}
