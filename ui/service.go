package ui

import (
	"context"
	"time"

	"github.com/headroom-planner/headroom/planner"
)

// Service is everything the screens ask of the rest of Headroom. NewService
// implements it over the application layer (package app), which the CLI
// calls too; tests implement it over a small catalog literal.
//
// Methods without a context must return within a few milliseconds (the
// screens call them on every change of an input, off the UI thread).
// Machine and the Calibrate methods may take long and must stop
// when ctx is cancelled.
type Service interface {
	// Catalog is the set of known devices, models, formats and engines. It
	// must not change while the window is open.
	Catalog() *planner.Catalog
	// Machine probes this machine (or returns the last probe).
	Machine(ctx context.Context) (MachineView, error)
	// Scenario turns the screen's choices into a complete scenario, filling
	// in "automatic" choices (engine, format, KV type) and this machine's
	// probed memory limits.
	Scenario(in ScenarioInput) (planner.Scenario, error)
	// Fit answers "can I run it?" for one scenario.
	Fit(s planner.Scenario) (planner.FitResult, error)
	// Predict gives the speed of one scenario under a workload.
	Predict(s planner.Scenario, w planner.Workload) planner.Prediction
	// Curve predicts the workload at each concurrency in turn (one
	// Prediction per entry of concurrencies, in order).
	Curve(s planner.Scenario, w planner.Workload, concurrencies []int) []planner.Prediction
	// Plan ranks configurations (engine × format × KV type × concurrency)
	// for a workload and latency target, best first.
	Plan(in PlanInput) (PlanView, error)
	// Compare evaluates one model and workload on several devices.
	Compare(in CompareInput) ([]CompareRow, error)
	// CalibrateHost measures this machine's own speed. progress may be
	// called from any goroutine.
	CalibrateHost(ctx context.Context, progress Progress) (CalibrationView, error)
	// CalibrateEndpoint measures a running inference server at url.
	CalibrateEndpoint(ctx context.Context, url string, progress Progress) (CalibrationView, error)
	// CalibrateImport reads a benchmark output the user already has
	// (llama-bench, vllm bench serve, …) and calibrates each setup it
	// measured, as `headroom calibrate import --save` does.
	CalibrateImport(ctx context.Context, path string, progress Progress) (CalibrationView, error)
	// OpenModelFile reads a model's architecture from a GGUF file, a
	// config.json or a model directory.
	OpenModelFile(path string) (planner.Model, error)
	// Export writes a plan row in format (one of ExportFormats' IDs).
	Export(row PlanRow, format string) ([]byte, error)
}

// Progress reports a long task's progress: fraction in [0, 1] and what it
// is doing now.
type Progress func(fraction float64, step string)

// MemoryKind names a pool of memory a device computes from.
type MemoryKind string

// Memory kinds shown on the My machine screen.
const (
	MemVRAM    MemoryKind = "VRAM"       // dedicated device memory (or an APU's carve-out)
	MemGTT     MemoryKind = "GTT"        // system RAM an AMD GPU maps
	MemUnified MemoryKind = "Unified"    // one pool shared by CPU and GPU
	MemSystem  MemoryKind = "System RAM" // host memory
)

// MemoryUse is one memory pool: its size, and how much of it is in use.
type MemoryUse struct {
	Kind  MemoryKind
	Total planner.Bytes
	// Used is what is in use now; UsedKnown is false where the probe could
	// not read it.
	Used      planner.Bytes
	UsedKnown bool
	// Note says where the figure comes from or what limits it.
	Note string
}

// DeviceView is one probed accelerator (or the CPU, on a machine without
// one) and the catalog profile it was matched to.
type DeviceView struct {
	Name   string
	Vendor string
	Kind   planner.DeviceKind
	Memory []MemoryUse
	// Profile is the matched catalog hardware id, ProfileName its name and
	// MatchedBy how the match was made.
	Profile     string
	ProfileName string
	MatchedBy   string
	// Generic is true when no catalog entry matched and the profile was
	// built from probed memory alone.
	Generic bool
	// Skip says why the device is left out of plans ("" = used).
	Skip  string
	Notes []string
}

// CalibrationStatus says whether this machine's speed figures were
// measured, and when.
type CalibrationStatus struct {
	Calibrated bool
	When       time.Time
	// Source names what was measured: "host", or a server URL.
	Source string
	// Detail is one line of what the calibration found.
	Detail string
}

// MachineView is what the My machine screen shows.
type MachineView struct {
	// Name is the system's vendor and product, or the CPU model.
	Name   string
	CPU    string
	Kernel string
	// Memory is the host's RAM.
	Memory  MemoryUse
	Devices []DeviceView
	// Hardware is the catalog id the other screens plan for as "this
	// machine" ("" = nothing usable was found); HardwareName its name.
	Hardware     string
	HardwareName string
	Warnings     []string
	Calibration  CalibrationStatus
}

