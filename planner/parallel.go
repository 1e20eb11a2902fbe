package planner

import (
	"runtime"
	"sync"
)

// parallelFor runs f(0) … f(n−1) on every core and returns when all are
// done. Each call writes only its own index's results, so the outcome
// does not depend on scheduling (Compare's machines, the
// cross-validation folds).
func parallelFor(n int, f func(i int)) {
	jobs := make(chan int)
	var wg sync.WaitGroup
	for w := 0; w < min(runtime.GOMAXPROCS(0), n); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range jobs {
				f(i)
			}
		}()
	}
	for i := 0; i < n; i++ {
		jobs <- i
	}
	close(jobs)
	wg.Wait()
}
