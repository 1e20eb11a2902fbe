package app

import (
	"strconv"
	"strings"

	"github.com/headroom-planner/headroom/planner"
)

// HardwareSpec is a --hardware value split into its shape and device:
// "2x8xnvidia-h100-sxm5-80gb" is 2 nodes of 8 devices; "8xh100" one node
// of 8; a bare id one node with the device count given elsewhere (0).
type HardwareSpec struct {
	Nodes, Devices int
	ID             string
}

// ParseHardwareSpec reads NODESxDEVICESxID, DEVICESxID or ID. The
// multipliers are decimal integers from 1 to 64 followed by "x"; an id
// that itself starts with digits and an "x" is not expected in the
// catalog (ids start with the vendor).
func ParseHardwareSpec(s string) (HardwareSpec, error) {
	var nums []int
	rest := strings.TrimSpace(s)
	for len(nums) < 2 {
		head, tail, ok := strings.Cut(rest, "x")
		if !ok {
			break
		}
		n, err := strconv.Atoi(head)
		if err != nil {
			break
		}
		if n < 1 || n > 64 {
			return HardwareSpec{}, Usagef("--hardware %s: %d must be 1 to 64", s, n)
		}
		nums, rest = append(nums, n), tail
	}
	switch len(nums) {
	case 2:
		return HardwareSpec{Nodes: nums[0], Devices: nums[1], ID: rest}, nil
	case 1:
		return HardwareSpec{Nodes: 1, Devices: nums[0], ID: rest}, nil
	}
	return HardwareSpec{ID: rest}, nil
}

// applyHardwareSpec folds a NODESxDEVICESxID hardware value into the
// request's Nodes and Devices; a shape in both places must agree.
func (req *PlanRequest) applyHardwareSpec() error {
	hs, err := ParseHardwareSpec(req.Hardware)
	if err != nil || hs.Devices == 0 {
		return err
	}
	if req.Devices > 1 && req.Devices != hs.Devices {
		return Usagef("--hardware %s says %d devices per node but --devices says %d", req.Hardware, hs.Devices, req.Devices)
	}
	if req.Nodes > 1 && hs.Nodes > 1 && req.Nodes != hs.Nodes {
		return Usagef("--hardware %s says %d nodes but --nodes says %d", req.Hardware, hs.Nodes, req.Nodes)
	}
	req.Hardware, req.Devices = hs.ID, hs.Devices
	req.Nodes = max(req.Nodes, hs.Nodes)
	return nil
}

// nodeLink parses the request's node link ("" = the hardware's default).
func nodeLink(s string) (planner.NodeLink, error) {
	if s == "" {
		return planner.NodeLink{}, nil
	}
	l, err := planner.ParseNodeLink(s)
	if err != nil {
		return l, Usagef("--node-link: %v", err)
	}
	return l, nil
}
