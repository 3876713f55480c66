package deploy_test

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/robfig/cron/v3"
	"gopkg.in/yaml.v3"
)

// --- Dockerfile -----------------------------------------------------------

// instruction is one Dockerfile instruction, continuation lines joined.
type instruction struct {
	cmd, args string
	line      int
}

func parseDockerfile(t *testing.T, text string) []instruction {
	t.Helper()
	var out []instruction
	var cur strings.Builder
	start := 0
	for i, line := range strings.Split(text, "\n") {
		trimmed := strings.TrimSpace(line)
		if cur.Len() == 0 && (trimmed == "" || strings.HasPrefix(trimmed, "#")) {
			continue
		}
		if cur.Len() > 0 && strings.HasPrefix(trimmed, "#") {
			continue // a comment inside a continued instruction
		}
		if cur.Len() == 0 {
			start = i + 1
		}
		if strings.HasSuffix(trimmed, "\\") {
			cur.WriteString(strings.TrimSuffix(trimmed, "\\") + " ")
			continue
		}
		cur.WriteString(trimmed)
		cmd, args, _ := strings.Cut(cur.String(), " ")
		out = append(out, instruction{cmd: strings.ToUpper(cmd), args: strings.TrimSpace(args), line: start})
		cur.Reset()
	}
	if cur.Len() > 0 {
		t.Fatalf("Dockerfile: the instruction at line %d ends in a continuation", start)
	}
	return out
}

// The Dockerfile's rules: a multi-stage build from the Go image of go.mod's
// version, pinned tags (no latest), a final stage with git that runs the
// copied binary as a numeric non-root user through an ENTRYPOINT.
func TestDockerfile(t *testing.T) {
	ins := parseDockerfile(t, readFile(t, "Dockerfile"))
	args := map[string]string{}
	type stage struct {
		image, name string
		body        []instruction
	}
	var stages []*stage
	for _, in := range ins {
		switch {
		case in.cmd == "ARG" && len(stages) == 0:
			k, v, _ := strings.Cut(in.args, "=")
			args[k] = v
		case in.cmd == "FROM":
			f := strings.Fields(in.args)
			image := os.Expand(f[0], func(k string) string { return args[k] })
			s := &stage{image: image}
			if len(f) == 3 && strings.EqualFold(f[1], "AS") {
				s.name = f[2]
			}
			stages = append(stages, s)
		case len(stages) > 0:
			stages[len(stages)-1].body = append(stages[len(stages)-1].body, in)
		}
	}
	if len(stages) < 2 {
		t.Fatalf("Dockerfile: %d stage(s), want a multi-stage build (a Go build stage, then the runtime)", len(stages))
	}
	for _, s := range stages {
		name, tag, ok := strings.Cut(s.image, ":")
		if !ok || tag == "" || strings.Contains(tag, "latest") || strings.Contains(s.image, "$") {
			t.Errorf("Dockerfile: FROM %s: every image needs a pinned tag (not latest, every ARG with a default)", s.image)
		}
		_ = name
	}
	if want := goModVersion(t); args["GO_VERSION"] != want {
		t.Errorf("Dockerfile: ARG GO_VERSION=%s, but go.mod says go %s: build with the toolchain go.mod names", args["GO_VERSION"], want)
	}
	build := stages[0]
	if !strings.HasPrefix(build.image, "golang:"+args["GO_VERSION"]) || build.name == "" {
		t.Errorf("Dockerfile: the first stage is FROM %s (AS %q), want the named golang:%s build stage", build.image, build.name, args["GO_VERSION"])
	}
	built := false
	for _, in := range build.body {
		if in.cmd == "RUN" && strings.Contains(in.args, "CGO_ENABLED=0 go build") && strings.Contains(in.args, "./cmd/ooda") {
			built = true
		}
	}
	if !built {
		t.Error("Dockerfile: the build stage has no `CGO_ENABLED=0 go build ... ./cmd/ooda`: the runtime image has no C library to link against")
	}

	final := stages[len(stages)-1]
	if strings.HasPrefix(final.image, "golang:") {
		t.Errorf("Dockerfile: the runtime stage is FROM %s: the toolchain does not belong in the image", final.image)
	}
	var user, entrypoint string
	var git, binary bool
	for _, in := range final.body {
		switch in.cmd {
		case "RUN":
			if m := regexp.MustCompile(`(apk add|apt-get install)[^&;]*\bgit\b`).FindString(in.args); m != "" {
				git = true
			}
		case "COPY":
			if strings.Contains(in.args, "--from="+build.name) && strings.HasSuffix(in.args, " /usr/local/bin/ooda") {
				binary = true
			}
		case "USER":
			user = in.args
		case "ENTRYPOINT":
			entrypoint = in.args
		}
	}
	if !git {
		t.Error("Dockerfile: the runtime stage installs no git (apk add … git)")
	}
	if !binary {
		t.Errorf("Dockerfile: no COPY --from=%s … /usr/local/bin/ooda in the runtime stage", build.name)
	}
	uid, _, _ := strings.Cut(user, ":")
	if user == "" || uid == "0" || uid == "root" || !regexp.MustCompile(`^[1-9][0-9]*$`).MatchString(uid) {
		t.Errorf("Dockerfile: USER %q: the image must run as a numeric non-root user (Kubernetes' runAsNonRoot checks the number)", user)
	}
	var ep []string
	if err := json.Unmarshal([]byte(entrypoint), &ep); err != nil || len(ep) == 0 || (ep[0] != "ooda" && ep[0] != "/usr/local/bin/ooda") {
		t.Errorf("Dockerfile: ENTRYPOINT %s: want the exec form starting with ooda", entrypoint)
	}
	// The manifests run the image as this user; they must agree.
	for _, f := range []string{"deploy/kubernetes/cronjob.yaml", "deploy/kubernetes/cronjob-indexed.yaml"} {
		if !strings.Contains(readFile(t, f), "runAsUser: "+uid+"\n") {
			t.Errorf("%s: runAsUser is not the Dockerfile's USER %s", f, uid)
		}
	}
}

