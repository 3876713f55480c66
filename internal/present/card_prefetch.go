package present

import (
	"path/filepath"
	"strings"

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
	done    chan struct{}
	domains []string
	// logs holds each domain's changelog as read, or nil for a domain
	// whose read gave what it gives for a missing file (the empty
	// changelog of the domain, no error): most domains have none, and a
	// thousand empty changelogs kept whole cost more than their reads.
	logs     []*lensLog
	panicked any
}

// noChangelog says whether cl is what ReadLensChangelog returns for
// domain when its file is missing: the changelog of the domain, and
// nothing else (TestNoChangelogKnowsEveryField fails when a field is
// added to state.LensChangelog but not here).
func noChangelog(cl *state.LensChangelog, domain string) bool {
	return cl.SchemaVersion == "" && cl.Domain == domain && cl.Entries == nil && cl.Extra == nil
}

// at is the changelog read ahead for the i-th domain.
func (p *LensPrefetch) at(i int) lensLog {
	if l := p.logs[i]; l != nil {
		return *l
	}
	return lensLog{cl: state.LensChangelog{Domain: p.domains[i]}}
}

// PrefetchLensChangelogs starts reading the lens changelog of every
// domain of cfg through st, at once and in the background. Start it when
// nothing but the cycle's own recording will write one before the card
// is built: after Act.
func PrefetchLensChangelogs(cfg *config.Config, st *state.Store) *LensPrefetch {
	p := &LensPrefetch{done: make(chan struct{}), domains: make([]string, len(cfg.Domains)), logs: make([]*lensLog, len(cfg.Domains))}
	for i, d := range cfg.Domains {
		p.domains[i] = d.Name
	}
	go func() {
		defer close(p.done)
		defer func() { p.panicked = recover() }()
		defer st.HoldRoot()()
		st.ReadEach(len(p.domains), func(i int) {
			cl, err := st.ReadLensChangelog(p.domains[i])
			if err != nil || !noChangelog(&cl, p.domains[i]) {
				p.logs[i] = &lensLog{cl: cl, err: err}
			}
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
// when there is no prefetch. What was read ahead is taken as it is, not
// copied: those read again are laid over it.
func prefetched(cfg *config.Config, st *state.Store, rec Recorded) (out lensLogs, ok bool) {
	p := rec.Lens
	if p == nil {
		return lensLogs{}, false
	}
	p.wait()
	// The domains whose agent/state/<domain>/lens_changelog.json is
	// named in rec.Written: what a path, cleaned, would have to be for a
	// domain's, read back from the few paths named.
	const dirPrefix, fileSuffix = "agent/state/", "/lens_changelog.json"
	var written map[string]bool
	for _, w := range rec.Written {
		w = filepath.ToSlash(filepath.Clean(w))
		if len(w) >= len(dirPrefix)+len(fileSuffix) && strings.HasPrefix(w, dirPrefix) && strings.HasSuffix(w, fileSuffix) {
			if written == nil {
				written = make(map[string]bool, len(rec.Written))
			}
			written[w[len(dirPrefix):len(w)-len(fileSuffix)]] = true
		}
	}
	n := len(cfg.Domains)
	if len(p.logs) >= n {
		out.ahead = p
	} else {
		out.base = make([]lensLog, n)
		for i := range p.logs {
			out.base[i] = p.at(i)
		}
	}
	var again []int
	for i, d := range cfg.Domains {
		if i < len(p.domains) && p.domains[i] == d.Name && !written[d.Name] {
			continue
		}
		again = append(again, i)
	}
	if len(again) == 0 {
		return out, true
	}
	logs := make([]lensLog, len(again))
	st.ReadEach(len(again), func(k int) {
		logs[k].cl, logs[k].err = st.ReadLensChangelog(cfg.Domains[again[k]].Name)
	})
	out.over = make(map[int]lensLog, len(again))
	for k, i := range again {
		out.over[i] = logs[k]
	}
	return out, true
}
