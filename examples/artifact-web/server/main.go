// Command server is the example web service whose quality a rubric
// grades: GET /quote answers a price as JSON.
//
// Two settings in service.json stand for the code a build skill changes:
// upstream_delay_ms is the work one request waits on (a slow upstream
// call), and fail_every makes every n-th request fail with status 500 (0:
// none). They are read once, at start.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"log"
	"net"
	"net/http"
	"os"
	"sync/atomic"
	"time"
)

// settings is service.json.
type settings struct {
	UpstreamDelayMS int `json:"upstream_delay_ms"`
	FailEvery       int `json:"fail_every"`
}

func main() {
	config := flag.String("config", "service.json", "the service's settings")
	addr := flag.String("addr", "127.0.0.1:0", "address to listen on (port 0: any free port)")
	addrFile := flag.String("addr-file", "", "write the address listened on to this file once listening")
	flag.Parse()

	b, err := os.ReadFile(*config)
	if err != nil {
		log.Fatal(err)
	}
	var s settings
	if err := json.Unmarshal(b, &s); err != nil {
		log.Fatalf("%s: %v", *config, err)
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		log.Fatal(err)
	}
	var served atomic.Int64
	http.HandleFunc("/quote", func(w http.ResponseWriter, r *http.Request) {
		n := served.Add(1)
		time.Sleep(time.Duration(s.UpstreamDelayMS) * time.Millisecond)
		// Counted, not random: the same load gives the same error rate.
		if s.FailEvery > 0 && n%int64(s.FailEvery) == 0 {
			http.Error(w, "upstream unavailable", http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, "{\"item\": %q, \"price_cents\": 1250}\n", r.URL.Query().Get("item"))
	})
	if *addrFile != "" {
		// Written only now that connections are accepted, so that a
		// client waiting for the file never finds nobody listening.
		if err := os.WriteFile(*addrFile, []byte(ln.Addr().String()), 0o644); err != nil {
			log.Fatal(err)
		}
	}
	log.Fatal(http.Serve(ln, nil))
}