// dockerignore is the subset of .dockerignore's rules the file uses:
// patterns with * and **/, negation with !, the last match deciding, a
// directory's rule applying to everything under it.
type dockerignore []struct {
	re     *regexp.Regexp
	negate bool
}

func parseDockerignore(text string) dockerignore {
	var d dockerignore
	for _, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		neg := strings.HasPrefix(line, "!")
		pat := filepath.ToSlash(filepath.Clean(strings.TrimPrefix(line, "!")))
		var re strings.Builder
		re.WriteString("^")
		for i := 0; i < len(pat); i++ {
			switch {
			case strings.HasPrefix(pat[i:], "**/"):
				re.WriteString("(.*/)?")
				i += 2
			case pat[i] == '*':
				re.WriteString("[^/]*")
			case pat[i] == '?':
				re.WriteString("[^/]")
			default:
				re.WriteString(regexp.QuoteMeta(pat[i : i+1]))
			}
		}
		re.WriteString("$")
		d = append(d, struct {
			re     *regexp.Regexp
			negate bool
		}{regexp.MustCompile(re.String()), neg})
	}
	return d
}

// included reports whether a path (slash-separated, relative to the
// context) is sent to the builder.
func (d dockerignore) included(path string) bool {
	in := true
	for _, r := range d {
		parts := strings.Split(path, "/")
		for i := 1; i <= len(parts); i++ {
			if r.re.MatchString(strings.Join(parts[:i], "/")) {
				in = r.negate
				break
			}
		}
	}
	return in
}

// Every file `go build ./cmd/ooda` reads (the module's Go files and
// embedded files) and every file the Dockerfile copies is in the build
// context; the repository's history and test binaries are not.
func TestDockerignoreLetsTheBuildIn(t *testing.T) {
	d := parseDockerignore(readFile(t, ".dockerignore"))
	cmd := exec.Command("go", "list", "-deps", "-f", `{{if .Module}}{{if eq .Module.Path "github.com/ooda-loop/ooda"}}{{.Dir}}{{range .GoFiles}} {{.}}{{end}}{{range .EmbedFiles}} {{.}}{{end}}{{end}}{{end}}`, "./cmd/ooda")
	cmd.Dir = repoRoot
	cmd.Env = append(os.Environ(), "GOFLAGS=-buildvcs=false", "GOPROXY=off")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	root, err := filepath.Abs(repoRoot)
	if err != nil {
		t.Fatal(err)
	}
	need := []string{"go.mod", "go.sum", "scripts/action/cycle.sh"}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		dir, err := filepath.Rel(root, f[0])
		if err != nil {
			t.Fatal(err)
		}
		for _, name := range f[1:] {
			need = append(need, filepath.ToSlash(filepath.Join(dir, name)))
		}
	}
	if len(need) < 10 {
		t.Fatalf("go list found only %v: not the build's files", need)
	}
	for _, p := range need {
		if !d.included(p) {
			t.Errorf(".dockerignore leaves out %s, which the image's build reads", p)
		}
	}
	for _, p := range []string{".git/config", "ooda", "engine.test", "internal/cli/cli.test", "agent/state/evolve/state.json", "README.md"} {
		if d.included(p) {
			t.Errorf(".dockerignore sends %s to the builder", p)
		}
	}
}

