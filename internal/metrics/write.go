package metrics

import (
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/common/expfmt"
)

// ProjectLabel is the label every series carries when several projects
// are exposed together.
const ProjectLabel = "project"

// Write writes one reading in the Prometheus text exposition format, with
// no project label: the text `ooda status --metrics` prints.
func Write(w io.Writer, r *Reading) error {
	reg := prometheus.NewRegistry()
	if err := reg.Register(r); err != nil {
		return err
	}
	return Encode(w, reg)
}

// Registry is a registry of a Collector for each project, every series
// labelled project="<Name>": the many-projects /metrics. The names must
// be distinct (Projects makes them so).
func Registry(projects []Project, now func() time.Time) (*prometheus.Registry, error) {
	reg := prometheus.NewRegistry()
	seen := map[string]bool{}
	for _, p := range projects {
		name := safeValue(p.Name)
		if seen[name] {
			return nil, fmt.Errorf("metrics: two projects are named %q; give each its own name", name)
		}
		seen[name] = true
		wrapped := prometheus.WrapRegistererWith(prometheus.Labels{ProjectLabel: name}, reg)
		if err := wrapped.Register(NewCollector(p, now)); err != nil {
			return nil, fmt.Errorf("metrics: project %q: %w", name, err)
		}
	}
	return reg, nil
}

// WriteMany reads every project at now and writes them in the text
// exposition format, every series labelled project="<Name>".
func WriteMany(w io.Writer, projects []Project, now time.Time) error {
	reg, err := Registry(projects, func() time.Time { return now })
	if err != nil {
		return err
	}
	return Encode(w, reg)
}

// Encode writes what g gathers in the text exposition format, each family
// with its HELP and TYPE lines. What could be gathered is written even
// when something could not be, and the error returned.
func Encode(w io.Writer, g prometheus.Gatherer) error {
	mfs, gerr := g.Gather()
	for _, mf := range mfs {
		if _, err := expfmt.MetricFamilyToText(w, mf); err != nil {
			return err
		}
	}
	return gerr
}

// Projects names the projects at dirs by their directories' base names,
// for the project label. Two that share a base name are told apart by as
// many parent directories as it takes ("a/api", "b/api"); a directory
// given twice is listed once.
func Projects(dirs []string) ([]Project, error) {
	var abs []string
	seen := map[string]bool{}
	for _, d := range dirs {
		a, err := filepath.Abs(d)
		if err != nil {
			return nil, err
		}
		if !seen[a] {
			seen[a] = true
			abs = append(abs, a)
		}
	}
	if len(abs) == 0 {
		return nil, errors.New("metrics: no project directory given")
	}
	parts := make([][]string, len(abs))
	depth := make([]int, len(abs))
	for i, a := range abs {
		parts[i] = strings.Split(filepath.ToSlash(a), "/")
		depth[i] = 1
	}
	name := func(i int) string {
		p := parts[i]
		if depth[i] > len(p)-1 {
			// As far up as it goes: the whole path, unique.
			return filepath.ToSlash(abs[i])
		}
		return strings.Join(p[len(p)-depth[i]:], "/")
	}
	for {
		groups := map[string][]int{}
		for i := range abs {
			groups[name(i)] = append(groups[name(i)], i)
		}
		clash := false
		for _, g := range groups {
			if len(g) > 1 {
				clash = true
				for _, i := range g {
					depth[i]++
				}
			}
		}
		if !clash {
			break
		}
	}
	out := make([]Project, len(abs))
	for i, a := range abs {
		out[i] = Project{Name: name(i), Dir: a}
	}
	return out, nil
}
