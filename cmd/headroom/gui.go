package main

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/headroom-planner/headroom/app"
)

// guiOptions are the flags of `headroom gui`.
type guiOptions struct {
	// screenshots, when set, renders every screen to PNG files in this
	// directory and exits instead of opening the window.
	screenshots string
	// model and compare set up the screens for the screenshots.
	model   string
	compare string
	// size is the screenshots' window size, "WIDTHxHEIGHT".
	size string
	// root is the machine to probe ("/" = this one).
	root string
	// calibrateFile is a benchmark output the Calibrate screenshot imports
	// (ui.ScreenshotOptions.CalibrateFile); set by TestGUIScreenshots,
	// whose App saves into a scratch directory, never by a flag.
	calibrateFile string
}

// appID is the application id of FyneApp.toml.
const appID = "io.headroom.app"

func newGUICmd(g *globalOptions) *cobra.Command {
	o := &guiOptions{}
	cmd := &cobra.Command{
		Use:   "gui [--screenshots DIR]",
		Short: "Open the desktop app: my machine, can I run it, plan, compare hardware, calibrate, export",
		Long: `gui opens Headroom's window. It needs a desktop session (X11 or Wayland)
and a binary built with cgo.

--screenshots DIR renders every screen to DIR/*.png at 1280×800 (the light
theme, and the dark theme for Can I run it? and Plan) and exits. It needs a
binary built with -tags ci, which uses Fyne's software renderer and no
display:

  CGO_ENABLED=0 go run -tags ci ./cmd/headroom gui --screenshots docs/screenshots`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			a, err := g.open(o.root)
			if err != nil {
				return err
			}
			if o.screenshots == "" {
				return runGUI(a)
			}
			paths, err := renderScreenshots(a, o)
			for _, p := range paths {
				fmt.Fprintln(cmd.OutOrStdout(), p)
			}
			return err
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.screenshots, "screenshots", "", "render every screen to PNG files in this directory and exit")
	f.StringVar(&o.model, "screenshot-model", "meta-llama/Llama-3.1-8B-Instruct", "with --screenshots: the model the screens show")
	f.StringVar(&o.compare, "screenshot-compare", "nvidia-rtx-4090,nvidia-rtx-5090,amd-ryzen-ai-max-395,apple-m4-max-40c,nvidia-rtx-3090",
		"with --screenshots: hardware ids compared with this machine")
	f.StringVar(&o.size, "screenshot-size", "1280x800", "with --screenshots: the window size in pixels")
	f.StringVar(&o.root, "root", "/", "probe a saved machine tree instead of this machine")
	return cmd
}

// windowSize parses --screenshot-size.
func (o *guiOptions) windowSize() (w, h float32, err error) {
	if _, err := fmt.Sscanf(o.size, "%fx%f", &w, &h); err != nil || w < 320 || h < 240 || w > 7680 || h > 4320 {
		return 0, 0, withCode(exitUsage, fmt.Errorf("--screenshot-size %q: want WIDTHxHEIGHT, e.g. 1280x800", o.size))
	}
	return w, h, nil
}

// compareIDs splits --screenshot-compare.
func (o *guiOptions) compareIDs() []string { return app.SplitList(strings.TrimSpace(o.compare)) }
