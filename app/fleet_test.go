package app

import (
	"bytes"
	"context"
	"errors"
	"testing"
)

func TestParseHardwareSpec(t *testing.T) {
	for _, tc := range []struct {
		in             string
		nodes, devices int
		id             string
		bad            bool
	}{
		{in: "2x8xnvidia-h100-sxm5-80gb", nodes: 2, devices: 8, id: "nvidia-h100-sxm5-80gb"},
		{in: "8xh100", nodes: 1, devices: 8, id: "h100"},
		{in: "nvidia-rtx-4090", id: "nvidia-rtx-4090"},
		{in: "0x8xh100", bad: true},
		{in: "2x99xh100", bad: true},
	} {
		t.Run(tc.in, func(t *testing.T) {
			hs, err := ParseHardwareSpec(tc.in)
			if tc.bad {
				if !errors.Is(err, ErrUsage) {
					t.Fatalf("ParseHardwareSpec(%q) = %+v, %v; want a usage error", tc.in, hs, err)
				}
				return
			}
			if err != nil || hs != (HardwareSpec{Nodes: tc.nodes, Devices: tc.devices, ID: tc.id}) {
				t.Fatalf("ParseHardwareSpec(%q) = %+v, %v", tc.in, hs, err)
			}
		})
	}
}

// --hardware 2x8xID and --nodes 2 --devices 8 -H ID ask the same question
// and get the same answer; a shape that contradicts the flags is refused.
func TestPlanMultiNodeShapes(t *testing.T) {
	a := testApp(t, "")
	ctx := context.Background()
	base := PlanRequest{Model: "meta-llama/Llama-3.1-405B", Engines: []string{"vllm"}, Quants: []string{"fp8"}}
	r1, r2 := base, base
	r1.Hardware = "2x8xnvidia-h100-sxm5-80gb"
	r2.Hardware, r2.Nodes, r2.Devices = "nvidia-h100-sxm5-80gb", 2, 8
	a1, err := a.Plan(ctx, r1)
	if err != nil {
		t.Fatal(err)
	}
	a2, err := a.Plan(ctx, r2)
	if err != nil {
		t.Fatal(err)
	}
	b1, ok1 := a1.Best("")
	b2, ok2 := a2.Best("")
	if !ok1 || !ok2 || b1.Label() != b2.Label() || b1.Pred != b2.Pred || b1.Nodes != 2 {
		t.Fatalf("shapes differ: %s %+v vs %s %+v", b1.Label(), b1.Pred, b2.Label(), b2.Pred)
	}
	bad := r1
	bad.Nodes = 3
	if _, err := a.Plan(ctx, bad); !errors.Is(err, ErrUsage) {
		t.Errorf("2x8 with --nodes 3: %v, want a usage error", err)
	}
	link := r2
	link.NodeLink = "carrier-pigeon"
	if _, err := a.Plan(ctx, link); !errors.Is(err, ErrUsage) {
		t.Errorf("bad node link: %v, want a usage error", err)
	}
}

// ExportK8s writes the best plan's manifests: a LeaderWorkerSet over 2
// nodes; asking KServe for it, or an unknown kind, is a usage error.
func TestExportK8s(t *testing.T) {
	a := testApp(t, "")
	ctx := context.Background()
	ans, err := a.Plan(ctx, PlanRequest{Model: "deepseek-ai/DeepSeek-R1", Hardware: "2x8xnvidia-h100-sxm5-80gb",
		Engines: []string{"vllm"}, Quants: []string{"fp8"}})
	if err != nil {
		t.Fatal(err)
	}
	best, ok := ans.Best("")
	if !ok {
		t.Fatal("nothing fits")
	}
	files, err := a.ExportK8s(ctx, best, K8sRequest{})
	if err != nil {
		t.Fatal(err)
	}
	names := []string{}
	for _, f := range files {
		names = append(names, f.Name)
	}
	if len(files) != 2 || files[0].Name != "leaderworkerset.yaml" || !bytes.Contains(files[0].Data, []byte("name: deepseek-r1-vllm")) {
		t.Errorf("files %v", names)
	}
	for _, kind := range []string{"kserve", "helm"} {
		if _, err := a.ExportK8s(ctx, best, K8sRequest{Kind: kind}); !errors.Is(err, ErrUsage) {
			t.Errorf("kind %s over 2 nodes: %v, want a usage error", kind, err)
		}
	}
}
