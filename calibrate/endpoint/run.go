package endpoint

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/headroom-planner/headroom/internal/redact"
	"github.com/headroom-planner/headroom/internal/textsafe"
	"github.com/headroom-planner/headroom/planner"
)

// Run calibrates the server at opt.URL: it detects the engine and model,
// sends a warm-up request, then measures prefill at opt.PromptLengths (one
// generated token, one request at a time) and decode at concurrency 1, 2,
// 4, 8, 16 (up to opt.MaxConcurrency and the server's limit), opt.Repeats
// times each, all within opt.Budget.
//
// The schedule is planned from the measured requests: before each step Run
// estimates its time from the steps before it, runs fewer repeats or drops
// the step when it would overrun the budget, and says so in Samples.Notes.
// The smallest prefill step and decode at concurrency 1 always run; if the
// budget does not allow them Run fails.
//
// Any failed request (an error status, a refused connection, a timeout, a
// stall, a broken or malformed stream) fails the run with a *StepError
// naming the step and URL; so does cancelling ctx, with an error that wraps
// ctx's. Run returns samples only when it returns no error. progress, if
// not nil, is called after each request with the requests done and planned
// (the plan shrinks as steps are dropped) and the current step's name.
func Run(ctx context.Context, opt Options, progress func(done, total int, step string)) (Samples, error) {
	opt, err := opt.withDefaults()
	if err != nil {
		return Samples{}, fmt.Errorf("calibrate endpoint: %w", err)
	}
	c, err := newClient(opt)
	if err != nil {
		return Samples{}, redact.Error(fmt.Errorf("calibrate endpoint: %w", err), secrets(opt)...)
	}
	r := &runner{opt: opt, c: c, prog: &reporter{fn: progress}, runID: rand.IntN(1_000_000), decodeExp: 0.8, prefillExp: 1}
	s, err := r.run(ctx)
	if err != nil {
		// Whatever a server echoed (a 401 body quoting the key, a stream
		// error) is redacted here once more, whichever path it took.
		return Samples{}, redact.Error(err, c.secrets...)
	}
	// What the server says about itself is outside input that the front
	// ends print and save: escape control characters, cap the length.
	for i, n := range s.Notes {
		s.Notes[i] = textsafe.Printable(redact.String(n, c.secrets...), maxMessage)
	}
	for _, f := range []*string{&s.Model, &s.EngineVersion, &s.Quant} {
		*f = textsafe.Printable(*f, maxName)
	}
	return s, nil
}

// maxName caps a model name or version a server reports, as saved.
const maxName = 256

// runner holds the state of one run.
type runner struct {
	opt   Options
	c     *client
	prog  *reporter
	info  serverInfo
	api   API
	s     Samples
	runID int

	mu  sync.Mutex
	seq int // requests sent, for unique prompts

	deadline     time.Time
	tokPerWord   float64 // measured prompt tokens per word
	ratioWords   int     // words of the request the ratio was measured on
	countsKnown  bool    // the server reports prompt token counts
	lastPrefill  *PrefillSample
	prevPrefill  *PrefillSample
	prefillExp   float64 // prefill time ∝ prompt tokens^prefillExp, refined as steps run
	lastDecode   *DecodeSample
	lastRound    time.Duration // median round time of lastDecode
	prevDecode   *DecodeSample
	prevRound    time.Duration
	decodeExp    float64 // round time ∝ concurrency^decodeExp, refined as steps run
	warmTPOT     time.Duration
	warmTTFT     time.Duration
	parallelSeen int // a sweep showed the server running at most this many at once
}

// step is one planned step of a run.
type step struct {
	name    string
	prefill bool
	tokens  planner.Tokens // prompt tokens wanted
	conc    int
	reps    int
	first   bool // the first step of its kind: always runs
}

func (st step) requests() int { return st.reps * st.conc }

// warmWords is the prompt length of the warm-up, which measures how many
// tokens a word of the prompts makes.
const warmWords = 48

