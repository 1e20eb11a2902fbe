package ui

import (
	"errors"
	"fmt"
	"image"
	"image/color"
	"math"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
)

// chartStyle holds the colours a chart is drawn in, taken from the theme
// at render time so charts follow light and dark mode.
type chartStyle struct {
	fg, grid color.Color
	series   []color.Color
	// dpi is the chart's resolution: 96 at scale 1.
	dpi int
}

// seriesColor returns the i-th series colour.
func (s chartStyle) seriesColor(i int) color.Color {
	if len(s.series) == 0 {
		return color.Black
	}
	return s.series[i%len(s.series)]
}

// curvePoint is one concurrency of a throughput curve.
type curvePoint struct {
	Concurrency int
	Total       float64 // tok/s of all users
	PerUser     float64 // tok/s of one user
	TTFT        float64 // ms
}

// errNoData is returned when a chart has nothing to draw.
var errNoData = errors.New("no data to chart")

// renderPlot draws p into a w × h pixel image with a transparent
// background. gonum/plot panics on some degenerate inputs (a log axis over
// a zero range); those come back as errors.
func renderPlot(p *plot.Plot, w, h int, st chartStyle) (img image.Image, err error) {
	if w <= 0 || h <= 0 {
		return nil, fmt.Errorf("chart size %d×%d", w, h)
	}
	defer func() {
		if r := recover(); r != nil {
			img, err = nil, fmt.Errorf("drawing chart: %v", r)
		}
	}()
	dpi := st.dpi
	if dpi <= 0 {
		dpi = 96
	}
	c := vgimg.NewWith(
		vgimg.UseWH(vg.Length(w)*vg.Inch/vg.Length(dpi), vg.Length(h)*vg.Inch/vg.Length(dpi)),
		vgimg.UseDPI(dpi),
		vgimg.UseBackgroundColor(color.Transparent),
	)
	p.Draw(draw.New(c))
	return c.Image(), nil
}

// newPlot returns a plot styled for the app: theme colours, small fonts,
// a light grid.
func newPlot(title, xLabel, yLabel string, st chartStyle) *plot.Plot {
	p := plot.New()
	p.BackgroundColor = color.Transparent
	p.Title.Text = title
	p.Title.TextStyle.Color = st.fg
	p.Title.TextStyle.Font.Variant = "Sans"
	p.Title.TextStyle.Font.Size = vg.Points(10)
	p.Title.Padding = vg.Points(6)
	for _, a := range []*plot.Axis{&p.X, &p.Y} {
		a.Color = st.grid
		a.LineStyle.Color = st.grid
		a.Label.TextStyle.Color = st.fg
		a.Label.TextStyle.Font.Size = vg.Points(8.5)
		a.Tick.Label.Color = st.fg
		a.Label.TextStyle.Font.Variant = "Sans"
		a.Tick.Label.Font.Variant = "Sans"
		a.Tick.Label.Font.Size = vg.Points(7.5)
		a.Tick.LineStyle.Color = st.grid
	}
	p.X.Label.Text = xLabel
	p.Y.Label.Text = yLabel
	p.Legend.TextStyle.Color = st.fg
	p.Legend.TextStyle.Font.Variant = "Sans"
	p.Legend.TextStyle.Font.Size = vg.Points(8)
	p.Legend.Top = true
	p.Legend.Left = false
	g := plotter.NewGrid()
	g.Vertical.Color = st.grid
	g.Horizontal.Color = st.grid
	g.Vertical.Width = vg.Points(0.4)
	g.Horizontal.Width = vg.Points(0.4)
	p.Add(g)
	return p
}

// pow2Ticks marks powers of two on a log axis (concurrency 1, 2, 4 ...).
type pow2Ticks struct{}

// Ticks returns a labelled tick at every power of two in [lo, hi].
func (pow2Ticks) Ticks(lo, hi float64) []plot.Tick {
	var out []plot.Tick
	for v := 1.0; v <= hi*1.0001; v *= 2 {
		if v >= lo*0.9999 {
			out = append(out, plot.Tick{Value: v, Label: strconv.Itoa(int(v))})
		}
	}
	return out
}

// niceLogTicks labels 1-2-5 steps on a log axis.
type niceLogTicks struct{}

// Ticks returns 1, 2, 5 × 10^k ticks in [lo, hi], labelled.
func (niceLogTicks) Ticks(lo, hi float64) []plot.Tick {
	var out []plot.Tick
	if lo <= 0 || hi <= 0 {
		return out
	}
	for e := math.Floor(math.Log10(lo)); e <= math.Ceil(math.Log10(hi)); e++ {
		for _, m := range []float64{1, 2, 5} {
			v := m * math.Pow(10, e)
			if v >= lo && v <= hi {
				out = append(out, plot.Tick{Value: v, Label: shortNumber(v)})
			}
		}
	}
	if len(out) < 2 {
		out = append(out, plot.Tick{Value: lo, Label: shortNumber(lo)}, plot.Tick{Value: hi, Label: shortNumber(hi)})
	}
	return out
}

