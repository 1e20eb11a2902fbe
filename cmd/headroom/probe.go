package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/headroom-planner/headroom/app"
	"github.com/headroom-planner/headroom/internal/atomicfile"
	"github.com/headroom-planner/headroom/planner"
	"github.com/headroom-planner/headroom/probe"
)

// probeOptions are the flags of `headroom probe`.
type probeOptions struct {
	root    string
	pciIDs  string
	jsonOut bool
}

// open starts the application layer for the probe's root and pci.ids.
func (o probeOptions) open(g *globalOptions) (*app.App, error) {
	return app.Open(app.Options{ProfilesDir: g.profilesDir, CalibrationDir: g.calibrationDir, Root: o.root, PCIIDs: o.pciIDs,
		Warn: func(msg string) { fmt.Fprintf(os.Stderr, "headroom: warning: %s\n", msg) }})
}

// check rejects a --root that is not a directory as a usage error.
func (o probeOptions) check() error {
	if st, err := os.Stat(o.root); err != nil || !st.IsDir() {
		return withCode(exitUsage, fmt.Errorf("--root %s: not a directory", o.root))
	}
	return nil
}

func newProbeCmd(g *globalOptions) *cobra.Command {
	o := &probeOptions{}
	cmd := &cobra.Command{
		Use:   "probe",
		Short: "Detect this machine's accelerators and the memory each engine can use",
		Long: `probe reads /sys and /proc (CPU, RAM, GPUs with amdgpu VRAM/GTT and the TTM
limit, nvidia-smi for NVIDIA), matches each device to the catalog, and shows
how much memory llama.cpp, Ollama, vLLM, SGLang and TGI can allocate on it.

--root reads a saved machine instead (an unpacked 'probe snapshot').`,
		Example: "  headroom probe\n  headroom probe --json\n  headroom probe snapshot machine.tar.gz",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runProbe(cmd.Context(), g, *o, cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	cmd.PersistentFlags().StringVar(&o.root, "root", "/", "read the machine below this directory (a saved snapshot)")
	cmd.PersistentFlags().StringVar(&o.pciIDs, "pci-ids", "", "pci.ids file for naming unknown devices (default: ROOT/usr/share/{hwdata,misc}/pci.ids)")
	cmd.Flags().BoolVar(&o.jsonOut, "json", false, "print the machine, matches and usable memory as JSON")
	cmd.AddCommand(newProbeSnapshotCmd(o))
	return cmd
}

func newProbeSnapshotCmd(o *probeOptions) *cobra.Command {
	return &cobra.Command{
		Use:   "snapshot FILE.tar.gz",
		Short: "Save exactly the files and tool output the probe reads, for a bug report or a test fixture",
		Long: `snapshot writes a tar.gz of the /sys and /proc files the probe read, symlinks
kept, and nvidia-smi's output. It holds no serial numbers (they are never
read; SMBIOS records are blanked) and no user data. Unpacked, it replays
with 'headroom probe --root DIR'.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runSnapshot(cmd.Context(), *o, args[0], cmd.ErrOrStderr())
		},
	}
}

// probeReport is the JSON of `headroom probe --json` (shared with the
// REST API's /api/probe).
type probeReport = app.ProbeJSON

type probeMatch = app.ProbeMatchJSON

func runProbe(ctx context.Context, g *globalOptions, o probeOptions, stdout, stderr io.Writer) error {
	if ctx == nil {
		ctx = context.Background()
	}
	if err := o.check(); err != nil {
		return err
	}
	a, err := o.open(g)
	if err != nil {
		return err
	}
	start := time.Now()
	m, devs, err := a.ProbeReport(ctx)
	if err != nil {
		return err
	}
	elapsed := time.Since(start)
	rep := app.NewProbeJSON(m, devs)
	if o.jsonOut {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(rep)
	}
	printProbe(stdout, rep)
	fmt.Fprintf(stdout, "\nprobed %s in %s\n", o.root, elapsed.Round(time.Millisecond))
	return nil
}

func printProbe(w io.Writer, rep probeReport) {
	m := rep.Machine
	if s := strings.TrimSpace(m.System.Vendor + " " + m.System.Product); s != "" || m.Kernel != "" {
		fmt.Fprintf(w, "Machine  %s", dashIfEmpty(s))
		if m.Kernel != "" {
			fmt.Fprintf(w, ", kernel %s", m.Kernel)
		}
		fmt.Fprintln(w)
	}
	fmt.Fprintf(w, "CPU      %s: %d package(s), %d cores, %d threads", dashIfEmpty(m.CPU.Model), m.CPU.Packages, m.CPU.Cores, m.CPU.Threads)
	if len(m.CPU.Features) > 0 {
		fmt.Fprintf(w, " (%s)", strings.Join(m.CPU.Features, " "))
	}
	fmt.Fprintln(w)
	fmt.Fprintf(w, "Memory   %s\n", memoryLine(m))
	for i, pm := range rep.Matches {
		fmt.Fprintln(w)
		printMatch(w, i, pm, m)
	}
	if len(m.Warnings) > 0 {
		fmt.Fprintln(w)
		for _, x := range m.Warnings {
			fmt.Fprintf(w, "warning: %s\n", x)
		}
	}
}

func memoryLine(m probe.Machine) string {
	mem := m.Memory
	var parts []string
	if mem.Installed > 0 {
		s := mem.Installed.String() + " installed"
		if mem.Kind != "" {
			s = fmt.Sprintf("%s %s", mem.Installed, mem.Kind)
			if mem.SpeedMTs > 0 {
				s += fmt.Sprintf("-%d", mem.SpeedMTs)
			}
			s += " installed"
		}
		if mem.InstalledSource == "estimate" {
			s += " (estimated)"
		}
		parts = append(parts, s)
	}
	parts = append(parts, fmt.Sprintf("%s to the OS, %s available", mem.Total, mem.Available))
	if m.NUMANodes > 1 {
		parts = append(parts, fmt.Sprintf("%d NUMA nodes", m.NUMANodes))
	}
	return strings.Join(parts, "; ")
}

func printMatch(w io.Writer, i int, pm probeMatch, m probe.Machine) {
	d, h := pm.Device, pm.Hardware
	if d.Kind == planner.KindCPU {
		fmt.Fprintf(w, "No accelerator: CPU inference from system RAM\n  profile   %s (%s)\n", h.ID, matchedBy(pm))
		printHints(w, pm)
		return
	}
	fmt.Fprintf(w, "Device %d  %s  %s (%s", i, dashIfEmpty(d.Bus), d.Name, d.PCIID)
	if d.Driver != "" {
		fmt.Fprintf(w, ", %s", d.Driver)
	}
	fmt.Fprintf(w, ", %s)\n", d.Kind)
	fmt.Fprintf(w, "  profile   %s: %s (%s)\n", h.ID, h.Name, matchedBy(pm))
	fmt.Fprintf(w, "  memory    %s\n", deviceMemory(d))
	if d.ComputeCapability != "" || d.PowerLimitW > 0 {
		fmt.Fprintf(w, "  compute   %s\n", computeLine(d))
	}
	if pm.Skip != "" {
		fmt.Fprintf(w, "  skipped   %s\n", pm.Skip)
	} else {
		printUsable(w, pm.Usable)
	}
	printHints(w, pm)
}

func matchedBy(pm probeMatch) string {
	if pm.Generic {
		return "generic profile from probed memory"
	}
	return "matched by " + pm.By
}

func deviceMemory(d probe.Device) string {
	if d.VRAMTotal == 0 && d.GTTTotal == 0 {
		return "not probed (see warnings)"
	}
	label := "VRAM"
	if d.Integrated && d.Vendor == "AMD" {
		label = "carve-out"
	}
	s := fmt.Sprintf("%s %s (used %s)", label, d.VRAMTotal, d.VRAMUsed)
	if d.GTTTotal > 0 {
		s += fmt.Sprintf(" · GTT %s (used %s)", d.GTTTotal, d.GTTUsed)
	}
	if d.GTTCeiling > 0 && d.Integrated {
		s += fmt.Sprintf(" · GTT ceiling %s (%s)", d.GTTCeiling, d.GTTCeilingSource)
	}
	return s
}

func computeLine(d probe.Device) string {
	var parts []string
	if d.ComputeCapability != "" {
		parts = append(parts, "compute capability "+d.ComputeCapability)
	}
	if d.PowerLimitW > 0 {
		parts = append(parts, fmt.Sprintf("power limit %.0f W", d.PowerLimitW))
	}
	if d.MaxSMClockMHz > 0 {
		parts = append(parts, fmt.Sprintf("max clocks %d/%d MHz", d.MaxSMClockMHz, d.MaxMemClockMHz))
	}
	if d.DriverVersion != "" {
		parts = append(parts, "driver "+d.DriverVersion)
	}
	return strings.Join(parts, ", ")
}

func printUsable(w io.Writer, us []probe.Usable) {
	if len(us) == 0 {
		return
	}
	fmt.Fprintln(w, "  usable per engine:")
	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
	for _, u := range us {
		fmt.Fprintf(tw, "    %s\t%s\t%s\t%s\n", u.Policy, u.Backend, u.Bytes, u.Rule)
	}
	tw.Flush()
}

func printHints(w io.Writer, pm probeMatch) {
	for _, n := range pm.Notes {
		fmt.Fprintf(w, "  note      %s\n", n)
	}
	if pm.Hint != "" {
		fmt.Fprintf(w, "  hint      %s\n", pm.Hint)
	}
}

func dashIfEmpty(s string) string {
	if strings.TrimSpace(s) == "" {
		return "-"
	}
	return s
}

// runSnapshot writes the archive to a temporary file beside file and
// renames it into place, so a failed run leaves no half archive.
func runSnapshot(ctx context.Context, o probeOptions, file string, stderr io.Writer) error {
	if ctx == nil {
		ctx = context.Background()
	}
	if err := o.check(); err != nil {
		return err
	}
	a, err := o.open(&globalOptions{})
	if err != nil {
		return err
	}
	if dir := filepath.Dir(file); !isDir(dir) {
		return app.Usagef("snapshot %s: directory %s does not exist", file, dir)
	}
	if err := atomicfile.Write(file, func(w io.Writer) error { return a.Snapshot(ctx, w) }); err != nil {
		return fmt.Errorf("snapshot %s: %w", file, err)
	}
	st, err := os.Stat(file)
	if err != nil {
		return fmt.Errorf("snapshot %s: %w", file, err)
	}
	fmt.Fprintf(stderr, "headroom: wrote %s (%s): the files the probe read, no serial numbers; attach it to a bug report\n",
		file, planner.Bytes(st.Size()))
	return nil
}

// isDir reports whether path is an existing directory.
func isDir(path string) bool {
	st, err := os.Stat(path)
	return err == nil && st.IsDir()
}