func (r *runner) run(ctx context.Context) (Samples, error) {
	start := time.Now()
	r.deadline = start.Add(r.opt.Budget)
	bctx, cancel := context.WithDeadlineCause(ctx, r.deadline, errBudget)
	defer cancel()
	r.s = Samples{URL: redactURL(strings.TrimRight(r.opt.URL, "/")), Started: start, Budget: r.opt.Budget}
	r.prog.init(1, "detect")

	info, err := r.c.detect(bctx, r.opt)
	if err != nil {
		return Samples{}, r.fatal(ctx, "detect", err)
	}
	r.info, r.api = info, r.opt.API
	if r.api == APIAuto {
		r.api = nativeAPI(info.Engine)
	}
	r.s.Engine, r.s.EngineVersion, r.s.Model, r.s.Quant = info.Engine, info.Version, info.Model, info.Quant
	r.s.ContextLength, r.s.ServerParallel = planner.Tokens(info.Context), info.Parallel
	r.s.Notes = append(r.s.Notes, info.Notes...)
	if info.Engine == "" {
		r.note("engine not recognised; measured through the OpenAI API")
	}

	steps := r.plan()
	total := 1
	for _, st := range steps {
		total += st.requests()
	}
	r.prog.init(total, "warm-up")
	if err := r.warmUp(bctx); err != nil {
		return Samples{}, r.fatal(ctx, "warm-up", err)
	}
	if err := r.runSteps(ctx, bctx, steps); err != nil {
		return Samples{}, err
	}
	if len(r.s.Prefill) == 0 || len(r.s.Decode) == 0 {
		return Samples{}, fmt.Errorf("calibrate endpoint %s: the budget of %v ran out before one prefill and one decode step were measured; raise the budget", r.s.URL, r.opt.Budget)
	}
	r.s.API = r.api
	r.s.Elapsed = time.Since(start)
	if r.parallelSeen > 0 && (r.s.ServerParallel == 0 || r.parallelSeen < r.s.ServerParallel) {
		r.s.ServerParallel = r.parallelSeen
	}
	return r.s, nil
}

// fatal turns an error that ends the run into the error Run returns: the
// caller's cancellation, the budget spent before any step, or the step's
// own error.
func (r *runner) fatal(ctx context.Context, step string, err error) error {
	if ctx.Err() != nil && !errors.Is(err, context.Canceled) {
		return fmt.Errorf("calibrate endpoint %s: %s: %w", r.s.URL, step, context.Cause(ctx))
	}
	if errors.Is(err, errBudget) {
		return fmt.Errorf("calibrate endpoint %s: the budget of %v ran out during %s; raise the budget: %w", r.s.URL, r.opt.Budget, step, err)
	}
	return fmt.Errorf("calibrate endpoint: %w", err)
}

// plan lists the steps: the smallest prefill and decode at concurrency 1
// first (a run needs both), then larger prompts and higher concurrencies
// in turn, so that the costliest steps come last and are the ones a short
// budget drops. Prompt lengths are capped to the server's context.
func (r *runner) plan() []step {
	lengths := r.promptLengths()
	levels := concurrencyLevels(r.opt.MaxConcurrency)
	if p := r.info.Parallel; p > 0 && p < r.opt.MaxConcurrency {
		levels = concurrencyLevels(p)
		r.note(fmt.Sprintf("the server runs at most %d requests at once; concurrency capped there", p))
	}
	pre := func(l planner.Tokens, first bool) step {
		return step{name: fmt.Sprintf("prefill %d tokens", l), prefill: true, tokens: l, conc: 1, reps: r.opt.Repeats, first: first}
	}
	dec := func(c int, first bool) step {
		return step{name: fmt.Sprintf("decode at concurrency %d", c), tokens: r.decodePrompt(), conc: c, reps: r.opt.Repeats, first: first}
	}
	steps := []step{pre(lengths[0], true), dec(levels[0], true)}
	for i := 1; i < max(len(lengths), len(levels)); i++ {
		if i < len(lengths) {
			steps = append(steps, pre(lengths[i], false))
		}
		if i < len(levels) {
			steps = append(steps, dec(levels[i], false))
		}
	}
	return steps
}

