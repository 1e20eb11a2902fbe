package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/schollz/progressbar/v3"
	"github.com/spf13/cobra"

	"github.com/headroom-planner/headroom/app"
	"github.com/headroom-planner/headroom/calibrate/endpoint"
	"github.com/headroom-planner/headroom/planner"
)

// calibrateEndpointFlags are the flags of `calibrate endpoint`, read once
// into endpoint.Options.
type calibrateEndpointFlags struct {
	url, engine, model, apiKeyEnv, api string
	budget, stall                      time.Duration
	maxConc, repeats                   int
	promptLengths                      []string
	genTokens                          string
	jsonOut                            bool
	out                                string
	hardware, serves                   string
	noSave, force                      bool
}

func newCalibrateEndpointCmd(g *globalOptions) *cobra.Command {
	_ = g // no global option applies yet; kept for the commands' common signature
	var f calibrateEndpointFlags
	cmd := &cobra.Command{
		Use:   "endpoint --url URL [--engine E] [--model M] [--api-key-env VAR] [--budget 60s] [--max-concurrency 16] [--json] [--out FILE]",
		Short: "Measure prefill and decode speed of a running inference server",
		Long: `endpoint measures a running server through its streaming API: vLLM, SGLang,
TGI, llama-server and Ollama through OpenAI's /v1/completions (or
/v1/chat/completions), and through each engine's own API where it reports
server timings (Ollama /api/generate, llama-server /completion, TGI
/generate_stream).

After a warm-up request it measures prefill at several prompt lengths (the
prompt token counts are the server's, not the requested ones) and decode at
concurrency 1, 2, 4, 8, 16 (up to --max-concurrency and what the server
runs at once), with repeats, within --budget. Steps that would overrun the
budget are dropped and the notes say so.

A server error, timeout, stall, refused connection or malformed stream
stops the run with an error naming the step and URL. Ctrl-C stops it too
(exit code 130). Either way nothing is saved: --out is written atomically,
and only after a complete run, so a previous file stays as it was.

The API key is read from the environment variable --api-key-env names and
is never printed or saved.`,
		Example: `  headroom calibrate endpoint --url http://127.0.0.1:11434
  headroom calibrate endpoint --url http://gpu-box:8000 --api-key-env VLLM_API_KEY --out vllm-cal.json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			opt, err := f.options()
			if err != nil {
				return withCode(exitUsage, err)
			}
			return runCalibrateEndpoint(cmd, g, opt, f)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.url, "url", "", "base URL of the server, e.g. http://127.0.0.1:8000 (required)")
	fl.StringVar(&f.engine, "engine", "", "engine: vllm, sglang, tgi, llama.cpp, ollama (default: detect)")
	fl.StringVar(&f.model, "model", "", "model to request (default: the first the server lists)")
	fl.StringVar(&f.apiKeyEnv, "api-key-env", "", "name of the environment variable holding the API key")
	fl.StringVar(&f.api, "api", "auto", "API: auto, completions, chat, ollama, llama.cpp, tgi")
	fl.DurationVar(&f.budget, "budget", endpoint.DefaultBudget, "time budget of the whole run")
	fl.DurationVar(&f.stall, "stall-timeout", endpoint.DefaultStallTimeout, "longest silence allowed in a response")
	fl.IntVar(&f.maxConc, "max-concurrency", endpoint.DefaultMaxConcurrency, "highest decode concurrency to try")
	fl.IntVar(&f.repeats, "repeats", endpoint.DefaultRepeats, "measured repeats per step")
	fl.StringSliceVar(&f.promptLengths, "prompt-lengths", []string{"64", "256", "1024"}, "prefill prompt lengths in tokens")
	fl.StringVar(&f.genTokens, "gen-tokens", "64", "tokens each decode request generates")
	fl.BoolVar(&f.jsonOut, "json", false, "print the samples as JSON")
	fl.StringVar(&f.hardware, "hardware", "", "the server's device, catalog id (default: this machine, probed)")
	fl.StringVar(&f.serves, "serves", "", "the model the server runs as Headroom knows it: catalog id, .gguf or config.json (default: --model or the served name)")
	fl.BoolVar(&f.noSave, "no-save", false, "measure only; do not fit and save a calibration profile")
	fl.BoolVar(&f.force, "force", false, "save the profile even when it looks noisier than the one it replaces")
	fl.StringVar(&f.out, "out", "", "save the samples as JSON to this file (atomically, only after a complete run)")
	_ = cmd.MarkFlagRequired("url")
	return cmd
}

// options turns the flags into endpoint.Options; environment is read here.
func (f calibrateEndpointFlags) options() (endpoint.Options, error) {
	opt := endpoint.Options{
		URL: f.url, Model: f.model, Budget: f.budget, StallTimeout: f.stall,
		MaxConcurrency: f.maxConc, Repeats: f.repeats,
	}
	if f.budget <= 0 || f.stall <= 0 || f.maxConc < 1 || f.repeats < 1 {
		return opt, errors.New("--budget and --stall-timeout must be positive, --max-concurrency and --repeats at least 1")
	}
	eng, err := parseEngineFlag(f.engine)
	if err != nil {
		return opt, err
	}
	opt.Engine = eng
	if f.api != "auto" {
		opt.API = endpoint.API(f.api)
	}
	for _, s := range f.promptLengths {
		n, err := planner.ParseTokens(s)
		if err != nil || n < 1 {
			return opt, fmt.Errorf("--prompt-lengths %q: want token counts like 64,256,1k", s)
		}
		opt.PromptLengths = append(opt.PromptLengths, n)
	}
	if opt.GenTokens, err = planner.ParseTokens(f.genTokens); err != nil || opt.GenTokens < 2 {
		return opt, fmt.Errorf("--gen-tokens %q: want at least 2 tokens", f.genTokens)
	}
	if f.apiKeyEnv != "" {
		key, ok := os.LookupEnv(f.apiKeyEnv)
		if !ok || key == "" {
			return opt, fmt.Errorf("--api-key-env %s: the variable is not set", f.apiKeyEnv)
		}
		opt.APIKey = key
	}
	return opt, nil
}

// parseEngineFlag reads --engine with the planner's one alias table
// ("" = detect from the server).
func parseEngineFlag(s string) (planner.EngineID, error) {
	if s == "" {
		return "", nil
	}
	e, err := planner.ParseEngine(s)
	if err != nil {
		return "", app.Usagef("--engine: %w", err)
	}
	return e, nil
}

// runCalibrateEndpoint runs the calibration with a progress bar on stderr,
// stops cleanly on Ctrl-C, and prints the samples.
func runCalibrateEndpoint(cmd *cobra.Command, g *globalOptions, opt endpoint.Options, f calibrateEndpointFlags) error {
	ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	go func() { <-ctx.Done(); stop() }() // a second Ctrl-C kills at once

	stderr := cmd.ErrOrStderr()
	prog := newCalProgress(stderr)
	var s endpoint.Samples
	var err error
	if f.out != "" {
		err = endpoint.RunAndSave(ctx, opt, f.out, func(x endpoint.Samples) ([]byte, error) {
			s = x
			return json.MarshalIndent(x, "", "  ")
		}, prog.update)
	} else {
		s, err = endpoint.Run(ctx, opt, prog.update)
	}
	prog.done()
	if err != nil {
		if ctx.Err() != nil && errors.Is(err, context.Canceled) {
			return withCode(exitInterupted, errors.New("calibrate endpoint: interrupted; nothing saved"))
		}
		return err
	}
	out := cmd.OutOrStdout()
	if f.jsonOut {
		enc := json.NewEncoder(out)
		enc.SetIndent("", "  ")
		if err := enc.Encode(s); err != nil {
			return err
		}
	} else {
		fmt.Fprint(out, s.Table())
	}
	if f.out != "" {
		fmt.Fprintf(stderr, "headroom: saved %d prefill and %d decode samples to %s\n", len(s.Prefill), len(s.Decode), f.out)
	}
	if f.noSave {
		return nil
	}
	return saveEndpointCalibration(cmd, g, f, s)
}

// saveEndpointCalibration fits and saves a calibration profile from an
// endpoint run, for --hardware (or the probed machine).
func saveEndpointCalibration(cmd *cobra.Command, g *globalOptions, f calibrateEndpointFlags, s endpoint.Samples) error {
	stderr := cmd.ErrOrStderr()
	a, err := g.open("")
	if err != nil {
		return err
	}
	name := f.serves
	if name == "" {
		name = f.model
	}
	mach, err := a.Machine(context.Background(), app.MachineRequest{Hardware: f.hardware})
	if err != nil {
		return err
	}
	p, err := a.EndpointProfile(context.Background(), mach, name, s)
	if errors.Is(err, app.ErrUnknownServedModel) {
		fmt.Fprintf(stderr, "headroom: hint: no calibration saved: %v; pass --serves with its catalog id or GGUF file\n", err)
		return nil
	}
	if err != nil {
		return err
	}
	path, cmp, err := a.SaveCalibration(p, mach, f.force)
	fmt.Fprint(stderr, cmp.String())
	if err != nil {
		return err
	}
	fmt.Fprintf(stderr, "headroom: calibration %s: decode η %.3f, prefill η %.3f, step %.2f ms; saved %s\n", p.Key, p.Terms.DecodeEff, p.Terms.PrefillEff, p.Terms.StepOverheadMs, path)
	return nil
}

// calProgress shows a run's progress: a bar on a terminal, one line per step
// otherwise (logs, CI).
type calProgress struct {
	w    io.Writer
	bar  *progressbar.ProgressBar
	step string
}

func newCalProgress(w io.Writer) *calProgress {
	p := &calProgress{w: w}
	if isTerminalWriter(w) {
		p.bar = progressbar.NewOptions(1,
			progressbar.OptionSetWriter(w),
			progressbar.OptionSetDescription("detect"),
			progressbar.OptionShowCount(),
			progressbar.OptionSetWidth(30),
			progressbar.OptionClearOnFinish(),
			progressbar.OptionThrottle(50*time.Millisecond),
		)
	}
	return p
}

func (p *calProgress) update(done, total int, step string) {
	newStep := step != "" && step != p.step
	if newStep {
		p.step = step
	}
	if p.bar == nil {
		if newStep {
			fmt.Fprintf(p.w, "headroom: %s\n", step)
		}
		return
	}
	if total > 0 && total != p.bar.GetMax() {
		p.bar.ChangeMax(total)
	}
	if newStep {
		p.bar.Describe(step)
	}
	_ = p.bar.Set(done)
}

func (p *calProgress) done() {
	if p.bar != nil {
		_ = p.bar.Clear()
	}
}

// isTerminalWriter reports whether w is a character device (a terminal).
func isTerminalWriter(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}
