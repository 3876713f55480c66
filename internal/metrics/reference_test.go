package metrics

import (
	"fmt"
	"io"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/common/expfmt"
)

// The reference: the exposition as the Prometheus client library writes
// it, through a registry, as this package wrote it before it wrote the
// text itself. The oracle tests hold the package's own writer to it,
// byte for byte.

// refCollector yields a reading's samples as the client library's const
// metrics, as Reading did when it was a prometheus.Collector.
type refCollector struct {
	r     *Reading
	descs map[*metric]*prometheus.Desc
}

// refDescs makes the descriptor of every catalog family and of every
// other family the readings' samples are of.
func refDescs(readings []*Reading) map[*metric]*prometheus.Desc {
	descs := map[*metric]*prometheus.Desc{}
	add := func(m *metric) {
		if descs[m] == nil {
			descs[m] = prometheus.NewDesc(m.name, m.help, m.labels, nil)
		}
	}
	for _, m := range catalog {
		add(m)
	}
	for _, r := range readings {
		for _, s := range r.samples {
			add(s.m)
		}
	}
	return descs
}

func (c refCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range c.descs {
		ch <- d
	}
}

func (c refCollector) Collect(ch chan<- prometheus.Metric) {
	for _, s := range c.r.samples {
		var m prometheus.Metric
		var err error
		d := c.descs[s.m]
		if s.hist != nil {
			m, err = prometheus.NewConstHistogram(d, s.hist.count, s.hist.sum, s.hist.buckets, s.labels...)
		} else {
			m, err = prometheus.NewConstMetric(d, refType(s.m.typ), s.v, s.labels...)
		}
		if err == nil {
			ch <- m
		}
	}
}

func refType(t valueType) prometheus.ValueType {
	switch t {
	case gauge:
		return prometheus.GaugeValue
	case counter:
		return prometheus.CounterValue
	}
	return prometheus.UntypedValue
}

// refEncode writes what g gathers, each family with its HELP and TYPE
// lines; what could be gathered is written even when something could not
// be, and the error returned.
func refEncode(w io.Writer, g prometheus.Gatherer) error {
	mfs, gerr := g.Gather()
	for _, mf := range mfs {
		if _, err := expfmt.MetricFamilyToText(w, mf); err != nil {
			return err
		}
	}
	return gerr
}

// referenceExpose is expose by the client library: one registry, each
// reading registered under its project label (none when projects is nil).
func referenceExpose(w io.Writer, readings []*Reading, projects []string) error {
	descs := refDescs(readings)
	reg := prometheus.NewRegistry()
	for i, r := range readings {
		var to prometheus.Registerer = reg
		if projects != nil {
			to = prometheus.WrapRegistererWith(prometheus.Labels{ProjectLabel: projects[i]}, reg)
		}
		if err := to.Register(refCollector{r: r, descs: descs}); err != nil {
			return err
		}
	}
	return refEncode(w, reg)
}

// ReferenceWrite is Write by the client library.
func ReferenceWrite(w io.Writer, r *Reading) error {
	return referenceExpose(w, []*Reading{r}, nil)
}

// refProjectCollector reads its project at every collection.
type refProjectCollector struct {
	p     Project
	now   func() time.Time
	descs map[*metric]*prometheus.Desc
}

func (c refProjectCollector) Describe(ch chan<- *prometheus.Desc) {
	refCollector{descs: c.descs}.Describe(ch)
}

func (c refProjectCollector) Collect(ch chan<- prometheus.Metric) {
	refCollector{r: Read(c.p, c.now()), descs: c.descs}.Collect(ch)
}

// ReferenceWriteMany is WriteMany by the client library: a registry of a
// collector for each project, wrapped with its project label.
func ReferenceWriteMany(w io.Writer, projects []Project, now time.Time) error {
	reg := prometheus.NewRegistry()
	descs := refDescs(nil)
	seen := map[string]bool{}
	for _, p := range projects {
		name := safeValue(p.Name)
		if seen[name] {
			return fmt.Errorf("metrics: two projects are named %q; give each its own name", name)
		}
		seen[name] = true
		wrapped := prometheus.WrapRegistererWith(prometheus.Labels{ProjectLabel: name}, reg)
		if err := wrapped.Register(refProjectCollector{p: p, now: func() time.Time { return now }, descs: descs}); err != nil {
			return fmt.Errorf("metrics: project %q: %w", name, err)
		}
	}
	return refEncode(w, reg)
}
