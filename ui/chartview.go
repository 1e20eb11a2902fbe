package ui

import (
	"image"
	"image/color"
	"math"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"
)

// chartFunc draws a chart at w × h pixels in style st.
type chartFunc func(w, h int, st chartStyle) (image.Image, error)

// chartView shows a gonum/plot chart, redrawn at the size it is given, or
// a line of text when there is nothing to chart.
type chartView struct {
	widget.BaseWidget

	draw    chartFunc
	empty   string
	minSize fyne.Size

	raster *canvas.Raster
	box    fyne.CanvasObject
	msg    *widget.Label

	// cache of the last image, keyed by pixel size and content version
	version          int
	cacheW, cacheH   int
	cacheV           int
	cacheImg         image.Image
	cacheErr         error
	cacheThemeFG     color.Color
	lastW, lastH     int // last drawn size, for tests
	renders, failure int
}

// newChartView returns an empty chart that shows empty until set.
func newChartView(empty string, minSize fyne.Size) *chartView {
	c := &chartView{empty: empty, minSize: minSize}
	c.raster = canvas.NewRaster(c.generate)
	c.raster.ScaleMode = canvas.ImageScaleSmooth
	c.box, c.msg = emptyState(empty)
	c.ExtendBaseWidget(c)
	return c
}

// set replaces the chart (nil = show the empty message).
func (c *chartView) set(f chartFunc) {
	c.draw = f
	c.version++
	c.updateMessage()
	c.raster.Refresh()
	c.Refresh()
}

func (c *chartView) updateMessage() {
	if c.draw == nil {
		c.msg.SetText(c.empty)
		c.box.Show()
		return
	}
	c.box.Hide()
}

// currentStyle reads the chart colours from the theme.
func currentStyle(dpi int) chartStyle {
	fg := theme.Color(theme.ColorNameForeground)
	r, g, b, _ := fg.RGBA()
	grid := color.NRGBA{R: uint8(r >> 8), G: uint8(g >> 8), B: uint8(b >> 8), A: 0x40}
	return chartStyle{
		fg: fg, grid: grid, dpi: dpi,
		series: []color.Color{palette.series1, palette.series2, palette.series3},
	}
}

// generate is the raster's callback: it draws at the raster's pixel size.
func (c *chartView) generate(w, h int) image.Image {
	if c.draw == nil || w <= 1 || h <= 1 {
		return image.NewNRGBA(image.Rect(0, 0, 1, 1))
	}
	fg := theme.Color(theme.ColorNameForeground)
	if c.cacheImg != nil && c.cacheW == w && c.cacheH == h && c.cacheV == c.version && sameColor(fg, c.cacheThemeFG) {
		return c.cacheImg
	}
	scale := float64(w) / math.Max(float64(c.raster.Size().Width), 1)
	if scale <= 0 || math.IsInf(scale, 0) || math.IsNaN(scale) {
		scale = 1
	}
	dpi := int(math.Round(96 * scale))
	img, err := c.draw(w, h, currentStyle(dpi))
	c.renders++
	c.lastW, c.lastH = w, h
	c.cacheW, c.cacheH, c.cacheV, c.cacheThemeFG = w, h, c.version, fg
	c.cacheImg, c.cacheErr = img, err
	if err != nil || img == nil {
		c.failure++
		c.cacheImg = image.NewNRGBA(image.Rect(0, 0, 1, 1))
		if err != errNoData {
			c.cacheErr = err
		}
	}
	return c.cacheImg
}

func sameColor(a, b color.Color) bool {
	if a == nil || b == nil {
		return a == b
	}
	r1, g1, b1, a1 := a.RGBA()
	r2, g2, b2, a2 := b.RGBA()
	return r1 == r2 && g1 == g2 && b1 == b2 && a1 == a2
}

// MinSize is the size the chart asks for.
func (c *chartView) MinSize() fyne.Size {
	c.ExtendBaseWidget(c)
	return c.minSize.Max(c.BaseWidget.MinSize())
}

// CreateRenderer stacks the raster and the empty-state message.
func (c *chartView) CreateRenderer() fyne.WidgetRenderer {
	c.updateMessage()
	return widget.NewSimpleRenderer(container.NewStack(c.raster, c.box))
}