// --- action.yml -------------------------------------------------------------

type actionFile struct {
	Inputs  map[string]struct{ Default string } `yaml:"inputs"`
	Outputs map[string]struct{ Value string }   `yaml:"outputs"`
	Runs    struct {
		Using string `yaml:"using"`
		Steps []struct {
			ID    string            `yaml:"id"`
			If    string            `yaml:"if"`
			Shell string            `yaml:"shell"`
			Run   string            `yaml:"run"`
			Uses  string            `yaml:"uses"`
			Env   map[string]string `yaml:"env"`
		} `yaml:"steps"`
	} `yaml:"runs"`
}

// action.yml is a composite action whose steps run the scripts tested
// here; every output it declares is one the cycle script writes, and the
// token goes to the push variable alone.
func TestActionYAML(t *testing.T) {
	text := readFile(t, "action.yml")
	var a actionFile
	if err := yaml.Unmarshal([]byte(text), &a); err != nil {
		t.Fatalf("action.yml: %v", err)
	}
	if a.Runs.Using != "composite" {
		t.Fatalf("action.yml: runs.using is %q, want composite", a.Runs.Using)
	}
	script := readFile(t, "scripts/action/cycle.sh")
	for i, s := range a.Runs.Steps {
		if s.Run != "" && s.Shell == "" {
			t.Errorf("action.yml: runs.steps[%d]: a run step of a composite action needs shell", i)
		}
		if m := regexp.MustCompile(`\$GITHUB_ACTION_PATH/(\S+)"`).FindStringSubmatch(s.Run); m != nil {
			if _, err := os.Stat(filepath.Join(repoRoot, m[1])); err != nil {
				t.Errorf("action.yml: runs.steps[%d].run: %v", i, err)
			}
		}
		for k, v := range s.Env {
			if strings.Contains(v, "inputs.token") && k != "OODA_PUSH_TOKEN" {
				t.Errorf("action.yml: runs.steps[%d].env.%s gets the token; only OODA_PUSH_TOKEN may", i, k)
			}
		}
	}
	for name, o := range a.Outputs {
		m := regexp.MustCompile(`^\$\{\{ steps\.cycle\.outputs\.([a-z-]+) \}\}$`).FindStringSubmatch(o.Value)
		if m == nil || m[1] != name {
			t.Errorf("action.yml: outputs.%s.value is %q, want ${{ steps.cycle.outputs.%s }}", name, o.Value, name)
			continue
		}
		if !strings.Contains(script, "output "+name+" ") {
			t.Errorf("action.yml: outputs.%s: scripts/action/cycle.sh never writes it", name)
		}
	}
	for _, m := range regexp.MustCompile(`inputs\.([a-z-]+)`).FindAllStringSubmatch(text, -1) {
		if _, ok := a.Inputs[m[1]]; !ok {
			t.Errorf("action.yml uses inputs.%s, which it does not declare", m[1])
		}
	}
	if a.Inputs["token"].Default != "${{ github.token }}" || a.Inputs["push"].Default != "true" {
		t.Errorf("action.yml: inputs token/push default to %q/%q, want ${{ github.token }}/true", a.Inputs["token"].Default, a.Inputs["push"].Default)
	}
}

// --- the workflow example ----------------------------------------------------

