package cli

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/ooda-loop/ooda/internal/dashboard"
	"github.com/ooda-loop/ooda/internal/metrics"
	"github.com/ooda-loop/ooda/internal/proc"
	"github.com/ooda-loop/ooda/internal/safetext"
	"github.com/ooda-loop/ooda/internal/secret"
)

// defaultDashboardAddr is where `ooda dashboard` listens without --listen:
// the loopback interface only.
const defaultDashboardAddr = "127.0.0.1:8765"

type dashboardOptions struct {
	listen      string
	open        bool
	allowRemote bool
	projects    []string
}

func newDashboardCmd(g *globals) *cobra.Command {
	var o dashboardOptions
	cmd := &cobra.Command{
		Use:   "dashboard [--listen ADDR] [--open] [--allow-remote] [--projects DIR...]",
		Short: "Serve the loop's dashboard, its JSON and its metrics over HTTP, read-only",
		Long: `Serve the project's dashboard over HTTP until interrupted: the page of
ooda status with plots of its history, the Loop Scorecard, the action
queue and the session (usable without JavaScript), the JSON of ooda status --json at
/api/status, of the scorecard at /api/scorecard?window=N, the cycle
history at /api/history?from=N&to=M, and /metrics in the Prometheus
exposition format (docs/dashboard.md).

It listens on 127.0.0.1:8765 unless --listen names another address. An
address other than the loopback interface (127.0.0.0/8, ::1, localhost)
is refused unless --allow-remote: the dashboard has no authentication,
and the state it shows names the project's work.

The server only reads, as ooda status does: it takes no lock and writes
nothing, so it can run beside the cycles it shows. The page follows new
cycles by itself (a small script asks /api/version every 2 seconds);
without JavaScript, reload it. GET and HEAD only.

--projects DIR... serves several projects (each directory holding a
config.json; a shell glob gives them all, and a quoted pattern such as
'/srv/*' is expanded once, at start, to the directories holding one): a
page with one row per
project links to each project's page at /p/<name>/, and /metrics labels
every series with its project.

--open opens the page in the desktop's browser (xdg-open or open) when
one is there. SIGINT or SIGTERM stops the server (exit 0).`,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runDashboard(g, cmd, o, args)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.listen, "listen", defaultDashboardAddr, "the address to listen on, host:port (a loopback address unless --allow-remote)")
	f.BoolVar(&o.open, "open", false, "open the page in the browser (xdg-open or open, when present)")
	f.BoolVar(&o.allowRemote, "allow-remote", false, "allow --listen to name an address other machines can reach")
	f.StringArrayVar(&o.projects, "projects", nil, "serve these project directories together (more may follow as arguments, as a shell glob expands; a quoted pattern is expanded to the directories holding a config.json)")
	return cmd
}

// loopbackAddr reports whether addr (host:port) listens on the loopback
// interface only. A host name other than localhost is not: it may
// resolve anywhere.
func loopbackAddr(addr string) (bool, error) {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false, err
	}
	if strings.EqualFold(host, "localhost") {
		return true, nil
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback(), nil
}

// dashboardProjects are the projects --projects names (the flag's values
// and the arguments after it), each a directory holding a config.json.
// A value that names no file and holds a glob pattern (quoted, so that no
// shell expanded it: a Kubernetes manifest, a systemd unit) is expanded
// here, to the matching directories that hold a config.json.
func dashboardProjects(given []string) ([]dashboard.Project, error) {
	var dirs []string
	for _, d := range given {
		if _, err := os.Lstat(d); err == nil || !strings.ContainsAny(d, "*?[") {
			dirs = append(dirs, d)
			continue
		}
		matches, err := filepath.Glob(d)
		if err != nil {
			return nil, usageError(fmt.Errorf("dashboard: --projects %s: %v", safetext.Text(d), err))
		}
		n := 0
		for _, m := range matches {
			if fi, err := os.Lstat(filepath.Join(m, configName)); err == nil && fi.Mode().IsRegular() {
				dirs = append(dirs, m)
				n++
			}
		}
		if n == 0 {
			return nil, usageError(fmt.Errorf("dashboard: --projects %s: the pattern matches no directory holding a %s (%d matches)", safetext.Text(d), configName, len(matches)))
		}
	}
	for _, d := range dirs {
		p := filepath.Join(d, configName)
		fi, err := os.Lstat(p)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			return nil, usageError(fmt.Errorf("dashboard: --projects %s: no %s there (run `ooda init` in it, or leave it out)", safetext.Text(d), configName))
		case err != nil:
			return nil, usageError(fmt.Errorf("dashboard: --projects %s: %v", safetext.Text(d), safetext.Error(err)))
		case !fi.Mode().IsRegular():
			return nil, usageError(fmt.Errorf("dashboard: --projects %s: %s is not a regular file", safetext.Text(d), safetext.Text(p)))
		}
	}
	named, err := metrics.Projects(dirs)
	if err != nil {
		return nil, usageError(err)
	}
	out := make([]dashboard.Project, len(named))
	for i, p := range named {
		out[i] = dashboard.Project{Name: p.Name, Dir: p.Dir}
	}
	return out, nil
}

