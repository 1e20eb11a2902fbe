package ui

import (
	"testing"

	"fyne.io/fyne/v2/test"

	"github.com/headroom-planner/headroom/planner"
	"github.com/headroom-planner/headroom/profiles"
)

func embeddedCatalog(t *testing.T) *planner.Catalog {
	t.Helper()
	c, probs, err := profiles.Load(profiles.Options{})
	if err != nil || len(probs) > 0 {
		t.Fatal(err, probs)
	}
	return c
}

// A device is listed as its name, memory and list price.
func TestHardwareLabel(t *testing.T) {
	if l := hardwareLabel(planner.Hardware{Name: "X", Memory: 24 * planner.GiB, PriceUSD: 1599}); l != "X · 24.0 GiB · $1,599" {
		t.Errorf("label %q", l)
	}
	if l := hardwareLabel(planner.Hardware{Name: "Y", Memory: 8 * planner.GiB}); l != "Y · 8.0 GiB" {
		t.Errorf("label without a price %q", l)
	}
}

// The Plan screen's device search narrows its select, keeps "This
// machine" and the device already chosen, and an empty search offers all.
func TestHardwarePickerSearch(t *testing.T) {
	test.NewTempApp(t)
	c := embeddedCatalog(t)
	changed := 0
	p := newHardwareSelect(c, func() { changed++ })
	p.setID("nvidia-rtx-4090")
	all := len(p.ids)
	if all != len(c.Hardware)+1 {
		t.Fatalf("%d options for %d devices", all, len(c.Hardware))
	}
	test.Type(p.find, ">=80gb")
	if len(p.ids) >= all || p.ids[0] != "" || p.id() != "nvidia-rtx-4090" {
		t.Fatalf("after >=80gb: %d of %d options, first %q, chosen %q", len(p.ids), all, p.ids[0], p.id())
	}
	for i, id := range p.ids[1:] {
		h, err := c.FindHardware(id)
		if err != nil {
			t.Fatal(err)
		}
		if id != "nvidia-rtx-4090" && h.Memory < planner.Bytes(80*planner.GiB*97/100) {
			t.Errorf("option %d %s has %s", i+1, id, gib(h.Memory))
		}
	}
	if shown := len(p.ids) - 2; shown < 5 || shown >= len(c.Hardware) { // less "This machine" and the 4090 kept
		t.Errorf("%d devices of %d offered for >=80gb", shown, len(c.Hardware))
	}
	p.find.SetText("")
	if len(p.ids) != all {
		t.Errorf("an empty search offers %d of %d", len(p.ids), all)
	}
}