// deploy/github/ooda.yml is a complete workflow: scheduled and on demand,
// allowed to push, one run at a time, checking out without leaving the
// token in .git/config, and using this action.
func TestWorkflowExample(t *testing.T) {
	var w struct {
		On struct {
			Schedule         []struct{ Cron string } `yaml:"schedule"`
			WorkflowDispatch *yaml.Node              `yaml:"workflow_dispatch"`
		} `yaml:"on"`
		Permissions map[string]string `yaml:"permissions"`
		Concurrency struct {
			Group            string `yaml:"group"`
			CancelInProgress *bool  `yaml:"cancel-in-progress"`
		} `yaml:"concurrency"`
		Jobs map[string]struct {
			RunsOn string `yaml:"runs-on"`
			Steps  []struct {
				Uses string            `yaml:"uses"`
				With map[string]any    `yaml:"with"`
				Env  map[string]string `yaml:"env"`
			} `yaml:"steps"`
		} `yaml:"jobs"`
	}
	if err := yaml.Unmarshal([]byte(readFile(t, "deploy/github/ooda.yml")), &w); err != nil {
		t.Fatalf("deploy/github/ooda.yml: %v", err)
	}
	if len(w.On.Schedule) == 0 {
		t.Error("deploy/github/ooda.yml: on.schedule is empty")
	}
	for i, s := range w.On.Schedule {
		if _, err := cron.ParseStandard(s.Cron); err != nil {
			t.Errorf("deploy/github/ooda.yml: on.schedule[%d].cron %q: %v", i, s.Cron, err)
		}
	}
	if w.On.WorkflowDispatch == nil {
		t.Error("deploy/github/ooda.yml: on.workflow_dispatch is missing")
	}
	if w.Permissions["contents"] != "write" || len(w.Permissions) != 1 {
		t.Errorf("deploy/github/ooda.yml: permissions %v, want exactly contents: write", w.Permissions)
	}
	if w.Concurrency.Group == "" || w.Concurrency.CancelInProgress == nil || *w.Concurrency.CancelInProgress {
		t.Error("deploy/github/ooda.yml: concurrency needs a group and cancel-in-progress: false (a cancelled cycle could lose its push)")
	}
	job, ok := w.Jobs["cycle"]
	if !ok || job.RunsOn == "" {
		t.Fatal("deploy/github/ooda.yml: jobs.cycle with runs-on is missing")
	}
	checkout, action := -1, -1
	for i, s := range job.Steps {
		switch {
		case strings.HasPrefix(s.Uses, "actions/checkout@"):
			checkout = i
			if s.With["persist-credentials"] != false {
				t.Errorf("deploy/github/ooda.yml: jobs.cycle.steps[%d]: persist-credentials must be false: the token would sit in .git/config for every skill", i)
			}
		case strings.HasPrefix(s.Uses, "ooda-loop/ooda@"):
			action = i
		}
	}
	if checkout < 0 || action < checkout {
		t.Errorf("deploy/github/ooda.yml: want actions/checkout, then ooda-loop/ooda (steps %d, %d)", checkout, action)
	}
}

// --- Kubernetes ---------------------------------------------------------------

type envVar struct {
	Name      string `yaml:"name"`
	Value     string `yaml:"value"`
	ValueFrom *struct {
		SecretKeyRef *struct{ Name, Key string } `yaml:"secretKeyRef"`
	} `yaml:"valueFrom"`
}

type k8sObject struct {
	APIVersion string                `yaml:"apiVersion"`
	Kind       string                `yaml:"kind"`
	Metadata   struct{ Name string } `yaml:"metadata"`
	Data       map[string]string     `yaml:"data"`
	Spec       struct {
		Schedule          string `yaml:"schedule"`
		ConcurrencyPolicy string `yaml:"concurrencyPolicy"`
		JobTemplate       struct {
			Spec struct {
				CompletionMode       string `yaml:"completionMode"`
				Completions          *int   `yaml:"completions"`
				BackoffLimit         *int   `yaml:"backoffLimit"`
				BackoffLimitPerIndex *int   `yaml:"backoffLimitPerIndex"`
				Template             struct {
					Spec struct {
						RestartPolicy   string `yaml:"restartPolicy"`
						SecurityContext struct {
							RunAsNonRoot *bool `yaml:"runAsNonRoot"`
							RunAsUser    int   `yaml:"runAsUser"`
						} `yaml:"securityContext"`
						Containers []struct {
							Name            string   `yaml:"name"`
							Image           string   `yaml:"image"`
							WorkingDir      string   `yaml:"workingDir"`
							Command         []string `yaml:"command"`
							Args            []string `yaml:"args"`
							Env             []envVar `yaml:"env"`
							SecurityContext struct {
								AllowPrivilegeEscalation *bool `yaml:"allowPrivilegeEscalation"`
							} `yaml:"securityContext"`
							VolumeMounts []struct {
								Name      string `yaml:"name"`
								MountPath string `yaml:"mountPath"`
							} `yaml:"volumeMounts"`
						} `yaml:"containers"`
						Volumes []struct {
							Name      string                 `yaml:"name"`
							EmptyDir  *yaml.Node             `yaml:"emptyDir"`
							ConfigMap *struct{ Name string } `yaml:"configMap"`
						} `yaml:"volumes"`
					} `yaml:"spec"`
				} `yaml:"template"`
			} `yaml:"spec"`
		} `yaml:"jobTemplate"`
	} `yaml:"spec"`
}