// promptLengths caps the wanted prompt lengths so that prompt and
// generation fit the server's context with a margin (the token count of a
// prompt is only known after sending it).
func (r *runner) promptLengths() []planner.Tokens {
	ctxLen := planner.Tokens(r.info.Context)
	if ctxLen <= 0 {
		return r.opt.PromptLengths
	}
	limit := planner.Tokens(float64(ctxLen-r.opt.GenTokens) * 0.85)
	if limit < 16 {
		limit = 16
	}
	var out []planner.Tokens
	for _, l := range r.opt.PromptLengths {
		if l > limit {
			r.note(fmt.Sprintf("prompt length %d capped to %d to fit the server's context of %d tokens", l, limit, ctxLen))
			l = limit
		}
		if len(out) == 0 || out[len(out)-1] < l {
			out = append(out, l)
		}
	}
	return out
}

// decodePrompt is the prompt length of decode requests: short, so that
// decode steps measure generation.
func (r *runner) decodePrompt() planner.Tokens {
	return min(r.opt.PromptLengths[0], 64)
}

// warmUp sends the first request: it loads the model if the server loads
// lazily (so it may wait past the stall timeout for its first byte),
// measures tokens per word of the prompts and the time per output token
// used to plan decode steps. In APIAuto mode a 404 from /v1/completions
// switches to /v1/chat/completions.
func (r *runner) warmUp(ctx context.Context) error {
	g := genRequest{Step: "warm-up", MaxGen: int(min(r.opt.GenTokens, 16)), Stall: time.Until(r.deadline)}
	var res Request
	var err error
	for {
		var words int
		g.Prompt, words = r.prompt(warmWords)
		res, err = r.c.stream(ctx, r.api, r.info.Engine, r.info.Model, g)
		var he *HTTPError
		if err != nil && r.opt.API == APIAuto && r.api == APICompletions && errors.As(err, &he) && (he.Status == http.StatusNotFound || he.Status == http.StatusMethodNotAllowed) {
			r.note(fmt.Sprintf("%s answered %d; used %s", APICompletions.path(), he.Status, APIChat.path()))
			r.api = APIChat
			continue
		}
		if err != nil {
			return err
		}
		r.observeRatio(words, res.PromptTokens)
		break
	}
	r.prog.add(1, "warm-up")
	r.countsKnown = res.PromptTokens > 0
	if !r.countsKnown {
		r.tokPerWord = 1.3
		r.note("the server reported no prompt token counts; prompt lengths are estimates at 1.3 tokens per word")
	}
	r.warmTPOT, r.warmTTFT = res.TPOT, res.TTFT
	return nil
}

// words of the prompts: common English words, which every tokenizer splits
// into few tokens.
var promptWords = strings.Fields(`the model reads a long prompt and writes a short answer about rivers
mountains cities music science history weather gardens trains oceans forests
bridges markets islands deserts valleys harbors castles meadows villages`)

// prompt builds a prompt of n words. It starts with a tag unique to the run
// and request, so that no prefix cache (vLLM, SGLang, llama-server, Ollama)
// can serve it from an earlier request.
func (r *runner) prompt(n int) (string, int) {
	r.mu.Lock()
	r.seq++
	seq := r.seq
	r.mu.Unlock()
	var b strings.Builder
	fmt.Fprintf(&b, "%d %d:", r.runID, seq)
	for i := range n {
		b.WriteByte(' ')
		b.WriteString(promptWords[(i+seq)%len(promptWords)])
	}
	return b.String(), n + 2
}

// wordsFor is the number of words that make about n prompt tokens.
func (r *runner) wordsFor(n planner.Tokens) int {
	return max(1, int(math.Round(float64(n)/r.tokPerWord))-2)
}

// observeRatio keeps the tokens-per-word ratio of the longest prompt seen
// with a server token count.
func (r *runner) observeRatio(words int, tokens planner.Tokens) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if tokens > 0 && words >= r.ratioWords {
		r.tokPerWord, r.ratioWords = float64(tokens)/float64(words), words
	}
}

