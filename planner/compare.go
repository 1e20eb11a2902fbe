package planner

import (
	"fmt"
	"math"
)

// CompareRow is one machine of a side-by-side comparison.
type CompareRow struct {
	Hardware Hardware `json:"-"`
	ID       string   `json:"hardware"`
	Devices  int      `json:"devices"`
	Fits     bool     `json:"fits"`
	// Verdict is the best configuration's: Fits, FitsWithLimits (it misses
	// the target, or serves fewer users than asked), FitsWithOffload
	// (weights stream from system RAM), or DoesNotFit.
	Verdict Verdict `json:"verdict"`
	Best    string  `json:"best,omitempty"` // engine + format label
	// SingleUserTPS is decode tok/s for one user with the best config;
	// TotalTPS and MaxUsers are at the SLO.
	SingleUserTPS TokensPerSecond `json:"single_user_tps"`
	TTFT          Milliseconds    `json:"ttft_ms"`
	TotalTPS      TokensPerSecond `json:"total_tps"`
	MaxUsers      int             `json:"max_users"`
	// PerDollar is total tok/s per 1,000 USD of hardware; PerWatt total
	// tok/s per watt of TDP (0 when the catalog lacks price or TDP).
	PerDollar float64 `json:"tps_per_kusd"`
	PerWatt   float64 `json:"tps_per_watt"`
	PriceUSD  float64 `json:"price_usd"`
	Watts     float64 `json:"watts"`
	Why       string  `json:"why,omitempty"`
	Source    string  `json:"source"`
	// Workload is the arrival pattern compared under, as parsed: what
	// MaxUsers counts (users, slots at a rate, sequences at once).
	Workload Pattern `json:"workload"`
	// ErrorBand is the best configuration's (Candidate.ErrorBand), from
	// the held-out errors of ErrorBandWorkload's kind where it has its own
	// (PlanResult.ErrorBandWorkload).
	ErrorBand         map[string]float64 `json:"error_band,omitempty"`
	ErrorBandWorkload WorkloadKind       `json:"error_band_workload,omitempty"`
}

// ErrorBandText says how far the row's figures typically are from
// measurements (BandText); "" for a row that does not fit.
func (r CompareRow) ErrorBandText() string {
	if !r.Fits {
		return ""
	}
	return BandText(r.ErrorBand, r.ErrorBandWorkload)
}

// Compare plans the same request on each machine (hardware × devices),
// machines in parallel on all CPUs.
func Compare(req PlanRequest, machines []Hardware, devices []int) []CompareRow {
	rows := make([]CompareRow, len(machines))
	parallelFor(len(machines), func(i int) {
		r := req
		r.Hardware, r.bestOnly = machines[i], true
		r.UsableMemory, r.HostMemory, r.UsableFor = 0, 0, nil
		if i < len(devices) && devices[i] > 0 {
			r.Devices = devices[i]
		}
		rows[i] = compareOne(r)
	})
	return rows
}

func compareOne(req PlanRequest) CompareRow {
	h := req.Hardware
	n := max(req.Devices, 1)
	row := CompareRow{Hardware: h, ID: h.ID, Devices: n, PriceUSD: h.PriceUSD * float64(n), Watts: h.TDPWatts * float64(n), Verdict: DoesNotFit,
		Workload: req.Workload.Pattern()}
	res := Plan(req)
	best, ok := res.Best()
	if !ok {
		row.Why = closestMiss(req.Catalog, res.Dropped)
		return row
	}
	row.Fits, row.Best, row.Source, row.Verdict = true, best.Label(), best.Source, Fits
	row.ErrorBand, row.ErrorBandWorkload = best.ErrorBand, res.ErrorBandWorkload
	row.SingleUserTPS = best.Curve[0].DecodeTPS
	row.TTFT = best.Pred.TTFT
	if best.MeetsSLO {
		row.TotalTPS, row.MaxUsers = best.Pred.TotalTPS, best.Concurrency
	} else {
		row.Why = best.Why
		if row.Why == "" {
			row.Why = sloMiss(best.Curve[0], req.SLO, "even with one user")
		}
	}
	// Fewer users at once than asked is a limit; a burst whose prompts
	// wait for a slot is not (Workload.RunsAtOnce).
	if !best.MeetsSLO || (req.Workload.Rate == 0 && !req.Workload.RunsAtOnce() && best.Concurrency < req.Workload.Concurrency) {
		row.Verdict = FitsWithLimits
	}
	if f := best.Fit; f.Verdict == FitsWithOffload {
		row.Verdict = FitsWithOffload
		ram := f.Breakdown.HostWeights + f.Breakdown.HostKV + f.Breakdown.HostBuffers
		note := fmt.Sprintf("%s of weights stream from system RAM; needs %s of RAM free", f.OffloadBytes, ram)
		if row.Why != "" {
			note = row.Why + "; " + note
		}
		row.Why = note
	}
	if row.PriceUSD > 0 {
		row.PerDollar = float64(row.TotalTPS) / row.PriceUSD * 1000
	}
	if row.Watts > 0 {
		row.PerWatt = float64(row.TotalTPS) / row.Watts
	}
	return row
}

// closestMiss says why nothing fits by the configuration that came
// closest: the fewest weight bits among those dropped for memory (the
// first dropped reason otherwise), named, so that "bf16 needs 15 GiB" does
// not stand for a machine where even a 4-bit file is too big.
func closestMiss(c *Catalog, dropped []Rejection) string {
	if len(dropped) == 0 {
		return "nothing fits"
	}
	best, bits := dropped[0], math.Inf(1)
	for _, d := range dropped {
		if d.Reason != DropMemory {
			continue
		}
		q, err := c.FindQuant(d.Quant)
		if err != nil {
			continue
		}
		if q.LinearBPW < bits {
			best, bits = d, q.LinearBPW
		}
	}
	return fmt.Sprintf("%s %s: %s", best.Engine, best.Quant, best.Why)
}
