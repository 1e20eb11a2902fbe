package main

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/headroom-planner/headroom/app"
	"github.com/headroom-planner/headroom/planner"
)

func newFlagsCmd(g *globalOptions) *cobra.Command {
	f := &scenarioFlags{}
	var docker bool
	var checkpoint string
	cmd := &cobra.Command{
		Use:   "flags",
		Short: "Print the exact launch command for one configuration (engine, format, context, users)",
		Example: `  headroom flags -m meta-llama/Llama-3.1-8B-Instruct -H nvidia-rtx-4090 -e vllm -q awq-int4 -c 8k -n 16
  headroom flags -m Llama-2-7b-chat-hf -H amd-ryzen-ai-max-395 -e llama.cpp -q q4_k_m -c 4096 -n 16 --kv-type q8_0
  headroom flags -m meta-llama/Llama-3.3-70B-Instruct -H h100-sxm --devices 4 -e sglang --docker`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			req, err := f.request()
			if err != nil {
				return err
			}
			a, err := g.open(f.root)
			if err != nil {
				return err
			}
			ans, err := a.LaunchFor(context.Background(), req, app.LaunchRequest{Docker: docker, Checkpoint: checkpoint})
			if ans.Fit.Fit.Verdict == planner.DoesNotFit {
				printFit(cmd.ErrOrStderr(), ans.Fit)
			}
			if err != nil {
				return err
			}
			if ans.Hint != "" {
				fmt.Fprintf(cmd.ErrOrStderr(), "headroom: hint: %s\n", ans.Hint)
			}
			fmt.Fprint(cmd.OutOrStdout(), ans.Launch.String())
			return nil
		},
	}
	f.register(cmd, true)
	cmd.Flags().BoolVar(&docker, "docker", false, "the official container image instead of a native command")
	cmd.Flags().StringVar(&checkpoint, "checkpoint", "", "the checkpoint to load (a Hub repo or a file), or auto to search the Hub for one in this format")
	return cmd
}
