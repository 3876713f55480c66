package metrics

import (
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"
)

// ProjectLabel is the label every series carries when several projects
// are exposed together.
const ProjectLabel = "project"

// ContentType is the media type of what Write writes: the text
// exposition format, version 0.0.4. Every name in it is a legacy
// Prometheus name, so the underscore escaping the parameter announces
// (the default a Prometheus client library answers with) leaves each as
// it is.
const ContentType = "text/plain; version=0.0.4; charset=utf-8; escaping=underscores"

// Write writes one reading in the Prometheus text exposition format, with
// no project label: the text `ooda status --metrics` prints. What could
// be written is written even when part of the reading could not be (a
// series read twice), and the error returned.
func Write(w io.Writer, r *Reading) error {
	return expose(w, []*Reading{r}, nil)
}

// Collector reads its projects afresh at every Write, for a server whose
// /metrics is scraped while cycles run.
type Collector struct {
	projects []Project
	// names are the project label's values, one per project; nil for one
	// project alone, exposed without the label.
	names []string
	now   func() time.Time
}

// NewCollector returns the collector of p alone; now gives the instant a
// reading is taken at (today's cost is the spend of now's UTC day).
func NewCollector(p Project, now func() time.Time) *Collector {
	return &Collector{projects: []Project{p}, now: now}
}

// NewManyCollector returns the collector of several projects, every
// series labelled project="<Name>": the many-projects /metrics. The names
// must be distinct (Projects makes them so), or two projects' series
// could not be told apart.
func NewManyCollector(projects []Project, now func() time.Time) (*Collector, error) {
	c := &Collector{projects: slices.Clone(projects), names: make([]string, len(projects)), now: now}
	seen := map[string]bool{}
	for i, p := range projects {
		name := safeValue(p.Name)
		if seen[name] {
			return nil, fmt.Errorf("metrics: two projects are named %q; give each its own name", name)
		}
		seen[name] = true
		c.names[i] = name
	}
	return c, nil
}

// Write reads every project and writes them in the text exposition
// format, as the package's Write does.
func (c *Collector) Write(w io.Writer) error {
	now := c.now()
	if len(c.projects) == 1 {
		return expose(w, []*Reading{Read(c.projects[0], now)}, c.names)
	}
	readings := make([]*Reading, len(c.projects))
	// Each project is its own files: they are read side by side, so that
	// a scrape of many takes as long as the slowest, not their sum.
	var wg sync.WaitGroup
	for i, p := range c.projects {
		wg.Go(func() { readings[i] = Read(p, now) })
	}
	wg.Wait()
	return expose(w, readings, c.names)
}

// WriteMany reads every project at now and writes them in the text
// exposition format, every series labelled project="<Name>".
func WriteMany(w io.Writer, projects []Project, now time.Time) error {
	c, err := NewManyCollector(projects, func() time.Time { return now })
	if err != nil {
		return err
	}
	return c.Write(w)
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
