package main

import (
	"fmt"

	"github.com/headroom-planner/headroom/planner"
	"github.com/spf13/cobra"
)

func newFlagsCmd(g *globalOptions) *cobra.Command {
	f := &scenarioFlags{}
	var docker bool
	cmd := &cobra.Command{
		Use:   "flags",
		Short: "Print the exact launch command for one configuration (engine, format, context, users)",
		Example: `  headroom flags -m meta-llama/Llama-3.1-8B-Instruct -H nvidia-rtx-4090 -e vllm -q awq-int4 -c 8k -n 16
  headroom flags -m Llama-2-7b-chat-hf -H amd-ryzen-ai-max-395 -e llama.cpp -q q4_k_m -c 4096 -n 16 --kv-type q8_0
  headroom flags -m meta-llama/Llama-3.3-70B-Instruct -H h100-sxm --devices 4 -e sglang --docker`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			s, note, r, err := fitFromFlags(g, f)
			if err != nil {
				return err
			}
			if r.Verdict == planner.DoesNotFit {
				printFit(cmd.ErrOrStderr(), s, r, note)
				return withCode(exitNoFit, fmt.Errorf("this configuration does not fit; no launch command"))
			}
			ctx := r.Context
			n := min(s.Concurrency, max(r.MaxConcurrencyAtContext, 1))
			if n < s.Concurrency {
				fmt.Fprintf(cmd.ErrOrStderr(), "headroom: hint: only %d sequences of %d tokens fit; the command allows %d\n", n, ctx, n)
			}
			b, _ := s.ResolveBackend()
			s.Backend = b
			cand := planner.Candidate{Scenario: &s, Engine: s.Engine.ID, Backend: b, Quant: s.Quant.ID, KVType: s.KV.ID,
				Devices: max(s.Devices, 1), Fit: r, Concurrency: n}
			l, err := planner.LaunchCommand(cand, docker)
			if err != nil {
				return err
			}
			fmt.Fprint(cmd.OutOrStdout(), l.String())
			return nil
		},
	}
	f.register(cmd, true)
	cmd.Flags().BoolVar(&docker, "docker", false, "the official container image instead of a native command")
	return cmd
}
