package forge

import (
	"context"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/ooda-loop/ooda/internal/config"
)

func TestSelectProvider(t *testing.T) {
	ctx := context.Background()
	plain := t.TempDir()
	cfg := config.Default()
	cfg.Domains = config.Domains{{Name: "d", BranchPrefix: "auto/d/"}}
	if f, err := Select(ctx, cfg, plain); f != nil || err != nil {
		t.Errorf("auto outside a repository: %v, %v", f, err)
	}
	repo := t.TempDir()
	run := func(args ...string) {
		cmd := exec.Command("git", append([]string{"-C", repo}, args...)...)
		cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "HOME="+repo)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	run("init", "-q", "-b", "main")
	if f, err := Select(ctx, cfg, repo); err != nil || f == nil || f.Name() != "git" {
		t.Errorf("auto in a plain repository: %v, %v", f, err)
	}
	run("remote", "add", "origin", "git@github.com:ooda-loop/example.git")
	f, err := Select(ctx, cfg, repo)
	if err != nil || f == nil || f.Name() != "github ooda-loop/example" {
		t.Errorf("auto with a GitHub origin: %v, %v", f, err)
	}
	cfg.Forge.Provider = "none"
	if f, _ := Select(ctx, cfg, repo); f != nil {
		t.Error("provider none")
	}
	cfg.Forge.Provider = "git"
	if f, _ := Select(ctx, cfg, repo); f == nil || f.Name() != "git" {
		t.Error("provider git")
	}
	cfg.Forge.Provider = "github"
	cfg.Forge.Repo = "acme/app"
	cfg.Forge.APIURL = "https://ghe.example.com/api/v3"
	if f, _ := Select(ctx, cfg, repo); f == nil || f.Name() != "github acme/app" {
		t.Error("explicit repo")
	}
	cfg.Forge.Provider = "git"
	if _, err := Select(ctx, cfg, plain); err == nil || !strings.Contains(err.Error(), "not a git repository") {
		t.Errorf("git outside a repository: %v", err)
	}
	if !hostMatches("https://ghe.example.com/acme/app.git", "https://ghe.example.com/api/v3") || hostMatches("https://gitlab.com/a/b.git", "https://api.github.com") {
		t.Error("hostMatches")
	}
}
