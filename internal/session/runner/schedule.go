package runner

import (
	"fmt"
	"strings"
	"time"

	"github.com/robfig/cron/v3"
)

// Schedule says when a session's cycles are due. A cycle never starts
// before the previous one ended (the loop is sequential) nor before the
// engine's own next instant (safety.min_cycle_interval_minutes).
type Schedule interface {
	// First is the first tick of a session started at now.
	First(now time.Time) time.Time
	// Next is the tick after the one due at last.
	Next(last time.Time) time.Time
	// Interval is the nominal time between two ticks: it bounds the
	// jitter.
	Interval() time.Duration
	// String describes the schedule for the session's first line.
	String() string
}

// Every runs a cycle at once, then every d.
type Every time.Duration

// First is now: a session starts with a cycle.
func (e Every) First(now time.Time) time.Time { return now }

// Next is last + d.
func (e Every) Next(last time.Time) time.Time { return last.Add(time.Duration(e)) }

// Interval is d.
func (e Every) Interval() time.Duration { return time.Duration(e) }

func (e Every) String() string { return "every " + time.Duration(e).String() }

// Cron runs a cycle at the instants a five-field cron expression names.
type Cron struct {
	expr  string
	sched cron.Schedule
}

// cronParser reads the standard five fields (minute, hour, day of month,
// month, day of week), with an optional CRON_TZ= prefix and the @hourly
// family of descriptors.
var cronParser = cron.NewParser(cron.Minute | cron.Hour | cron.Dom | cron.Month | cron.Dow | cron.Descriptor)

// ParseCron reads a cron expression. Its instants are those of the local
// time zone unless it starts with CRON_TZ=<zone>. "@every" is refused:
// that is --every.
func ParseCron(expr string) (*Cron, error) {
	e := strings.TrimSpace(expr)
	if strings.HasPrefix(e, "@every") {
		return nil, fmt.Errorf("%q: use --every DURATION for a fixed interval", expr)
	}
	s, err := cronParser.Parse(e)
	if err != nil {
		return nil, fmt.Errorf("%q is not a five-field cron expression (minute hour day-of-month month day-of-week, e.g. \"*/30 * * * *\"): %v", expr, err)
	}
	if s.Next(time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)).IsZero() {
		return nil, fmt.Errorf("%q never matches a date", expr)
	}
	return &Cron{expr: e, sched: s}, nil
}

// First is the first instant after now the expression names.
func (c *Cron) First(now time.Time) time.Time { return c.next(now) }

// Next is the first instant after last the expression names.
func (c *Cron) Next(last time.Time) time.Time { return c.next(last) }

func (c *Cron) next(t time.Time) time.Time {
	n := c.sched.Next(t.In(time.Local))
	if n.IsZero() {
		// An expression that matches no later date (February 30th
		// never comes): a year later, so the loop waits rather than
		// spins; the limit or a signal ends it.
		return t.Add(365 * 24 * time.Hour).UTC()
	}
	return n.UTC()
}

// Interval is the time between the expression's next two instants after
// a fixed date, an estimate that bounds the jitter.
func (c *Cron) Interval() time.Duration {
	a := c.sched.Next(time.Date(2026, 1, 5, 0, 0, 0, 0, time.UTC))
	return c.sched.Next(a).Sub(a)
}

func (c *Cron) String() string { return "on cron " + c.expr }