func parseManifests(t *testing.T, rel string) []k8sObject {
	t.Helper()
	dec := yaml.NewDecoder(strings.NewReader(readFile(t, rel)))
	var objs []k8sObject
	for {
		var o k8sObject
		err := dec.Decode(&o)
		if err != nil {
			if err.Error() == "EOF" {
				return objs
			}
			t.Fatalf("%s: document %d: %v", rel, len(objs)+1, err)
		}
		objs = append(objs, o)
	}
}

// expandK8s does what the kubelet does to a container's args: $(NAME) of a
// defined variable becomes its value, $$ becomes $, anything else stays.
func expandK8s(s string, vars map[string]string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '$' || i+1 == len(s) {
			b.WriteByte(s[i])
			continue
		}
		switch s[i+1] {
		case '$':
			b.WriteByte('$')
			i++
		case '(':
			end := strings.IndexByte(s[i:], ')')
			if end > 0 {
				if v, ok := vars[s[i+2:i+end]]; ok {
					b.WriteString(v)
					i += end
					continue
				}
			}
			b.WriteByte('$')
		default:
			b.WriteByte('$')
		}
	}
	return b.String()
}

// The CronJobs: one cycle at a time per repository, a clone into an
// emptyDir, the token from a Secret, a non-root pod that is not retried.
func TestKubernetesManifests(t *testing.T) {
	for _, rel := range []string{"deploy/kubernetes/cronjob.yaml", "deploy/kubernetes/cronjob-indexed.yaml"} {
		t.Run(filepath.Base(rel), func(t *testing.T) {
			objs := parseManifests(t, rel)
			configMaps := map[string]map[string]string{}
			var jobs []k8sObject
			for _, o := range objs {
				switch {
				case o.Kind == "ConfigMap" && o.APIVersion == "v1":
					configMaps[o.Metadata.Name] = o.Data
				case o.Kind == "CronJob" && o.APIVersion == "batch/v1":
					jobs = append(jobs, o)
				default:
					t.Errorf("%s: unexpected %s %s", rel, o.APIVersion, o.Kind)
				}
			}
			if len(jobs) != 1 {
				t.Fatalf("%s: %d CronJobs, want 1", rel, len(jobs))
			}
			cj := jobs[0]
			at := rel + ": CronJob " + cj.Metadata.Name
			if _, err := cron.ParseStandard(cj.Spec.Schedule); err != nil {
				t.Errorf("%s: spec.schedule %q: %v", at, cj.Spec.Schedule, err)
			}
			if cj.Spec.ConcurrencyPolicy != "Forbid" {
				t.Errorf("%s: spec.concurrencyPolicy is %q, want Forbid (two cycles of one repository would race to push)", at, cj.Spec.ConcurrencyPolicy)
			}
			js := cj.Spec.JobTemplate.Spec
			pod := js.Template.Spec
			if pod.RestartPolicy != "Never" {
				t.Errorf("%s: restartPolicy %q, want Never", at, pod.RestartPolicy)
			}
			if pod.SecurityContext.RunAsNonRoot == nil || !*pod.SecurityContext.RunAsNonRoot || pod.SecurityContext.RunAsUser == 0 {
				t.Errorf("%s: the pod must run as non-root (runAsNonRoot: true, runAsUser)", at)
			}
			if len(pod.Containers) != 1 {
				t.Fatalf("%s: %d containers, want 1", at, len(pod.Containers))
			}
			c := pod.Containers[0]
			if _, tag, ok := strings.Cut(c.Image, ":"); !ok || tag == "latest" {
				t.Errorf("%s: image %q needs a pinned tag", at, c.Image)
			}
			if c.SecurityContext.AllowPrivilegeEscalation == nil || *c.SecurityContext.AllowPrivilegeEscalation {
				t.Errorf("%s: containers[0].securityContext.allowPrivilegeEscalation must be false", at)
			}
			emptyDirs := map[string]bool{}
			for _, v := range pod.Volumes {
				if v.EmptyDir != nil {
					emptyDirs[v.Name] = true
				}
				if v.ConfigMap != nil && configMaps[v.ConfigMap.Name] == nil {
					t.Errorf("%s: volume %s names ConfigMap %s, which the file does not define", at, v.Name, v.ConfigMap.Name)
				}
			}
			workOnEmptyDir := false
			for _, m := range c.VolumeMounts {
				if m.MountPath == c.WorkingDir && emptyDirs[m.Name] {
					workOnEmptyDir = true
				}
			}
			if c.WorkingDir == "" || !workOnEmptyDir {
				t.Errorf("%s: the working directory %q, where the clone goes, is not an emptyDir", at, c.WorkingDir)
			}
			secretEnv := map[string]bool{}
			for _, e := range c.Env {
				if e.ValueFrom != nil && e.ValueFrom.SecretKeyRef != nil {
					secretEnv[e.Name] = true
				} else if regexp.MustCompile(`(?i)token|secret|password`).MatchString(e.Name) {
					t.Errorf("%s: env %s holds a credential as a literal value; take it from a Secret", at, e.Name)
				}
			}
			if !secretEnv["OODA_PUSH_TOKEN"] {
				t.Errorf("%s: OODA_PUSH_TOKEN does not come from a Secret", at)
			}
			script := strings.Join(c.Args, "\n")
			if !strings.Contains(script, "clone") || !strings.Contains(script, "exec ooda-cycle-push") {
				t.Errorf("%s: the container does not clone and run ooda-cycle-push:\n%s", at, script)
			}
			if js.CompletionMode == "Indexed" {
				if js.BackoffLimitPerIndex == nil {
					t.Errorf("%s: an Indexed Job needs backoffLimitPerIndex, or one repository's failure stops the others", at)
				}
				lines := 0
				for _, data := range configMaps {
					for _, l := range strings.Split(strings.TrimSpace(data["repositories"]), "\n") {
						if len(strings.Fields(l)) == 2 {
							lines++
						}
					}
				}
				if js.Completions == nil || *js.Completions != lines {
					t.Errorf("%s: completions %v, but the ConfigMap lists %d repositories", at, js.Completions, lines)
				}
			} else if js.BackoffLimit == nil || *js.BackoffLimit != 0 {
				t.Errorf("%s: backoffLimit must be 0: a failed cycle is recorded, a retry only repeats it", at)
			}
		})
	}
}

