package planner

import "fmt"

// transformersRules are Hugging Face Transformers' rules
// (PolicyTransformers): a library that loads the whole model and grows
// its KV cache per request; no server, so no launch command.
type transformersRules struct{}

func (transformersRules) supported(Scenario, Backend) *UnsupportedError { return nil }
func (transformersRules) fit(s Scenario, b Backend) FitResult           { return fitTransformers(s, b) }
func (transformersRules) flashAttention(Scenario, Backend) bool         { return true }
func (transformersRules) imageEntrypoint() bool                         { return false }
func (transformersRules) quantizesOnLoad(QuantFamily) bool              { return false }
func (transformersRules) memoryKnob() string                            { return "" }

func (transformersRules) command(in *launchIn, _ *Launch) (server, []string, error) {
	return server{}, nil, fmt.Errorf("no launch command for engine %s (policy %s): %w", in.c.Engine, in.s.Engine.Policy, ErrNoServer)
}

// stepOverheadMs: the eager generate loop, tens of ms on 7B models [U].
func (transformersRules) stepOverheadMs(Backend, string) float64 { return 15 }

// admitOverheadMs: one request at a time; nothing to admit beside it.
func (transformersRules) admitOverheadMs() float64 { return 0 }

// frontEndProcess: generate runs in the caller's process.
func (transformersRules) frontEndProcess(string) bool { return false }

// streamOverheadUs: generate streams nothing to clients.
func (transformersRules) streamOverheadUs(string) float64 { return 0 }

// seqOverheadPriorUs: none: one request at a time.
func (transformersRules) seqOverheadPriorUs() float64 { return 0 }

// schedLimits: one generate call, the batch as given.
func (transformersRules) schedLimits(Scenario) schedLimits {
	return schedLimits{maxSeqs: 1, budget: 1 << 20}
}

func (transformersRules) chunkedPrefill(Scenario) bool { return false }
func (transformersRules) mixedSteps(Scenario) bool     { return false }
func (transformersRules) marlinInt4() bool             { return false }
func (transformersRules) docker() dockerSpec           { return dockerSpec{} }

func (transformersRules) image(EngineRelease, Backend) string { return "" }

func (transformersRules) modelDir() string { return hfCacheDir }

func (transformersRules) multiNode(Engine) MultiNodeMode { return MultiNodeNone }