// runSteps runs the planned steps within the budget. The caller's
// cancellation and any request error end the run; the budget running out
// in a step drops that step and the rest.
func (r *runner) runSteps(ctx, bctx context.Context, steps []step) error {
	for i, st := range steps {
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("calibrate endpoint %s: %w", r.s.URL, context.Cause(ctx))
		}
		planned := st.requests()
		st, why := r.fit(st)
		if st.reps == 0 {
			r.prog.shrink(planned)
			r.note(st.name + ": dropped, " + why)
			continue
		}
		r.prog.shrink(planned - st.requests())
		if why != "" {
			r.note(st.name + ": " + why)
		}
		err := r.runStep(bctx, st)
		switch {
		case err == nil:
			continue
		case ctx.Err() != nil:
			return fmt.Errorf("calibrate endpoint %s: %s: %w", r.s.URL, st.name, context.Cause(ctx))
		case errors.Is(err, errBudget):
			var rest []string
			for _, later := range steps[i+1:] {
				rest = append(rest, later.name)
			}
			msg := st.name + ": stopped when the budget ran out"
			if len(rest) > 0 {
				msg += "; not run: " + strings.Join(rest, ", ")
			}
			r.note(msg)
			return nil
		default:
			return fmt.Errorf("calibrate endpoint: %w", err)
		}
	}
	return nil
}

// fit decides how many repeats of st fit in the budget left, from the
// estimate of its time; 0 repeats drops it, with the reason.
func (r *runner) fit(st step) (step, string) {
	if !st.prefill && r.parallelSeen > 0 && st.conc > r.parallelSeen {
		st.reps = 0
		return st, fmt.Sprintf("the server ran at most %d requests at once, so more would only queue", r.parallelSeen)
	}
	est, ok := r.estimate(st)
	if !ok || st.first {
		return st, ""
	}
	left := time.Until(r.deadline)
	const margin = 1.25
	want := st.reps
	for st.reps > 0 && time.Duration(float64(est)*margin)*time.Duration(st.reps) > left {
		st.reps--
	}
	switch {
	case st.reps == 0:
		return st, fmt.Sprintf("estimated %.1fs with %.1fs of the budget left", est.Seconds(), left.Seconds())
	case st.reps < want:
		return st, fmt.Sprintf("%d of %d repeats to stay within the budget", st.reps, want)
	}
	return st, ""
}

// estimate is the expected time of one repeat of st: prefill scales the
// last prefill request's time by (prompt length ratio)^prefillExp, and
// decode the last round's time by (concurrency ratio)^decodeExp, the
// exponents measured from the last two steps of each kind (attention makes
// prefill superlinear; batching makes decode sublinear).
func (r *runner) estimate(st step) (time.Duration, bool) {
	if st.prefill {
		p := r.lastPrefill
		if p == nil || p.PromptTokens <= 0 {
			return 0, false
		}
		ratio := max(1, float64(st.tokens)/float64(p.PromptTokens))
		return time.Duration(float64(median(elapsed(p.Requests))) * math.Pow(ratio, r.prefillExp)), true
	}
	if r.lastDecode == nil {
		if r.warmTPOT <= 0 {
			return 0, false
		}
		return r.warmTTFT + time.Duration(r.opt.GenTokens)*r.warmTPOT, true
	}
	ratio := float64(st.conc) / float64(r.lastDecode.Concurrency)
	return time.Duration(float64(r.lastRound) * math.Pow(ratio, r.decodeExp)), true
}

func elapsed(reqs []Request) []time.Duration {
	out := make([]time.Duration, len(reqs))
	for i, q := range reqs {
		out[i] = q.Elapsed
	}
	return out
}

// runStep runs the repeats of one step and records its sample.
func (r *runner) runStep(ctx context.Context, st step) error {
	if st.prefill {
		return r.runPrefill(ctx, st)
	}
	return r.runDecode(ctx, st)
}