// shortNumber formats a tick label: 0.5, 20, 1.5k, 2M.
func shortNumber(v float64) string {
	switch {
	case v >= 1e6:
		return strconv.FormatFloat(v/1e6, 'g', 3, 64) + "M"
	case v >= 1e3:
		return strconv.FormatFloat(v/1e3, 'g', 3, 64) + "k"
	}
	return strconv.FormatFloat(v, 'g', 3, 64)
}

// logRange returns a padded [lo, hi] over the positive values of vs.
func logRange(vs ...[]float64) (lo, hi float64, ok bool) {
	lo, hi = math.Inf(1), math.Inf(-1)
	for _, s := range vs {
		for _, v := range s {
			if v > 0 && !math.IsInf(v, 0) && !math.IsNaN(v) {
				lo, hi = math.Min(lo, v), math.Max(hi, v)
			}
		}
	}
	if math.IsInf(lo, 0) {
		return 0, 0, false
	}
	return lo / 1.4, hi * 1.4, true
}

// legendRoom raises a log axis' top so the legend in the top corner sits
// above the data.
func legendRoom(p *plot.Plot) {
	p.Y.Max = p.Y.Max * math.Pow(p.Y.Max/p.Y.Min, 0.25)
}

// line returns a styled line with point markers.
func line(xys plotter.XYs, c color.Color, dashed bool) (*plotter.Line, *plotter.Scatter, error) {
	l, s, err := plotter.NewLinePoints(xys)
	if err != nil {
		return nil, nil, err
	}
	l.Color = c
	l.Width = vg.Points(1.6)
	if dashed {
		l.Dashes = []vg.Length{vg.Points(4), vg.Points(3)}
	}
	s.Color = c
	s.Radius = vg.Points(2)
	return l, s, nil
}

// positive returns the points with x and y above zero (log axes).
func positive(xys plotter.XYs) plotter.XYs {
	out := xys[:0:0]
	for _, p := range xys {
		if p.X > 0 && p.Y > 0 && !math.IsInf(p.Y, 0) && !math.IsNaN(p.Y) {
			out = append(out, p)
		}
	}
	return out
}

// throughputChart draws total and per-user tok/s against concurrency, both
// axes logarithmic.
func throughputChart(pts []curvePoint, w, h int, st chartStyle) (image.Image, error) {
	var total, user plotter.XYs
	for _, p := range pts {
		total = append(total, plotter.XY{X: float64(p.Concurrency), Y: p.Total})
		user = append(user, plotter.XY{X: float64(p.Concurrency), Y: p.PerUser})
	}
	total, user = positive(total), positive(user)
	if len(total) == 0 {
		return nil, errNoData
	}
	p := newPlot("Throughput vs concurrency", "concurrent users", "tokens/s", st)
	var ys []float64
	for _, s := range []plotter.XYs{total, user} {
		for _, xy := range s {
			ys = append(ys, xy.Y)
		}
	}
	if err := logAxes(p, total, ys); err != nil {
		return nil, err
	}
	legendRoom(p)
	for i, s := range []struct {
		name string
		xys  plotter.XYs
	}{{"total", total}, {"per user", user}} {
		if len(s.xys) == 0 {
			continue
		}
		l, sc, err := line(s.xys, st.seriesColor(i), i == 1)
		if err != nil {
			return nil, err
		}
		p.Add(l, sc)
		p.Legend.Add(s.name, l)
	}
	return renderPlot(p, w, h, st)
}

// ttftChart draws time to first token against concurrency, with the
// target as a dashed line (target ≤ 0: none).
func ttftChart(pts []curvePoint, target float64, w, h int, st chartStyle) (image.Image, error) {
	var xys plotter.XYs
	for _, p := range pts {
		xys = append(xys, plotter.XY{X: float64(p.Concurrency), Y: p.TTFT})
	}
	xys = positive(xys)
	if len(xys) == 0 {
		return nil, errNoData
	}
	p := newPlot("Time to first token", "concurrent users", "ms", st)
	ys := make([]float64, 0, len(xys)+1)
	for _, xy := range xys {
		ys = append(ys, xy.Y)
	}
	if target > 0 {
		ys = append(ys, target)
	}
	if err := logAxes(p, xys, ys); err != nil {
		return nil, err
	}
	legendRoom(p)
	p.Legend.Left = true
	l, sc, err := line(xys, st.seriesColor(1), false)
	if err != nil {
		return nil, err
	}
	p.Add(l, sc)
	p.Legend.Add("TTFT", l)
	if target > 0 {
		t, err := plotter.NewLine(plotter.XYs{{X: p.X.Min, Y: target}, {X: p.X.Max, Y: target}})
		if err != nil {
			return nil, err
		}
		t.Color = st.seriesColor(2)
		t.Width = vg.Points(1.2)
		t.Dashes = []vg.Length{vg.Points(5), vg.Points(3)}
		p.Add(t)
		p.Legend.Add("target", t)
	}
	return renderPlot(p, w, h, st)
}

