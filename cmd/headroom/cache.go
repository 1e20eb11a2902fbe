package main

import (
	"encoding/json"
	"fmt"
	"text/tabwriter"

	"github.com/spf13/cobra"
)

// newCacheCmd is `headroom cache list|clear`: the metadata Headroom keeps
// of models read from the Hugging Face Hub and the Ollama registry.
func newCacheCmd(g *globalOptions) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "cache list|clear",
		Short: "The cache of model metadata read from the Hugging Face Hub and Ollama (configs and headers, never weights)",
	}
	var jsonOut bool
	list := &cobra.Command{
		Use:   "list",
		Short: "List cached model metadata by repository",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			a, err := g.open("")
			if err != nil {
				return err
			}
			repos, dir, err := a.ModelCache()
			if err != nil {
				return err
			}
			if jsonOut {
				enc := json.NewEncoder(cmd.OutOrStdout())
				enc.SetIndent("", "  ")
				return enc.Encode(repos)
			}
			out := cmd.OutOrStdout()
			if len(repos) == 0 {
				fmt.Fprintf(out, "No model metadata cached in %s.\n", dir)
				return nil
			}
			tw := tabwriter.NewWriter(out, 2, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "SOURCE\tREPOSITORY\tFILES\tSIZE\tNEWEST")
			for _, r := range repos {
				fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%s\n", r.Source, r.Repo, r.Entries, r.Bytes, r.Modified.Format("2006-01-02 15:04"))
			}
			if err := tw.Flush(); err != nil {
				return err
			}
			fmt.Fprintf(out, "\nin %s\n", dir)
			return nil
		},
	}
	list.Flags().BoolVar(&jsonOut, "json", false, "print JSON")
	clear := &cobra.Command{
		Use:   "clear",
		Short: "Delete the cached model metadata (it is read again when needed)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			a, err := g.open("")
			if err != nil {
				return err
			}
			dir, err := a.ClearModelCache()
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "cleared %s\n", dir)
			return nil
		},
	}
	cmd.AddCommand(list, clear)
	return cmd
}