// The containers' shell scripts, expanded as the kubelet expands them, run
// for real: each clones a repository from a bare "remote", runs a cycle and
// pushes its state commit, and leaves the token out of .git/config.
func TestKubernetesJobScriptsRun(t *testing.T) {
	const token = "ghs_k8sTokenForTheTest0123456789"
	for _, tc := range []struct {
		rel   string
		index string
	}{
		{"deploy/kubernetes/cronjob.yaml", ""},
		{"deploy/kubernetes/cronjob-indexed.yaml", "1"},
	} {
		t.Run(filepath.Base(tc.rel), func(t *testing.T) {
			var cj k8sObject
			for _, o := range parseManifests(t, tc.rel) {
				if o.Kind == "CronJob" {
					cj = o
				}
			}
			c := cj.Spec.JobTemplate.Spec.Template.Spec.Containers[0]
			p := newProject(t, baseConfig(noopSkill))
			work := t.TempDir()
			vars := map[string]string{}
			for _, e := range c.Env {
				vars[e.Name] = e.Value
			}
			// The manifest's values, pointed at this machine: the remote,
			// a repositories file, a writable HOME, the Secret's token.
			vars["OODA_PUSH_TOKEN"], vars["GITHUB_TOKEN"], vars["HOME"] = token, token, p.home
			if _, ok := vars["REPO_URL"]; ok {
				vars["REPO_URL"] = p.remote
			}
			if _, ok := vars["REPOSITORIES"]; ok {
				list := filepath.Join(t.TempDir(), "repositories")
				content := "/nonexistent/other.git main\n" + p.remote + " main\n"
				if err := os.WriteFile(list, []byte(content), 0o644); err != nil {
					t.Fatal(err)
				}
				vars["REPOSITORIES"] = list
			}
			if tc.index != "" {
				vars["JOB_COMPLETION_INDEX"] = tc.index
			}
			args := make([]string, len(c.Args))
			for i, a := range c.Args {
				args[i] = expandK8s(a, vars)
			}
			if c.Command[0] != "/bin/sh" {
				t.Fatalf("command %v: want /bin/sh -c", c.Command)
			}
			cmd := exec.Command("sh", append(c.Command[1:], args...)...)
			cmd.Dir = work
			env := p.env("OODA_NOW="+firstCycleAt, "PATH="+binDir+string(os.PathListSeparator)+os.Getenv("PATH"))
			for k, v := range vars {
				env = append(env, k+"="+v)
			}
			cmd.Env = env
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("the container's script failed: %v\n%s", err, out)
			}
			if log := p.remoteLog(t); !strings.HasPrefix(log[0], "evolve: cycle #1") {
				t.Fatalf("remote main's last commit is %q, want the cycle's\n%s", log[0], out)
			}
			cfg, err := os.ReadFile(filepath.Join(work, "repo", ".git", "config"))
			if err != nil {
				t.Fatal(err)
			}
			if strings.Contains(string(cfg), token) || strings.Contains(string(out), token) {
				t.Error("the token was written into the clone's .git/config or the log")
			}
		})
	}
}

