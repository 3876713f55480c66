// Command load puts a small load on a URL and prints what a rubric's
// targets check, as one JSON object:
//
//	{"p95_ms": 503.1, "error_rate": 0, "requests": 20}
//
// p95_ms is the 95th-percentile latency (nearest rank) in milliseconds,
// error_rate the share of requests that failed or answered a status other
// than 2xx. It exits non-zero only when it cannot measure at all.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"math"
	"net/http"
	"os"
	"sort"
	"sync"
	"time"
)

func main() {
	url := flag.String("url", "", "the URL to request (GET)")
	n := flag.Int("n", 20, "number of requests")
	c := flag.Int("c", 10, "requests in flight at once")
	timeout := flag.Duration("timeout", 5*time.Second, "time limit of one request; a request past it counts as an error")
	flag.Parse()
	if *url == "" || *n < 1 || *c < 1 {
		fmt.Fprintln(os.Stderr, "usage: load -url URL [-n 20] [-c 10] [-timeout 5s]")
		os.Exit(2)
	}

	client := &http.Client{Timeout: *timeout}
	latencies := make([]time.Duration, *n)
	failed := make([]bool, *n)
	next := make(chan int)
	var wg sync.WaitGroup
	for w := 0; w < *c; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				start := time.Now()
				resp, err := client.Get(*url)
				if err == nil {
					_, _ = io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
				}
				latencies[i] = time.Since(start)
				failed[i] = err != nil || resp.StatusCode < 200 || resp.StatusCode > 299
			}
		}()
	}
	for i := 0; i < *n; i++ {
		next <- i
	}
	close(next)
	wg.Wait()

	errors := 0
	for _, f := range failed {
		if f {
			errors++
		}
	}
	sort.Slice(latencies, func(i, j int) bool { return latencies[i] < latencies[j] })
	p95 := latencies[int(math.Ceil(0.95*float64(*n)))-1]
	out, _ := json.Marshal(struct {
		P95MS     float64 `json:"p95_ms"`
		ErrorRate float64 `json:"error_rate"`
		Requests  int     `json:"requests"`
	}{math.Round(float64(p95.Microseconds())/100) / 10, float64(errors) / float64(*n), *n})
	fmt.Println(string(out))
}
