package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/spf13/pflag"

	"github.com/headroom-planner/headroom/app"
	"github.com/headroom-planner/headroom/planner"
)

// shapeText names the machine a plan is for: "8 × NVIDIA H100 SXM5 80GB",
// or "2 nodes × 8 × NVIDIA H100 SXM5 80GB".
func shapeText(req planner.PlanRequest) string {
	s := fmt.Sprintf("%d × %s", max(req.Devices, 1), req.Hardware.Name)
	if req.Nodes > 1 {
		s = fmt.Sprintf("%d nodes × %s", req.Nodes, s)
	}
	return s
}

// printFleet prints the replicas the best configuration needs for a rate.
func printFleet(w io.Writer, c planner.Candidate) {
	f := c.Fleet
	if f == nil {
		return
	}
	slo := "within the SLO"
	if !f.MeetsSLO {
		slo = "missing the SLO"
	}
	fmt.Fprintf(w, "  Fleet: %s × %s = %s, each at %.0f%% of its %.3g req/s (ceiling %.0f%%): TTFT %s, TPOT %s per replica, %s\n",
		planner.Plural(f.Replicas, "replica"), planner.Plural(f.DevicesPerReplica, "device"), planner.Plural(f.Devices, "device"), 100*f.Utilization, f.CapacityReqPerS, 100*f.Ceiling, f.Pred.TTFT, f.Pred.TPOT, slo)
}

// k8sOptions are plan's --export-k8s flags.
type k8sOptions struct {
	dir, kind, name, namespace, hfSecret, cacheClaim string
}

func (k *k8sOptions) register(f *pflag.FlagSet) {
	f.StringVar(&k.dir, "export-k8s", "", "write Kubernetes manifests of the best plan into DIR (created if missing): Deployment + Service, or a LeaderWorkerSet over nodes")
	f.StringVar(&k.kind, "k8s-kind", "", "with --export-k8s: auto (default) or kserve (an InferenceService)")
	f.StringVar(&k.name, "k8s-name", "", "with --export-k8s: resource name (default from the model and engine)")
	f.StringVar(&k.namespace, "k8s-namespace", "", "with --export-k8s: namespace (default: none written)")
	f.StringVar(&k.hfSecret, "hf-token-secret", "hf-token", "with --export-k8s: Secret whose key \"token\" holds a Hugging Face token (optional in the pod)")
	f.StringVar(&k.cacheClaim, "model-cache-pvc", "", "with --export-k8s: PersistentVolumeClaim for the weights (default: an emptyDir per pod)")
}

// export writes the manifests of c into the directory and lists them.
func (k *k8sOptions) export(ctx context.Context, a *app.App, c planner.Candidate, lr app.LaunchRequest, out io.Writer) error {
	files, err := a.ExportK8s(ctx, c, app.K8sRequest{Name: k.name, Namespace: k.namespace, Kind: k.kind,
		HFTokenSecret: k.hfSecret, ModelCacheClaim: k.cacheClaim, Launch: lr})
	if err != nil {
		return fmt.Errorf("--export-k8s: %w", err)
	}
	if err := os.MkdirAll(k.dir, 0o755); err != nil {
		return fmt.Errorf("--export-k8s: %w", err)
	}
	for _, f := range files {
		p := filepath.Join(k.dir, f.Name)
		if err := writeFile(p, f.Data, 0o644); err != nil {
			return err
		}
		fmt.Fprintf(out, "wrote %s\n", p)
	}
	return nil
}

// printCost prints what the best plan costs a day.
func printCost(w io.Writer, c *planner.Cost) {
	if c == nil {
		return
	}
	fmt.Fprintf(w, "\nCost: %d devices × 24 h = %.0f device-hours/day (%.0f busy at %.0f%% utilization) at $%.2f/device-hour = $%.0f/day; $%.2f per million output tokens\n  price: %s\n",
		c.Devices, c.DeviceHoursPerDay, c.BusyDeviceHoursPerDay, 100*c.Utilization, c.USDPerDeviceHour, c.USDPerDay, c.USDPerMillionOutput, c.Source)
}
