package forge

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

func TestWorkflowName(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"deploy.yml":                      "deploy.yml",
		" .github/workflows/Deploy.yaml":  "Deploy.yaml",
		"./.github/workflows/cd_prod.yml": "cd_prod.yml",
		"161335":                          "161335",
	} {
		if got, err := WorkflowName(in); err != nil || got != want {
			t.Errorf("WorkflowName(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "deploy", "../pulls/1/merge?x=.yml", "a/b.yml", ".hidden.yml", "dep loy.yml", "x.yml#", "0", "-3", "d\x1b[31m.yml"} {
		if got, err := WorkflowName(bad); err == nil {
			t.Errorf("WorkflowName(%q) = %q, want an error", bad, got)
		}
	}
}

func TestGitHubDispatchAndRuns(t *testing.T) {
	t.Parallel()
	f := newFakeGitHub(t, "/api/v3", testToken)
	f.json("GET /repos/octo/widget", 200, obj{"default_branch": "main", "full_name": "octo/widget"}, "")
	var body map[string]any
	f.on("POST /repos/octo/widget/actions/workflows/deploy.yml/dispatches", func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		if err := json.Unmarshal(b, &body); err != nil {
			t.Errorf("dispatch body %q: %v", b, err)
		}
		w.WriteHeader(http.StatusNoContent)
	})
	since := time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)
	f.json("GET /repos/octo/widget/actions/workflows/deploy.yml/runs?branch=main&created=%3E%3D2026-03-02T09%3A00%3A00Z&event=workflow_dispatch&per_page=30", 200, obj{
		"total_count": 3,
		"workflow_runs": []obj{
			{"id": 7, "run_number": 3, "event": "workflow_dispatch", "status": "queued", "conclusion": nil, "head_branch": "main",
				"html_url": "https://ghe.example/octo/widget/actions/runs/7", "created_at": "2026-03-02T09:00:05Z"},
			// A hostile server's fields are dropped, not kept.
			{"id": 8, "event": "workflow_dispatch\x1b[2J", "status": strings.Repeat("x", 100), "head_branch": "../x",
				"html_url": "javascript:alert(1)"},
			{"id": 0, "status": "queued"},
		},
	}, "")
	f.json("GET /repos/octo/widget/actions/runs/7", 200, obj{"id": 7, "status": "completed", "conclusion": "success",
		"html_url": "https://user:pw@ghe.example/x"}, "")
	f.json("GET /repos/octo/widget/actions/runs/9", 200, obj{"id": 10, "status": "completed"}, "")

	g := f.client(t)
	ctx := context.Background()
	ref, err := g.DefaultBranch(ctx)
	if err != nil || ref != "main" {
		t.Fatalf("DefaultBranch = %q, %v", ref, err)
	}
	inputs := map[string]json.RawMessage{"environment": json.RawMessage(`"production"`), "dry_run": json.RawMessage(`false`)}
	if err := g.DispatchWorkflow(ctx, ".github/workflows/deploy.yml", ref, inputs); err != nil {
		t.Fatal(err)
	}
	if body["ref"] != "main" || body["inputs"].(map[string]any)["environment"] != "production" || body["inputs"].(map[string]any)["dry_run"] != false {
		t.Errorf("dispatch body: %v", body)
	}
	runs, err := g.WorkflowRuns(ctx, "deploy.yml", "main", since)
	if err != nil {
		t.Fatal(err)
	}
	if len(runs) != 2 || runs[0].ID != 7 || runs[0].Status != "queued" || runs[0].HTMLURL == "" || runs[0].Created.IsZero() {
		t.Fatalf("runs: %+v", runs)
	}
	if h := runs[1]; h.Event != "" || h.Status != "" || h.HeadBranch != "" || h.HTMLURL != "" {
		t.Errorf("hostile run kept: %+v", h)
	}
	run, err := g.WorkflowRun(ctx, 7)
	if err != nil || !run.Succeeded() || run.HTMLURL != "" {
		t.Errorf("WorkflowRun(7) = %+v, %v", run, err)
	}
	if _, err := g.WorkflowRun(ctx, 9); err == nil || !strings.Contains(err.Error(), "describes run 10") {
		t.Errorf("a run answered for another id: %v", err)
	}
	if err := g.DispatchWorkflow(ctx, "../../pulls/1/merge", "main", nil); err == nil {
		t.Error("a workflow name that is a path was dispatched")
	}
	if err := g.DispatchWorkflow(ctx, "deploy.yml", "-x", nil); err == nil {
		t.Error("a ref that is an option was dispatched")
	}
	if got := g.IssueURL(12); got != f.srv.URL+"/octo/widget/issues/12" {
		t.Errorf("IssueURL = %q", got)
	}
}

func TestGitHubDispatchErrorsNameTheRequest(t *testing.T) {
	t.Parallel()
	f := newFakeGitHub(t, "", testToken)
	f.json("POST /repos/octo/widget/actions/workflows/deploy.yml/dispatches", 422, obj{"message": "Unexpected inputs provided: [\"x\"] " + testToken}, "")
	f.json("GET /repos/octo/widget", 200, obj{"default_branch": "bad..name"}, "")
	g := f.client(t)
	err := g.DispatchWorkflow(context.Background(), "deploy.yml", "main", map[string]json.RawMessage{"x": json.RawMessage(`"1"`)})
	var apiErr *APIError
	if !errors.As(err, &apiErr) || apiErr.StatusCode != 422 || !strings.Contains(err.Error(), "Unexpected inputs") || strings.Contains(err.Error(), testToken) {
		t.Errorf("dispatch error: %v", err)
	}
	if _, err := g.DefaultBranch(context.Background()); err == nil || !strings.Contains(err.Error(), "default_branch") {
		t.Errorf("an invalid default branch was taken: %v", err)
	}
}

func TestIssueURLOnGitHubCom(t *testing.T) {
	t.Parallel()
	g, err := NewGitHub(GitHubOptions{Repo: "octo/widget"})
	if err != nil {
		t.Fatal(err)
	}
	if got := g.IssueURL(3); got != "https://github.com/octo/widget/issues/3" {
		t.Errorf("IssueURL = %q", got)
	}
}