// --- systemd and cron -----------------------------------------------------

// unit is a systemd unit file: section → key → values (a key may repeat).
type unit map[string]map[string][]string

func parseUnit(t *testing.T, rel string) unit {
	t.Helper()
	u := unit{}
	section := ""
	for i, line := range strings.Split(readFile(t, rel), "\n") {
		line = strings.TrimSpace(line)
		switch {
		case line == "" || strings.HasPrefix(line, "#") || strings.HasPrefix(line, ";"):
		case strings.HasPrefix(line, "[") && strings.HasSuffix(line, "]"):
			section = line[1 : len(line)-1]
			u[section] = map[string][]string{}
		default:
			k, v, ok := strings.Cut(line, "=")
			if !ok || section == "" {
				t.Fatalf("%s:%d: %q is not key=value inside a section", rel, i+1, line)
			}
			u[section][k] = append(u[section][k], v)
		}
	}
	return u
}

func (u unit) get(section, key string) string {
	v := u[section][key]
	if len(v) == 0 {
		return ""
	}
	return v[len(v)-1]
}

// The units have the keys they need: the timer starts the oneshot cycle
// service and catches up after downtime; the session service restarts on a
// crash but not on a HALT or a configuration error; both run as a user of
// their own with the project the only writable path.
func TestSystemdUnits(t *testing.T) {
	dir := "deploy/systemd/"
	cycle := parseUnit(t, dir+"ooda-cycle.service")
	timer := parseUnit(t, dir+"ooda-cycle.timer")
	session := parseUnit(t, dir+"ooda-run.service")

	for name, u := range map[string]unit{"ooda-cycle.service": cycle, "ooda-run.service": session} {
		for _, key := range []string{"ExecStart", "User", "WorkingDirectory", "ReadWritePaths", "ProtectSystem", "NoNewPrivileges"} {
			if u.get("Service", key) == "" {
				t.Errorf("%s%s: [Service] %s is missing", dir, name, key)
			}
		}
		if user := u.get("Service", "User"); user == "root" || user == "0" {
			t.Errorf("%s%s: User=%s: run ooda as a user of its own", dir, name, user)
		}
		if wd := u.get("Service", "WorkingDirectory"); !strings.Contains(u.get("Service", "ReadWritePaths"), wd) ||
			!strings.Contains(u.get("Service", "ExecStart"), "--project "+wd+" ") {
			t.Errorf("%s%s: the project %s must be the writable path and ooda's --project", dir, name, wd)
		}
		if u.get("Unit", "Description") == "" {
			t.Errorf("%s%s: [Unit] Description is missing", dir, name)
		}
	}
	if got := cycle.get("Service", "Type"); got != "oneshot" {
		t.Errorf("%sooda-cycle.service: Type=%s, want oneshot (one cycle, then exit)", dir, got)
	}
	if f := strings.Fields(cycle.get("Service", "ExecStart")); len(f) == 0 || !strings.HasSuffix(f[0], "/ooda") || f[len(f)-1] != "cycle" {
		t.Errorf("%sooda-cycle.service: ExecStart=%s, want ooda … cycle", dir, cycle.get("Service", "ExecStart"))
	}
	if cycle.get("Install", "WantedBy") != "" {
		t.Errorf("%sooda-cycle.service: [Install] makes the timer's service start at boot too; the timer starts it", dir)
	}
	for _, key := range []string{"OnCalendar", "Persistent", "Unit"} {
		if timer.get("Timer", key) == "" {
			t.Errorf("%sooda-cycle.timer: [Timer] %s is missing", dir, key)
		}
	}
	if timer.get("Timer", "Unit") != "ooda-cycle.service" || timer.get("Timer", "Persistent") != "true" ||
		timer.get("Install", "WantedBy") != "timers.target" {
		t.Errorf("%sooda-cycle.timer: want Unit=ooda-cycle.service, Persistent=true, WantedBy=timers.target", dir)
	}
	if f := strings.Fields(session.get("Service", "ExecStart")); !slices.Contains(f, "run") || !slices.Contains(f, "--forever") {
		t.Errorf("%sooda-run.service: ExecStart=%s, want ooda … run --forever", dir, session.get("Service", "ExecStart"))
	}
	prevent := strings.Fields(session.get("Service", "RestartPreventExitStatus"))
	if session.get("Service", "Restart") != "on-failure" || !slices.Contains(prevent, "3") || !slices.Contains(prevent, "2") {
		t.Errorf("%sooda-run.service: want Restart=on-failure with RestartPreventExitStatus holding 2 and 3 (a HALT waits for a person)", dir)
	}
	if session.get("Install", "WantedBy") != "multi-user.target" {
		t.Errorf("%sooda-run.service: [Install] WantedBy=multi-user.target is missing", dir)
	}
}

