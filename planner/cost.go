package planner

import (
	"fmt"
	"math"
)

// Cost is what serving a plan costs per day at a price per device-hour.
type Cost struct {
	// USDPerDeviceHour is the price used; Source says where it came from
	// ("given", or the catalog offer with its date and [U] when not
	// verified).
	USDPerDeviceHour float64 `json:"usd_per_device_hour"`
	Source           string  `json:"source"`
	// Devices are billed around the clock: DeviceHoursPerDay = Devices × 24.
	Devices           int     `json:"devices"`
	DeviceHoursPerDay float64 `json:"device_hours_per_day"`
	// Utilization is the share of the fleet's capacity the load uses
	// (1 for a closed loop of users, which keeps the batch full); busy
	// device-hours are DeviceHoursPerDay × Utilization.
	Utilization           float64 `json:"utilization"`
	BusyDeviceHoursPerDay float64 `json:"busy_device_hours_per_day"`
	USDPerDay             float64 `json:"usd_per_day"`
	// OutputTokensPerDay is generated tokens at the plan's throughput;
	// USDPerMillionOutput the day's cost over them (prompt tokens are not
	// priced separately: their prefill time is in the throughput).
	OutputTokensPerDay  float64 `json:"output_tokens_per_day"`
	USDPerMillionOutput float64 `json:"usd_per_million_output_tokens"`
}

// CatalogPrice is the catalog's cloud price of h and a source line, or
// false when it has none.
func CatalogPrice(h Hardware) (float64, string, bool) {
	p := h.CloudPrice
	if p == nil || !(p.USDPerHour > 0) {
		return 0, "", false
	}
	u := ""
	if !p.Verified {
		u = " [U]"
	}
	return p.USDPerHour, fmt.Sprintf("%s, %s, %s%s", p.Offer, p.Date, p.Source, u), true
}

// CostOf prices candidate c at usd per device-hour (source names where
// the price is from). For a rate plan (c.Fleet) the devices are the
// fleet's and the output is rate × gen tokens/s; otherwise one replica at
// its predicted total throughput. False when the price or the throughput
// is not positive.
func CostOf(c Candidate, w Workload, usd float64, source string) (Cost, bool) {
	if !(usd > 0) || math.IsInf(usd, 0) {
		return Cost{}, false
	}
	devs, util, tps := c.ReplicaDevices(), 1.0, float64(c.Pred.TotalTPS)
	if c.Fleet != nil && w.Rate > 0 {
		devs, util = c.Fleet.Devices, c.Fleet.Utilization
		tps = w.Rate * genTokens(w)
	}
	if !(tps > 0) {
		return Cost{}, false
	}
	hours := float64(devs) * 24
	day := hours * usd
	tokens := tps * 86400
	return Cost{USDPerDeviceHour: usd, Source: source, Devices: devs, DeviceHoursPerDay: hours, Utilization: util,
		BusyDeviceHoursPerDay: hours * util, USDPerDay: day, OutputTokensPerDay: tokens,
		USDPerMillionOutput: day / tokens * 1e6}, true
}
