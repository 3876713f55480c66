// Package dashboard serves a project's loop over HTTP, read-only: the page
// of what `ooda status` shows with the Loop Scorecard (server-rendered, no
// script needed), the JSON documents of `ooda status --json` and `ooda
// status --scorecard --json`, the cycle history, and /metrics in the
// Prometheus exposition format. Several projects are served together
// under /p/<name>/, with a page listing them all.
//
// Every reading goes through the readers the status views use
// (present.Dashboard, present.BuildScorecard, state.Store): no lock is
// taken and nothing is written, so a request can never disturb a running
// cycle, and a named pipe or an oversized file in place of a state file is
// refused, not waited on. Every text from a state file is masked and
// escaped before it is written; the page is html/template's, so a summary
// holding markup is shown as text (docs/security.md).
package dashboard

import (
	"bytes"
	"embed"
	"errors"
	"fmt"
	"html/template"
	"net/http"
	"net/url"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/ooda-loop/ooda/internal/clock"
	"github.com/ooda-loop/ooda/internal/config"
	"github.com/ooda-loop/ooda/internal/metrics"
	"github.com/ooda-loop/ooda/internal/notify"
	"github.com/ooda-loop/ooda/internal/state"
)

// ContentSecurityPolicy is sent with every response: the page loads its
// style sheet from the server itself and nothing else, runs no inline
// script or style, and cannot be framed, so a string that escaped the
// template still could not run or reach another origin.
const ContentSecurityPolicy = "default-src 'none'; style-src 'self'; img-src 'self' data:; script-src 'self'; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

// MaxHistoryCycles is the widest range /api/history serves in one
// response; a wider one is refused, so one request cannot make the
// server stream a history without bound.
const MaxHistoryCycles = 10000

//go:embed assets
var assets embed.FS

// styleSheetPath is where the embedded style sheet is served.
const styleSheetPath = "/static/dashboard.css"

// Project is one project the dashboard serves.
type Project struct {
	// Name is the project's name in the list and in /p/<name>/ when
	// several projects are served (metrics.Projects makes them distinct);
	// unused for one project alone.
	Name string
	// Dir is the project root.
	Dir string
	// ConfigPath is the configuration file; empty for Dir/config.json.
	ConfigPath string
}

func (p Project) configPath() string {
	if p.ConfigPath != "" {
		return p.ConfigPath
	}
	return filepath.Join(p.Dir, metrics.ConfigFile)
}

// load reads the project's configuration afresh, so that a page shows a
// configuration changed while the server runs, and registers the
// credentials its notifications name before anything of the project is
// written out.
func (p Project) load() (*config.Config, *state.Store, error) {
	cfg, err := config.LoadProject(p.configPath(), p.Dir)
	if err != nil {
		return nil, nil, err
	}
	notify.RegisterSecrets(cfg.Notifications)
	return cfg, state.ForConfig(p.Dir, cfg), nil
}

// Options configure a Handler.
type Options struct {
	// Projects are the projects served: one alone at the root, or, with
	// Many, each under /p/<name>/ and listed at the root.
	Projects []Project
	// Many serves Projects as a list, even a list of one.
	Many bool
	// Now is the instant a reading is taken at (today's cost is the spend
	// of its UTC day); nil: the real clock.
	Now func() time.Time
}

// server is the http.Handler New returns.
type server struct {
	projects []Project
	// byLength are the projects longest name first, so that /p/a/api/
	// goes to "a/api" rather than to a project named "a".
	byLength []Project
	many     bool
	now      func() time.Time
	metrics  *metrics.Collector
	page     *template.Template
	list     *template.Template
}