// logAxes sets log scales: powers of two of concurrency on x, 1-2-5 on y.
func logAxes(p *plot.Plot, xs plotter.XYs, ys []float64) error {
	lo, hi, ok := logRange(ys)
	if !ok {
		return errNoData
	}
	minX, maxX := xs[0].X, xs[0].X
	for _, xy := range xs {
		minX, maxX = math.Min(minX, xy.X), math.Max(maxX, xy.X)
	}
	if maxX <= minX {
		minX, maxX = minX/2, maxX*2
	}
	p.X.Scale, p.X.Tick.Marker = plot.LogScale{}, pow2Ticks{}
	p.X.Min, p.X.Max = minX/1.15, maxX*1.15
	p.Y.Scale, p.Y.Tick.Marker = plot.LogScale{}, niceLogTicks{}
	p.Y.Min, p.Y.Max = lo, hi
	return nil
}

// barChart draws one horizontal bar per name (top to bottom in order).
func barChart(title, unit string, names []string, values []float64, highlight int, w, h int, st chartStyle) (image.Image, error) {
	colors := make([]color.Color, len(names))
	for i := range colors {
		colors[i] = st.seriesColor(0)
		if i == highlight {
			colors[i] = st.seriesColor(1)
		}
	}
	return coloredBarChart(title, unit, names, values, colors, nil, w, h, st)
}

// legendEntry is a colour the legend of a bar chart names.
type legendEntry struct {
	label string
	color color.Color
}

// coloredBarChart is barChart with a colour per bar and a legend of the
// colours used (none when legend is empty). A zero value draws no bar:
// its name stays on the axis.
func coloredBarChart(title, unit string, names []string, values []float64, colors []color.Color, legend []legendEntry, w, h int, st chartStyle) (image.Image, error) {
	if len(names) == 0 || len(names) != len(values) || len(colors) != len(names) {
		return nil, errNoData
	}
	p := newPlot(title, unit, "", st)
	p.Legend.Top = false
	n := len(names)
	// Bars are drawn bottom-up; reverse so the first name is on top.
	rev := make([]string, n)
	for i := range names {
		rev[n-1-i] = names[i]
	}
	plotH := vg.Length(h) * vg.Inch / vg.Length(max(st.dpi, 1))
	bw := plotH * 0.55 / vg.Length(n+1)
	bw = min(bw, vg.Points(22))
	for i := range n {
		vs := make(plotter.Values, n)
		vs[n-1-i] = math.Max(values[i], 0)
		b, err := plotter.NewBarChart(vs, bw)
		if err != nil {
			return nil, err
		}
		b.Horizontal = true
		b.LineStyle.Width = 0
		b.Color = colors[i]
		p.Add(b)
	}
	for _, e := range legend {
		b, err := plotter.NewBarChart(plotter.Values{0}, bw)
		if err != nil {
			return nil, err
		}
		b.LineStyle.Width = 0
		b.Color = e.color
		p.Legend.Add(e.label, b)
	}
	// Bars are sorted longest first, so the bottom right is free.
	p.Legend.Top, p.Legend.Left = false, false
	p.NominalY(rev...)
	p.X.Min = 0
	hi := 0.0
	for _, v := range values {
		hi = math.Max(hi, v)
	}
	if hi <= 0 {
		hi = 1
	}
	p.X.Max = hi * 1.08
	p.Y.Tick.Label.Font.Size = vg.Points(8)
	return renderPlot(p, w, h, st)
}

// scatterChart draws measured (y) against predicted (x) on log axes with
// the line y = x.
func scatterChart(pts []CalibrationPoint, w, h int, st chartStyle) (image.Image, error) {
	var xys plotter.XYs
	for _, c := range pts {
		xys = append(xys, plotter.XY{X: c.Predicted, Y: c.Measured})
	}
	xys = positive(xys)
	if len(xys) == 0 {
		return nil, errNoData
	}
	var all []float64
	for _, xy := range xys {
		all = append(all, xy.X, xy.Y)
	}
	lo, hi, _ := logRange(all)
	p := newPlot("Predicted vs measured", "predicted", "measured", st)
	p.X.Scale, p.Y.Scale = plot.LogScale{}, plot.LogScale{}
	p.X.Tick.Marker, p.Y.Tick.Marker = niceLogTicks{}, niceLogTicks{}
	p.X.Min, p.X.Max, p.Y.Min, p.Y.Max = lo, hi, lo, hi
	id, err := plotter.NewLine(plotter.XYs{{X: lo, Y: lo}, {X: hi, Y: hi}})
	if err != nil {
		return nil, err
	}
	id.Color = st.grid
	id.Width = vg.Points(1)
	id.Dashes = []vg.Length{vg.Points(4), vg.Points(3)}
	sc, err := plotter.NewScatter(xys)
	if err != nil {
		return nil, err
	}
	sc.Color = st.seriesColor(0)
	sc.Radius = vg.Points(3)
	sc.Shape = draw.CircleGlyph{}
	p.Add(id, sc)
	p.Legend.Add("exact", id)
	p.Legend.Add("measurements", sc)
	p.Legend.Left, p.Legend.Top = true, true
	return renderPlot(p, w, h, st)
}
