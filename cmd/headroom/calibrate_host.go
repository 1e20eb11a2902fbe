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

	"github.com/headroom-planner/headroom/calibrate/host"
)

func newCalibrateHostCmd(g *globalOptions) *cobra.Command {
	_ = g // no global option applies; kept for the commands' common signature
	var opt host.Options
	var jsonOut, force bool
	cmd := &cobra.Command{
		Use:   "host [--budget 15s] [--threads N] [--array-mib 256] [--json]",
		Short: "Measure this machine's CPU: memory bandwidth, matrix-vector and matrix-multiply speed",
		Long: `host runs short CPU microbenchmarks (15 s by default, at most 20 s) that
calibrate CPU inference (llama.cpp or Ollama without a GPU) for this machine:

  memory bandwidth   all threads, best of several passes over three arrays far
                     larger than the cache: STREAM triad and a read-only kernel
  one thread         the read kernel on a single core
  gemv               float32 matrix-vector over a large matrix, rows split
                     across threads: the shape of CPU decode (GB/s of weights)
  gemm               float32 and float64 matrix multiply (gonum BLAS) at
                     256 to 2048: the FLOP/s prefill can reach

The arrays take 3 × --array-mib of memory (768 MiB by default). Close other
heavy programs first: what they use is missing from the result. Ctrl-C stops
the run at once (exit code 130).`,
		Example: `  headroom calibrate host
  headroom calibrate host --budget 8s --json > host.json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if opt.Budget < host.MinBudget || opt.Budget > host.MaxBudget {
				return withCode(exitUsage, fmt.Errorf("--budget %v: want %v to %v (a shorter run measures the cache, not the memory)", opt.Budget, host.MinBudget, host.MaxBudget))
			}
			return runCalibrateHost(cmd, g, opt, jsonOut, force)
		},
	}
	fl := cmd.Flags()
	fl.DurationVar(&opt.Budget, "budget", host.DefaultBudget, "time the benchmarks may take (at most 20s)")
	fl.IntVar(&opt.Threads, "threads", 0, "threads of the memory kernels (default: all CPUs)")
	fl.IntVar(&opt.ArrayMiB, "array-mib", host.DefaultArrayMiB, "size of each of the three memory arrays in MiB")
	fl.BoolVar(&jsonOut, "json", false, "print the result as JSON")
	fl.BoolVar(&force, "force", false, "save the profile even when it looks noisier than the one it replaces")
	return cmd
}

// runCalibrateHost runs the benchmarks with a progress bar on stderr and
// stops cleanly on Ctrl-C.
func runCalibrateHost(cmd *cobra.Command, g *globalOptions, opt host.Options, jsonOut, force bool) error {
	ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	go func() { <-ctx.Done(); stop() }() // a second Ctrl-C kills at once

	a, err := g.open("")
	if err != nil {
		return err
	}
	prog := newHostProgress(cmd.ErrOrStderr())
	hc, err := a.CalibrateHost(ctx, opt, force, prog.update)
	prog.done()
	switch {
	case err == nil:
	case ctx.Err() != nil && errors.Is(err, context.Canceled):
		return withCode(exitInterupted, errors.New("calibrate host: interrupted; nothing saved"))
	case hc.Result.Duration == 0:
		return err
	}
	out := cmd.OutOrStdout()
	if jsonOut {
		enc := json.NewEncoder(out)
		enc.SetIndent("", "  ")
		if err := enc.Encode(hc.Result); err != nil {
			return err
		}
	} else {
		fmt.Fprint(out, hc.Result.String())
	}
	for _, c := range hc.Comparisons {
		fmt.Fprint(cmd.ErrOrStderr(), c.String())
	}
	for _, p := range hc.Saved {
		fmt.Fprintf(cmd.ErrOrStderr(), "saved %s (for %s)\n", p, hc.Hardware)
	}
	return err
}

// hostProgress shows the run: a bar on a terminal, one line per step
// otherwise (logs, CI).
type hostProgress struct {
	w    io.Writer
	bar  *progressbar.ProgressBar
	step string
}

// hostProgressSteps is the resolution of the bar.
const hostProgressSteps = 1000

func newHostProgress(w io.Writer) *hostProgress {
	p := &hostProgress{w: w}
	if isTerminalWriter(w) {
		p.bar = progressbar.NewOptions(hostProgressSteps,
			progressbar.OptionSetWriter(w),
			progressbar.OptionSetDescription("starting"),
			progressbar.OptionSetWidth(30),
			progressbar.OptionClearOnFinish(),
			progressbar.OptionThrottle(100*time.Millisecond),
		)
	}
	return p
}

func (p *hostProgress) update(step string, frac float64) {
	newStep := step != p.step
	p.step = step
	if p.bar == nil {
		if newStep && step != "done" {
			fmt.Fprintf(p.w, "headroom: %s\n", step)
		}
		return
	}
	if newStep {
		p.bar.Describe(step)
	}
	_ = p.bar.Set(int(frac * hostProgressSteps))
}

func (p *hostProgress) done() {
	if p.bar != nil {
		_ = p.bar.Clear()
	}
}