// New returns the dashboard's handler.
func New(o Options) (http.Handler, error) {
	if len(o.Projects) == 0 {
		return nil, errors.New("dashboard: no project to serve")
	}
	if len(o.Projects) > 1 && !o.Many {
		return nil, errors.New("dashboard: several projects are served as a list (Options.Many)")
	}
	now := o.Now
	if now == nil {
		now = clock.Real{}.Now
	}
	s := &server{projects: slices.Clone(o.Projects), many: o.Many, now: now}
	s.byLength = slices.Clone(s.projects)
	slices.SortStableFunc(s.byLength, func(a, b Project) int { return len(b.Name) - len(a.Name) })

	if o.Many {
		mps := make([]metrics.Project, len(s.projects))
		for i, p := range s.projects {
			mps[i] = metrics.Project{Name: p.Name, Dir: p.Dir}
		}
		c, err := metrics.NewManyCollector(mps, now)
		if err != nil {
			return nil, err
		}
		s.metrics = c
	} else {
		p := s.projects[0]
		mp := metrics.Project{Dir: p.Dir}
		if p.ConfigPath != "" && filepath.Clean(p.ConfigPath) != filepath.Join(p.Dir, metrics.ConfigFile) {
			// A configuration kept elsewhere is read once here: the
			// collector rereads only <project>/config.json by itself.
			cfg, _, err := p.load()
			if err != nil {
				return nil, err
			}
			mp.Config = cfg
		}
		s.metrics = metrics.NewCollector(mp, now)
	}

	var err error
	if s.page, err = template.New("page.html").Funcs(funcs).ParseFS(assets, "assets/page.html"); err != nil {
		return nil, err
	}
	if s.list, err = template.New("list.html").Funcs(funcs).ParseFS(assets, "assets/list.html"); err != nil {
		return nil, err
	}
	return s, nil
}

// serveMetrics answers /metrics with the projects read afresh. What could
// be read is served even when part of it could not, as `ooda status
// --metrics` prints it; only an error with nothing to show is a 500.
func (s *server) serveMetrics(w http.ResponseWriter) {
	var b bytes.Buffer
	if err := s.metrics.Write(&b); err != nil && b.Len() == 0 {
		http.Error(w, "500 the metrics could not be read: "+err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", metrics.ContentType)
	w.Write(b.Bytes())
}

// setHeaders sets the headers every response carries, an error's too.
func setHeaders(h http.Header) {
	h.Set("Content-Security-Policy", ContentSecurityPolicy)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("Cache-Control", "no-store")
}

// ServeHTTP routes a request. Only GET and HEAD are served: the dashboard
// changes nothing, so there is nothing to post.
func (s *server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	setHeaders(w.Header())
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, "405 method not allowed: the dashboard only reads (GET, HEAD)", http.StatusMethodNotAllowed)
		return
	}
	path := r.URL.Path
	switch {
	case path == styleSheetPath:
		s.styleSheet(w)
		return
	case path == "/metrics":
		s.serveMetrics(w)
		return
	case path == liveScriptPath:
		s.liveScript(w)
		return
	case !s.many:
		s.project(w, r, s.projects[0], path, "")
		return
	case path == "/":
		s.servePage(w, s.list, s.listing())
		return
	case path == "/api/version":
		writeJSON(w, http.StatusOK, struct {
			Version string `json:"version"`
		}{s.listVersion()})
		return
	}
	if rest, ok := strings.CutPrefix(path, "/p/"); ok {
		for _, p := range s.byLength {
			if sub, ok := strings.CutPrefix(rest, p.Name+"/"); ok {
				s.project(w, r, p, "/"+sub, projectBase(p.Name))
				return
			}
			if rest == p.Name {
				http.Redirect(w, r, projectBase(p.Name)+"/", http.StatusMovedPermanently)
				return
			}
		}
	}
	notFound(w)
}

// projectBase is the path a project of many is served under, each segment
// of its name escaped.
func projectBase(name string) string {
	segs := strings.Split(name, "/")
	for i, s := range segs {
		segs[i] = url.PathEscape(s)
	}
	return "/p/" + strings.Join(segs, "/")
}

func notFound(w http.ResponseWriter) {
	http.Error(w, "404 not found", http.StatusNotFound)
}

// project serves one project's routes; path is relative to base, the
// prefix its links carry ("" for a project alone).
func (s *server) project(w http.ResponseWriter, r *http.Request, p Project, path, base string) {
	switch path {
	case "/":
		s.projectPage(w, p, base)
	case "/api/status":
		s.apiStatus(w, p)
	case "/api/scorecard":
		s.apiScorecard(w, r, p)
	case "/api/history":
		s.apiHistory(w, r, p)
	case "/api/version":
		s.apiVersion(w, p)
	default:
		notFound(w)
	}
}

func (s *server) styleSheet(w http.ResponseWriter) {
	b, err := assets.ReadFile("assets/dashboard.css")
	if err != nil {
		http.Error(w, "500 "+err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/css; charset=utf-8")
	w.Write(b)
}

// configProblem is the text a project whose configuration cannot be
// loaded is shown with: the file and the reason
// (config.Error names the file itself).
func configProblem(err error) string {
	if config.IsConfigError(err) {
		return "invalid configuration: " + err.Error()
	}
	return fmt.Sprintf("configuration: %v", err)
}
