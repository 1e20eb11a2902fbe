package server

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestLoad sends 200 concurrent plan requests to a server on 127.0.0.1 and
// prints p50/p99 latency and peak heap and RSS. Every request must answer
// 200; peak RSS must stay under 2 GiB (a bound on memory, not on speed).
// It runs when HEADROOM_LOAD_TEST=1 (scripts/load-test.sh); HEADROOM_LOAD_N
// changes the count.
func TestLoad(t *testing.T) {
	if os.Getenv("HEADROOM_LOAD_TEST") != "1" {
		t.Skip("set HEADROOM_LOAD_TEST=1 (scripts/load-test.sh)")
	}
	n := 200
	if v, err := strconv.Atoi(os.Getenv("HEADROOM_LOAD_N")); err == nil && v > 0 && v <= 2000 {
		n = v
	}
	r := start(t, Config{Timeout: 5 * time.Minute, MaxQueued: n})
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: n}, Timeout: 10 * time.Minute}
	bodies := []string{
		`{"model":"meta-llama/Llama-3.1-8B-Instruct","hardware":"nvidia-rtx-4090","workload":"prompt=1024,gen=256,users=8","slo":"ttft=1s"}`,
		`{"model":"meta-llama/Llama-3.3-70B-Instruct","hardware":"nvidia-h100-sxm","devices":4,"workload":"users=32"}`,
		`{"model":"Qwen/Qwen3-30B-A3B","hardware":"amd-ryzen-ai-max-395","workload":"rate=2"}`,
	}
	var peakHeap atomic.Uint64
	stop := make(chan struct{})
	var sampler sync.WaitGroup
	sampler.Add(1)
	go func() {
		defer sampler.Done()
		var ms runtime.MemStats
		for {
			runtime.ReadMemStats(&ms)
			if ms.HeapAlloc > peakHeap.Load() {
				peakHeap.Store(ms.HeapAlloc)
			}
			select {
			case <-stop:
				return
			case <-time.After(20 * time.Millisecond):
			}
		}
	}()
	lat := make([]time.Duration, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	begin := make(chan struct{})
	t0 := time.Now()
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-begin
			start := time.Now()
			resp, err := client.Post(r.url+"/api/plan", "application/json", strings.NewReader(bodies[i%len(bodies)]))
			if err == nil {
				_, err = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if err == nil && resp.StatusCode != 200 {
					err = fmt.Errorf("status %d", resp.StatusCode)
				}
			}
			lat[i], errs[i] = time.Since(start), err
		}()
	}
	close(begin)
	wg.Wait()
	wall := time.Since(t0)
	close(stop)
	sampler.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("request %d: %v", i, err)
		}
	}
	slices.Sort(lat)
	rss := peakRSS()
	t.Logf("%d concurrent plan requests in %s on %d CPUs (%d computed at once): p50 %s, p99 %s, max %s; peak heap %.1f MiB, peak RSS %.1f MiB",
		n, wall.Round(time.Millisecond), runtime.NumCPU(), r.cfg.MaxPlans, lat[n/2].Round(time.Millisecond), lat[n*99/100].Round(time.Millisecond),
		lat[n-1].Round(time.Millisecond), float64(peakHeap.Load())/(1<<20), float64(rss)/(1<<20))
	if rss > 2<<30 {
		t.Errorf("peak RSS %d MiB, want under 2048 MiB", rss>>20)
	}
}

// peakRSS is the process's peak resident set (VmHWM) in bytes, 0 when
// /proc is not there.
func peakRSS() uint64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, _ := strconv.ParseUint(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return kb << 10
		}
	}
	return 0
}