// runPrefill sends st.reps requests of st.tokens prompt tokens one at a
// time, each generating one token.
func (r *runner) runPrefill(ctx context.Context, st step) error {
	var reqs []Request
	for range st.reps {
		prompt, words := r.prompt(r.wordsFor(st.tokens))
		res, err := r.c.stream(ctx, r.api, r.info.Engine, r.info.Model, genRequest{Step: st.name, Prompt: prompt, MaxGen: 1})
		if err != nil {
			return err
		}
		r.observeRatio(words, res.PromptTokens)
		reqs = append(reqs, res)
		r.prog.add(1, st.name)
	}
	p := prefillSample(st.tokens, reqs)
	r.s.Prefill = append(r.s.Prefill, p)
	r.prevPrefill, r.lastPrefill = r.lastPrefill, &r.s.Prefill[len(r.s.Prefill)-1]
	if q := r.prevPrefill; q != nil && q.PromptTokens > 0 && p.PromptTokens > q.PromptTokens {
		t0, t1 := median(elapsed(q.Requests)), median(elapsed(p.Requests))
		if t0 > 0 && t1 > 0 {
			e := math.Log(float64(t1)/float64(t0)) / math.Log(float64(p.PromptTokens)/float64(q.PromptTokens))
			r.prefillExp = min(2, max(1, e))
		}
	}
	return nil
}

// runDecode runs st.reps rounds of st.conc requests sent together.
func (r *runner) runDecode(ctx context.Context, st step) error {
	var rounds [][]Request
	var walls []time.Duration
	for range st.reps {
		start := time.Now()
		round, err := r.round(ctx, st)
		if err != nil {
			return err
		}
		rounds = append(rounds, round)
		walls = append(walls, time.Since(start))
	}
	d := decodeSample(st.conc, rounds)
	r.s.Decode = append(r.s.Decode, d)
	r.prevDecode, r.prevRound = r.lastDecode, r.lastRound
	r.lastDecode, r.lastRound = &r.s.Decode[len(r.s.Decode)-1], median(walls)
	if p := r.prevDecode; p != nil && r.prevRound > 0 && r.lastRound > 0 && d.Concurrency > p.Concurrency {
		e := math.Log(float64(r.lastRound)/float64(r.prevRound)) / math.Log(float64(d.Concurrency)/float64(p.Concurrency))
		r.decodeExp = min(1.2, max(0.2, e))
	}
	if d.Concurrency > 1 && d.Overlap > 0 && d.Overlap <= d.Concurrency/2 {
		r.parallelSeen = d.Overlap
		r.note(fmt.Sprintf("%s: at most %d requests decoded at once; the server queues the rest", st.name, d.Overlap))
	}
	return nil
}

// round sends st.conc requests at once and waits for all; the first error
// cancels the others.
func (r *runner) round(ctx context.Context, st step) ([]Request, error) {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	reqs := make([]Request, st.conc)
	var (
		wg    sync.WaitGroup
		once  sync.Once
		first error
	)
	start := time.Now()
	for i := range st.conc {
		prompt, _ := r.prompt(r.wordsFor(st.tokens))
		g := genRequest{Step: st.name, Prompt: prompt, MaxGen: int(r.opt.GenTokens)}
		wg.Add(1)
		go func() {
			defer wg.Done()
			sent := time.Now()
			res, err := r.c.stream(ctx, r.api, r.info.Engine, r.info.Model, g)
			if err != nil {
				once.Do(func() { first = err; cancel(err) })
				return
			}
			res.Start = sent.Sub(start)
			reqs[i] = res
			r.prog.add(1, st.name)
		}()
	}
	wg.Wait()
	return reqs, first
}

func (r *runner) note(s string) { r.s.Notes = append(r.s.Notes, s) }

// reporter serialises progress calls from concurrent requests.
type reporter struct {
	mu          sync.Mutex
	fn          func(done, total int, step string)
	done, total int
}

func (p *reporter) init(total int, step string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.total = total
	p.call(step)
}

func (p *reporter) add(n int, step string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.done += n
	p.call(step)
}

// shrink removes n requests from the plan (a dropped step or repeat).
func (p *reporter) shrink(n int) {
	if n == 0 {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.total -= n
	p.call("")
}

func (p *reporter) call(step string) {
	if p.fn != nil {
		p.fn(p.done, p.total, step)
	}
}
