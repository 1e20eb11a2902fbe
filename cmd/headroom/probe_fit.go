package main

import (
	"context"
	"fmt"
	"time"

	"github.com/headroom-planner/headroom/planner"
	"github.com/headroom-planner/headroom/probe"
)

func init() { probeMachine = probedHardware }

// probedHardware probes this machine (or a saved tree under root) and
// returns the first usable accelerator as planner hardware, with the
// memory the probe found instead of the catalog's.
func probedHardware(c *planner.Catalog, root string) (resolvedHardware, string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	m, err := probe.Probe(ctx, probe.Options{Root: root})
	if err != nil {
		return resolvedHardware{}, "", withCode(exitUsage, fmt.Errorf("probing the machine (pass --hardware to skip): %w", err))
	}
	matched := probe.Match(m, c)
	var pick *probe.MatchedDevice
	same := 0
	for i := range matched {
		md := &matched[i]
		if md.Skip != "" {
			continue
		}
		if pick == nil {
			pick = md
		}
		if md.Hardware.ID == pick.Hardware.ID {
			same++
		}
	}
	if pick == nil {
		return resolvedHardware{}, "", withCode(exitUsage, fmt.Errorf("the probe found no usable device; pass --hardware"))
	}
	hw, usable, host, _ := probe.ForPlanner(*pick, m)
	where := "this machine"
	if root != "" && root != "/" {
		where = "saved machine " + root
	}
	note := fmt.Sprintf("probed %s: %s → %s, %s usable", where, pick.Device.Name, hw.ID, usable)
	if pick.Generic {
		note += " (generic profile: run `headroom calibrate host` for speed figures)"
	}
	if same > 1 {
		note += fmt.Sprintf("; %d such devices (use --devices %d for tensor parallel)", same, same)
	}
	return resolvedHardware{Hardware: hw, usable: usable, host: host}, note, nil
}
