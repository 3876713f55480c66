// Command ooda runs an OODA loop (Observe, Orient, Decide, Act, Reflect)
// over a software project. See README.md and docs/.
package main

import (
	"fmt"
	"os"
	"runtime/debug"

	"github.com/ooda-loop/ooda/internal/cli"
	"github.com/ooda-loop/ooda/internal/perfstat"
	// Maps the executable and the first of the heap in a few system calls
	// before the other packages' initialisation touches them page by page
	// (its doc comment says why, and why it must be imported here).
	_ "github.com/ooda-loop/ooda/internal/prefault"
)

func main() {
	tuneGC()
	// OODA_CPUPROFILE, OODA_TRACE and OODA_STATS (docs/benchmarks.md)
	// cover the whole process, so they start before anything else and end
	// after the command returned.
	stop := perfstat.Start(func(msg string) { fmt.Fprintf(os.Stderr, "[WARN] %s\n", msg) })
	perfstat.Mark("main")
	code := cli.Main(os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	perfstat.Mark("command done")
	stop()
	os.Exit(code)
}

// softMemoryLimit is the heap size past which the collector runs more
// often than GOGC says (debug.SetMemoryLimit).
const softMemoryLimit = 512 << 20

// tuneGC sets the garbage collector for ooda's processes. A cycle is a
// short process whose live heap is a few MiB: collecting at every 100 %
// of growth is most of its collector's work for nothing. 400 % keeps a
// long `ooda run` bounded all the same (docs/benchmarks.md); GOGC, when
// set, decides instead. But 400 % of a large heap is a lot of memory: a
// skill's state file of 15 MiB decodes to hundreds of MiB, and the cycle
// peaked near 1 GiB; past softMemoryLimit the collector runs as often as
// it must to stay near it (a soft limit: never an error). GOMEMLIMIT,
// when set, decides instead.
func tuneGC() {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(400)
	}
	if os.Getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(softMemoryLimit)
	}
}
