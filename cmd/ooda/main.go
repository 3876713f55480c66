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
	// A cycle is a short process whose live heap is a few MiB: collecting
	// at every 100 % of growth is most of its garbage collector's work
	// for nothing. 400 % keeps a long `ooda run` bounded all the same
	// (docs/benchmarks.md); GOGC, when set, decides instead.
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(400)
	}
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