// systemd itself accepts the units, when it is installed: ExecStart is
// pointed at the built binary, since /usr/local/bin/ooda is not here.
func TestSystemdAnalyzeVerify(t *testing.T) {
	analyze, err := exec.LookPath("systemd-analyze")
	if err != nil {
		t.Skip("systemd-analyze is not installed; TestSystemdUnits checked the keys")
	}
	dir := t.TempDir()
	var files []string
	for _, name := range []string{"ooda-cycle.service", "ooda-cycle.timer", "ooda-run.service"} {
		text := strings.ReplaceAll(readFile(t, "deploy/systemd/"+name), "/usr/local/bin/ooda", filepath.Join(binDir, "ooda"))
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		files = append(files, path)
	}
	cmd := exec.Command(analyze, append([]string{"verify", "--man=no"}, files...)...)
	out, err := cmd.CombinedOutput()
	// Warnings about the machine (no systemd running in a container, no
	// user "ooda") are not about the units; a unit's own error names it.
	for _, line := range strings.Split(string(out), "\n") {
		if strings.Contains(line, "ooda-") && !strings.Contains(line, "Failed to resolve user") &&
			!strings.Contains(line, "Unit ooda-cycle.service not found") {
			t.Errorf("systemd-analyze verify: %s", line)
		}
	}
	if err != nil && !strings.Contains(string(out), "ooda-") {
		t.Logf("systemd-analyze verify could not check the units on this machine (%v): %s", err, out)
	}
}

// The crontab line has a valid schedule and runs one cycle of the project.
func TestCrontab(t *testing.T) {
	found := false
	for _, line := range strings.Split(readFile(t, "deploy/cron/crontab"), "\n") {
		if line == "" || strings.HasPrefix(line, "#") || regexp.MustCompile(`^[A-Z_]+=`).MatchString(line) {
			continue
		}
		f := strings.Fields(line)
		if len(f) < 6 {
			t.Fatalf("deploy/cron/crontab: %q is not a schedule and a command", line)
		}
		if _, err := cron.ParseStandard(strings.Join(f[:5], " ")); err != nil {
			t.Errorf("deploy/cron/crontab: %q: %v", line, err)
		}
		if !strings.Contains(line, "ooda --project /srv/app cycle") || strings.Contains(line, "%") {
			t.Errorf("deploy/cron/crontab: %q: want `ooda --project /srv/app cycle`, and no %% (cron turns it into a newline)", line)
		}
		found = true
	}
	if !found {
		t.Error("deploy/cron/crontab has no schedule line")
	}
}

// --- docs/running.md ----------------------------------------------------------

// docs/running.md shows each file as it is, so what a reader copies is
// what these tests checked.
func TestRunningDocShowsTheFiles(t *testing.T) {
	doc := readFile(t, "docs/running.md")
	for _, rel := range []string{
		"deploy/github/ooda.yml",
		"deploy/kubernetes/cronjob.yaml",
		"deploy/kubernetes/cronjob-indexed.yaml",
		"deploy/systemd/ooda-cycle.service",
		"deploy/systemd/ooda-cycle.timer",
		"deploy/systemd/ooda-run.service",
		"deploy/cron/crontab",
	} {
		if !strings.Contains(doc, "```"+fence(rel)+"\n"+readFile(t, rel)+"```\n") {
			t.Errorf("docs/running.md does not show %s exactly as it is (a ```%s block holding the whole file)", rel, fence(rel))
		}
	}
	for _, link := range regexp.MustCompile(`\]\(([^)#:]+)(#[^)]*)?\)`).FindAllStringSubmatch(doc, -1) {
		if _, err := os.Stat(filepath.Join(repoRoot, "docs", link[1])); err != nil {
			t.Errorf("docs/running.md links to %s: %v", link[1], err)
		}
	}
}

// fence is the code block language a file is shown with.
func fence(rel string) string {
	switch filepath.Ext(rel) {
	case ".yml", ".yaml":
		return "yaml"
	case ".service", ".timer":
		return "ini"
	default:
		return ""
	}
}