// ScenarioInput is what a screen lets the user choose. Empty strings and
// zeros mean "automatic".
type ScenarioInput struct {
	// Model is a catalog model or one read with OpenModelFile.
	Model planner.Model
	// Hardware is a catalog id; "" means this machine as probed.
	Hardware string
	Devices  int
	// Nodes is how many such machines one replica may span (0 or 1 =
	// one): plans only.
	Nodes  int
	Engine string
	Quant  string
	KV     string
	// Context is per sequence; 0 = the largest that fits.
	Context planner.Tokens
	// Users is the number of sequences served at once (at least 1).
	Users int
}

// PlanInput is a workload and latency target to plan for.
type PlanInput struct {
	// Scenario fixes the model and hardware; empty Engine, Quant and KV
	// are swept.
	Scenario ScenarioInput
	// Workload gives prompt and output lengths; Concurrency is the peak
	// number of users, or Rate the requests/s arriving at random (then
	// Concurrency is ignored).
	Workload planner.Workload
	// MaxTTFT and MaxTPOT are the latency target (0 = none).
	MaxTTFT planner.Milliseconds
	MaxTPOT planner.Milliseconds
}

// PlanRow is one ranked configuration.
type PlanRow struct {
	Rank        int
	Engine      string // engine name as shown
	Quant       string
	KV          string
	Concurrency int
	Context     planner.Tokens
	TTFT        planner.Milliseconds
	TPOT        planner.Milliseconds
	// PerUser is one user's tok/s over a request's whole time, TTFT
	// included; Stream the speed tokens stream at once the answer starts
	// (1/TPOT); Total all users' output tok/s (never below PerUser).
	PerUser planner.TokensPerSecond
	Stream  planner.TokensPerSecond
	Total   planner.TokensPerSecond
	// Source labels the speed figures: prior, fitted, calibrated or
	// measured; ErrorBand is the validation error in percent (0 = unknown).
	Source    string
	ErrorBand float64
	Fits      bool
	MeetsSLO  bool
	// At an arrival rate (Workload.Rate > 0): Capacity is the most
	// requests/s the configuration completes and Utilization the rate's
	// share of it; Concurrency is then the slots the engine is given.
	Capacity    float64
	Utilization float64
	// WhyNot says why the row fails the target or does not fit ("" when
	// it does).
	WhyNot string
	// Launch is the command that starts the engine with this
	// configuration.
	Launch string
	// Scenario and Workload are what the row was computed from (for
	// Curve and Export).
	Scenario planner.Scenario
	Workload planner.Workload
	// Candidate is the planner's answer the row shows (Export encodes it).
	Candidate planner.Candidate
}

// PlanView is the result of Plan.
type PlanView struct {
	Rows []PlanRow
	// Hardware names the device planned for.
	Hardware string
	Notes    []string
	// BandKind is the workload kind the rows' error bands come from
	// (planner.PlanResult.ErrorBandWorkload; "" for all rows').
	BandKind planner.WorkloadKind
}

// CompareInput is one model and workload to run on several devices.
type CompareInput struct {
	// Hardware lists catalog ids; "" stands for this machine.
	Hardware []string
	Model    planner.Model
	Engine   string // "" = the best per device
	Quant    string // "" = the best per device
	// Workload gives prompt and output lengths; Concurrency is the most
	// users to serve.
	Workload planner.Workload
}

// CompareRow is one device's answer: its best configuration for the
// workload.
type CompareRow struct {
	Hardware     string // catalog id ("" = this machine)
	Name         string
	Memory       planner.Bytes
	BandwidthGBs float64
	PriceUSD     float64 // 0 = unknown
	Watts        float64 // 0 = unknown
	Verdict      planner.Verdict
	// Config names the best engine, format and KV type ("vllm awq-int4").
	Config string
	// Users is how many users the best configuration serves at once;
	// Total its output tok/s then. SingleUser is tok/s for one user alone
	// (the device's best configuration for one user, TTFT included): it
	// does not depend on the users asked for.
	Users      int
	SingleUser planner.TokensPerSecond
	Total      planner.TokensPerSecond
	TTFT       planner.Milliseconds
	// PerKiloUSD is total tok/s per $1000 of hardware, PerWatt per watt of
	// TDP (0 = unknown).
	PerKiloUSD float64
	PerWatt    float64
	Source     string
	// Note says why it does not fit or misses the target.
	Note string
}

// Param is one fitted calibration parameter.
type Param struct {
	Name  string
	Value string
	Note  string
}

// CalibrationPoint is one measured quantity and what the model predicted
// for it, in the metric's own unit.
type CalibrationPoint struct {
	Label     string
	Metric    string
	Predicted float64
	Measured  float64
}

// CalibrationView is the result of a calibration run.
type CalibrationView struct {
	Target string // "host" or the server URL
	When   time.Time
	Params []Param
	Points []CalibrationPoint
	// MdAPE is the median absolute percentage error of the predictions
	// against these measurements (0 = none predicted).
	MdAPE float64
	Notes []string
}

// ExportFormat is one way to save a plan.
type ExportFormat struct {
	ID    string // passed to Service.Export
	Label string
	Ext   string // file extension with the dot
}

// ExportFormats are the formats the Export screen offers.
var ExportFormats = []ExportFormat{
	{ID: "toml", Label: "TOML", Ext: ".toml"},
	{ID: "json", Label: "JSON", Ext: ".json"},
	{ID: "sh", Label: "Shell script", Ext: ".sh"},
}
