package ui

import (
	"github.com/headroom-planner/headroom/planner"
)

// hardwareLabel is a device as the pickers list it: its name, memory and
// list price where the catalog has one ("NVIDIA GeForce RTX 4090 · 24 GiB
// · $1,599").
func hardwareLabel(h planner.Hardware) string {
	s := h.Name + " · " + gib(h.Memory)
	if h.PriceUSD > 0 {
		s += " · $" + thousands(int64(h.PriceUSD+0.5))
	}
	return s
}
