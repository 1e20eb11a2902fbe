package ui

import (
	"sync"
	"time"

	"fyne.io/fyne/v2"
)

// job runs a screen's update off the UI thread. Each run supersedes the
// ones before it: a run still waiting out its delay is dropped, a run
// already working finishes but its result is not applied. Results are
// applied on the UI thread through fyne.Do.
type job struct {
	delay time.Duration
	// busy counts runs not yet finished; screens of one window share it so
	// that a run that starts another keeps the count above zero.
	busy *sync.WaitGroup
	// do runs a function on the UI thread: fyne.Do, or a test's queue.
	do func(func())

	mu    sync.Mutex
	seq   uint64
	timer *time.Timer
}

func newJob(delay time.Duration, busy *sync.WaitGroup, do func(func())) job {
	if busy == nil {
		busy = new(sync.WaitGroup)
	}
	if do == nil {
		do = fyne.Do
	}
	return job{delay: delay, busy: busy, do: do}
}

// run schedules work after the job's delay. work runs on its own goroutine
// and returns the function that applies its result to the widgets (nil =
// nothing to apply).
func (j *job) run(work func() (apply func())) {
	j.runAfter(j.delay, work)
}

// now schedules work without delay (a choice from a list, a button).
func (j *job) now(work func() (apply func())) {
	j.runAfter(0, work)
}

func (j *job) runAfter(delay time.Duration, work func() func()) {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.seq++
	seq := j.seq
	if j.timer != nil && j.timer.Stop() {
		j.busy.Done() // the superseded run will never start
	}
	j.timer = nil
	j.busy.Add(1)
	start := func() {
		var apply func()
		if j.current(seq) {
			apply = work()
		}
		j.do(func() {
			defer j.busy.Done()
			if apply != nil && j.current(seq) {
				apply()
			}
		})
	}
	if delay <= 0 {
		go start()
		return
	}
	j.timer = time.AfterFunc(delay, start)
}

// cancel drops every scheduled run: none of them will apply its result.
func (j *job) cancel() {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.seq++
	if j.timer != nil && j.timer.Stop() {
		j.busy.Done()
	}
	j.timer = nil
}

// current reports whether seq is the newest run.
func (j *job) current(seq uint64) bool {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.seq == seq
}

// wait blocks until every scheduled run has finished or been dropped. Tests
// and screenshots use it; it must not be called on the UI thread of a real
// driver.
func (j *job) wait() { j.busy.Wait() }

// uiQueue stands in for fyne.Do in tests: background runs send their
// results here and the test's goroutine applies them while it waits, so
// that, as with a real driver, only one goroutine touches the widgets.
// (Fyne's test driver runs fyne.Do in place, on the calling goroutine.)
type uiQueue chan func()

// do queues f for the goroutine that drains the queue.
func (q uiQueue) do(f func()) { q <- f }

// drain applies queued functions until busy reaches zero.
func (q uiQueue) drain(busy *sync.WaitGroup) {
	done := make(chan struct{})
	go func() {
		busy.Wait()
		close(done)
	}()
	for {
		select {
		case f := <-q:
			f()
		case <-done:
			return
		}
	}
}

// refresh is every screen's update step: read the inputs (an input error
// cancels the job in flight, so a result for the old input cannot clear
// the error, and is shown at once), then compute off the UI thread — after
// the debounce delay when the user typed, at once when they chose.
func refresh[T any](j *job, errs errorLabel, typed bool, read func() (T, error), compute func(T) func()) {
	in, err := read()
	if err != nil {
		j.cancel()
		errs.set(err)
		return
	}
	work := func() func() { return compute(in) }
	if typed {
		j.run(work)
	} else {
		j.now(work)
	}
}
