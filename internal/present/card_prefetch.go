package present

import (
	"path/filepath"

	"github.com/ooda-loop/ooda/internal/config"
	"github.com/ooda-loop/ooda/internal/state"
)

// LensPrefetch is every configured domain's lens changelog, read in the
// background while the cycle records itself (PrefetchLensChangelogs).
// With many domains these reads are most of the card's cost; once Act is
// over, only the cycle's own Step 6 writes a lens changelog, and those
// files it names (Recorded.Written) are read again by the card, so the
// card is the one built from the files as they end.
type LensPrefetch struct {
	done     chan struct{}
	domains  []string
	logs     []lensLog
	panicked any
}

// PrefetchLensChangelogs starts reading the lens changelog of every
// domain of cfg through st, at once and in the background. Start it when
// nothing but the cycle's own recording will write one before the card
// is built: after Act.
func PrefetchLensChangelogs(cfg *config.Config, st *state.Store) *LensPrefetch {
	p := &LensPrefetch{done: make(chan struct{}), domains: make([]string, len(cfg.Domains)), logs: make([]lensLog, len(cfg.Domains))}
	for i, d := range cfg.Domains {
		p.domains[i] = d.Name
	}
	go func() {
		defer close(p.done)
		defer func() { p.panicked = recover() }()
		defer st.HoldRoot()()
		st.ReadEach(len(p.domains), func(i int) {
			p.logs[i].cl, p.logs[i].err = st.ReadLensChangelog(p.domains[i])
		})
	}()
	return p
}

// WaitLensPrefetch waits for p's reads to end (a cycle whose card is not
// built must not leave them running).
func WaitLensPrefetch(p *LensPrefetch) { <-p.done }

// wait waits for the reads to end.
func (p *LensPrefetch) wait() {
	<-p.done
	if p.panicked != nil {
		panic(p.panicked)
	}
}

// prefetched returns the lens changelogs of cfg's domains read ahead by p
// (rec.Lens), reading again through st those rec.Written names and any
// the prefetch did not cover (the configuration is another); ok is false
// when there is no prefetch.
func prefetched(cfg *config.Config, st *state.Store, rec Recorded) (out []lensLog, ok bool) {
	p := rec.Lens
	if p == nil {
		return nil, false
	}
	p.wait()
	written := make(map[string]bool, len(rec.Written))
	for _, w := range rec.Written {
		written[filepath.ToSlash(filepath.Clean(w))] = true
	}
	out = make([]lensLog, len(cfg.Domains))
	var again []int
	for i, d := range cfg.Domains {
		if i < len(p.domains) && p.domains[i] == d.Name && !written["agent/state/"+d.Name+"/lens_changelog.json"] {
			out[i] = p.logs[i]
			continue
		}
		again = append(again, i)
	}
	st.ReadEach(len(again), func(k int) {
		i := again[k]
		out[i].cl, out[i].err = st.ReadLensChangelog(cfg.Domains[i].Name)
	})
	return out, true
}
