package dashboard

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"html/template"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/ooda-loop/ooda/internal/config"
)

// liveScriptPath is where the live-update script is served.
const liveScriptPath = "/live.js"

// versionDepth is how deep under agent/state the version looks: the state
// files and the directories of one level below (a domain's lens, a
// session's files). evolve/runs, which gains files every cycle, is left
// out: a cycle changes cycle_log.jsonl and state.json anyway.
const versionDepth = 2

// version is a fingerprint of the project's state files: the name, size
// and modification time of the configuration, the HALT file, each
// configured domain's state file and every file under agent/state (two
// levels). It opens no file but the configuration (for the HALT file's
// and the domains' paths), so it is cheap enough to be asked every two
// seconds, and a named pipe among the files is only looked at, never
// read. Two readings are equal when nothing the page shows could have
// changed, up to a write within the file system's clock resolution that
// keeps the size.
func (p Project) version() string {
	h := sha256.New()
	add := func(name string, fi fs.FileInfo, err error) {
		if err != nil {
			fmt.Fprintf(h, "%s\x00-\n", name)
			return
		}
		fmt.Fprintf(h, "%s\x00%d\x00%d\x00%d\n", name, fi.Size(), fi.ModTime().UnixNano(), fi.Mode())
	}
	cp := p.configPath()
	fi, err := os.Lstat(cp)
	add(cp, fi, err)
	if cfg, _, err := p.load(); err == nil {
		for _, rel := range append([]string{cfg.Safety.HaltFile}, domainFiles(cfg.Domains)...) {
			if rel == "" {
				continue
			}
			path := rel
			if !filepath.IsAbs(path) {
				path = filepath.Join(p.Dir, rel)
			}
			fi, err := os.Lstat(path)
			add(path, fi, err)
		}
	} else {
		fmt.Fprintf(h, "config error\x00%s\n", err)
	}
	walkState(filepath.Join(p.Dir, "agent", "state"), 0, add)
	return hex.EncodeToString(h.Sum(nil)[:12])
}

// maxVersionEntries bounds the entries of one directory the version
// reads: a skill may fill its domain's directory with any number of
// files, and the page asks for the version every two seconds. Past the
// bound the directory's own size and time, which its parent's listing
// adds, stand for the rest.
const maxVersionEntries = 4096

// walkState adds the entries of dir (at most maxVersionEntries, in the
// directory's order, then sorted), and of its directories down to
// versionDepth, without following a symlink.
func walkState(dir string, depth int, add func(string, fs.FileInfo, error)) {
	d, err := os.Open(dir)
	if err != nil {
		add(dir, nil, err)
		return
	}
	entries, err := d.ReadDir(maxVersionEntries)
	d.Close()
	if err != nil && err != io.EOF {
		add(dir, nil, err)
		return
	}
	slices.SortFunc(entries, func(a, b fs.DirEntry) int { return strings.Compare(a.Name(), b.Name()) })
	for _, e := range entries {
		path := filepath.Join(dir, e.Name())
		fi, err := e.Info()
		add(path, fi, err)
		if e.IsDir() && depth+1 < versionDepth && !(e.Name() == "runs" && filepath.Base(dir) == "evolve") {
			walkState(path, depth+1, add)
		}
	}
}

// apiVersion answers {"version": "..."}: the fingerprint the live script
// compares with the page's.
func (s *server) apiVersion(w http.ResponseWriter, p Project) {
	writeJSON(w, http.StatusOK, struct {
		Version string `json:"version"`
	}{p.version()})
}

// listVersion is the fingerprint of every project of the list.
func (s *server) listVersion() string {
	h := sha256.New()
	for _, p := range s.projects {
		fmt.Fprintf(h, "%s\x00%s\n", p.Name, p.version())
	}
	return hex.EncodeToString(h.Sum(nil)[:12])
}

func (s *server) liveScript(w http.ResponseWriter) {
	b, err := assets.ReadFile("assets/live.js")
	if err != nil {
		http.Error(w, "500 "+err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/javascript; charset=utf-8")
	w.Write(b)
}

// WriteHTML writes the page of the project at dir (its configuration at
// configPath, or dir/config.json when empty), read at now, as one
// self-contained file: the style sheet inside it, no script, no link to
// any route, so that it shows the same in a browser opened from a file or
// an attachment. It returns the files that could not be read, relative to
// the project, as the page names them; a configuration that cannot be
// loaded is an error, and nothing is written.
func WriteHTML(w io.Writer, dir, configPath string, now time.Time) (corrupt []string, err error) {
	h, err := New(Options{Projects: []Project{{Dir: dir, ConfigPath: configPath}}, Now: func() time.Time { return now }})
	if err != nil {
		return nil, err
	}
	s := h.(*server)
	d, ok := s.pageFor(s.projects[0], "")
	if !ok {
		return nil, fmt.Errorf("%s", d.Problem)
	}
	css, err := assets.ReadFile("assets/dashboard.css")
	if err != nil {
		return nil, err
	}
	// The style sheet is the binary's own, not a state file's text.
	d.InlineCSS = template.CSS(css)
	d.Standalone = true
	var b bytes.Buffer
	if err := s.page.Execute(&b, d); err != nil {
		return nil, err
	}
	_, err = w.Write(b.Bytes())
	return slices.Clone(d.Corrupt), err
}

// domainFiles are the configured domains' state files.
func domainFiles(ds []config.Domain) []string {
	var out []string
	for _, d := range ds {
		out = append(out, d.StateFile)
	}
	return out
}