func runDashboard(g *globals, cmd *cobra.Command, o dashboardOptions, args []string) error {
	many := cmd.Flags().Changed("projects")
	switch {
	case len(args) > 0 && !many:
		return usageError(fmt.Errorf("%s takes no arguments, got %q (several projects go after --projects)", cmd.CommandPath(), strings.Join(args, " ")))
	case g.json:
		return usageError(errors.New("dashboard: it serves until stopped and prints no JSON document; leave out --json (the JSON is at /api/status)"))
	case many && (g.project != "" || g.config != ""):
		return usageError(errors.New("dashboard: --projects names the projects; leave out --project and --config"))
	}
	local, err := loopbackAddr(o.listen)
	if err != nil {
		return usageError(fmt.Errorf("dashboard: --listen %s: give host:port, e.g. 127.0.0.1:8765 (%v)", safetext.Text(o.listen), err))
	}
	if !local && !o.allowRemote {
		return usageError(fmt.Errorf("dashboard: --listen %s is not a loopback address (127.0.0.0/8, ::1, localhost): other machines could read the dashboard, which has no authentication; give --allow-remote to serve it there anyway", safetext.Text(o.listen)))
	}
	clk, err := g.clock()
	if err != nil {
		return err
	}

	opts := dashboard.Options{Now: clk.Now, Many: many}
	what := ""
	if many {
		if opts.Projects, err = dashboardProjects(append(append([]string{}, o.projects...), args...)); err != nil {
			return err
		}
		what = fmt.Sprintf("%d projects", len(opts.Projects))
	} else {
		// Loaded now so that an invalid configuration is the usual
		// error (exit 2) rather than a page that says so.
		cfg, err := g.loadConfig()
		if err != nil {
			return err
		}
		registerSecrets(cfg)
		root, err := g.root()
		if err != nil {
			return err
		}
		cp, err := g.configPath()
		if err != nil {
			return err
		}
		opts.Projects = []dashboard.Project{{Dir: root, ConfigPath: cp}}
		what = root
	}
	h, err := dashboard.New(opts)
	if err != nil {
		return err
	}

	ln, err := net.Listen("tcp", o.listen)
	if err != nil {
		return fmt.Errorf("dashboard: %v", err)
	}
	url := dashboardURL(o.listen, ln.Addr())
	if !local {
		fmt.Fprintf(g.stderr, "[WARN] the dashboard listens on %s, beyond this machine, without authentication (--allow-remote)\n", safetext.Text(o.listen))
	}
	fmt.Fprintf(g.stdout, "Serving the dashboard of %s at %s (Ctrl-C stops it)\n", safetext.Text(what), url)
	if o.open {
		openBrowser(g, url)
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	srv := &http.Server{
		Handler:           h,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       30 * time.Second,
		IdleTimeout:       2 * time.Minute,
		MaxHeaderBytes:    64 << 10,
	}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	select {
	case err := <-done:
		return fmt.Errorf("dashboard: %v", err)
	case <-ctx.Done():
	}
	// A request being answered gets a moment to finish; a stuck one does
	// not keep the command from ending.
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		srv.Close()
	}
	fmt.Fprintln(g.stdout, "Dashboard stopped.")
	return nil
}

// dashboardURL is the address to open the page at: the host --listen
// names with the port actually bound (--listen HOST:0 takes a free one);
// a wildcard host (all interfaces) is opened on the loopback one.
func dashboardURL(listen string, bound net.Addr) string {
	host, _, _ := net.SplitHostPort(listen)
	_, port, err := net.SplitHostPort(bound.String())
	if err != nil {
		return "http://" + bound.String() + "/"
	}
	if ip := net.ParseIP(host); host == "" || (ip != nil && ip.IsUnspecified()) {
		host = "127.0.0.1"
	}
	return "http://" + net.JoinHostPort(host, port) + "/"
}

// openBrowser opens url with the desktop's opener when there is one; the
// dashboard serves whether or not it could.
func openBrowser(g *globals, url string) {
	name := "xdg-open"
	if runtime.GOOS == "darwin" {
		name = "open"
	}
	path, err := proc.LookPath(name)
	if err != nil {
		fmt.Fprintf(g.stderr, "[WARN] --open: no %s here; open %s yourself\n", name, url)
		return
	}
	// Through proc like every process ooda starts: contained, timed, and
	// without the credentials ooda knows (an opener needs the desktop's
	// variables, not tokens).
	go func() {
		res := proc.Exec{}.Run(context.Background(), proc.Spec{Argv: []string{path, url}, Env: secret.ChildEnv(os.Environ(), nil, false), Timeout: time.Minute})
		if res.StartErr != nil {
			fmt.Fprintf(g.stderr, "[WARN] --open: %s: %v; open %s yourself\n", name, safetext.Error(res.StartErr), url)
		}
	}()
}
