package ui

import (
	"image/color"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/layout"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"github.com/headroom-planner/headroom/planner"
)

// memSegment is one coloured part of a memory bar.
type memSegment struct {
	label string
	bytes planner.Bytes
	color color.Color
}

// memBar is a horizontal bar of Total bytes split into coloured segments;
// what the segments leave is drawn as the empty track ("free"). With a
// legend it lists each segment and its size below the bar.
type memBar struct {
	widget.BaseWidget

	total     planner.Bytes
	segs      []memSegment
	height    float32
	legend    bool
	freeLabel string
}

// newMemBar returns an empty bar height points tall.
func newMemBar(height float32, legend bool) *memBar {
	b := &memBar{height: height, legend: legend, freeLabel: "Free"}
	b.ExtendBaseWidget(b)
	return b
}

// set replaces the bar's contents. Segments of zero bytes are dropped;
// a total of zero gives an empty track.
func (b *memBar) set(total planner.Bytes, segs []memSegment) {
	b.total = total
	b.segs = b.segs[:0]
	for _, s := range segs {
		if s.bytes > 0 {
			b.segs = append(b.segs, s)
		}
	}
	b.Refresh()
}

// free is what the segments leave of the total (never negative).
func (b *memBar) free() planner.Bytes {
	f := b.total
	for _, s := range b.segs {
		f -= s.bytes
	}
	return max(f, 0)
}

// CreateRenderer builds the bar's canvas objects.
func (b *memBar) CreateRenderer() fyne.WidgetRenderer {
	r := &memBarRenderer{bar: b, track: canvas.NewRectangle(color.Transparent)}
	r.legendBox = container.New(layout.NewRowWrapLayoutWithCustomPadding(theme.Padding()*3, theme.Padding()))
	r.Refresh()
	return r
}

type memBarRenderer struct {
	bar       *memBar
	track     *canvas.Rectangle
	rects     []*canvas.Rectangle
	legendBox *fyne.Container
	objects   []fyne.CanvasObject
}

func (r *memBarRenderer) Destroy() {}

func (r *memBarRenderer) Objects() []fyne.CanvasObject { return r.objects }

func (r *memBarRenderer) MinSize() fyne.Size {
	s := fyne.NewSize(120, r.bar.height)
	if r.bar.legend {
		l := r.legendBox.MinSize()
		s.Height += theme.Padding() + l.Height
		s.Width = max(s.Width, l.Width)
	}
	return s
}

func (r *memBarRenderer) Layout(size fyne.Size) {
	h := r.bar.height
	r.track.Resize(fyne.NewSize(size.Width, h))
	r.track.Move(fyne.NewPos(0, 0))
	x := float32(0)
	total := float64(r.bar.total)
	for i, s := range r.bar.segs {
		w := float32(0)
		if total > 0 {
			w = float32(float64(s.bytes) / total * float64(size.Width))
		}
		w = min(w, size.Width-x)
		r.rects[i].Move(fyne.NewPos(x, 0))
		r.rects[i].Resize(fyne.NewSize(max(w, 0), h))
		x += w
	}
	if r.bar.legend {
		r.legendBox.Move(fyne.NewPos(0, h+theme.Padding()))
		r.legendBox.Resize(fyne.NewSize(size.Width, r.legendBox.MinSize().Height))
	}
}

func (r *memBarRenderer) Refresh() {
	rad := theme.InputRadiusSize()
	r.track.FillColor = theme.Color(theme.ColorNameInputBackground)
	r.track.StrokeColor = theme.Color(theme.ColorNameInputBorder)
	r.track.StrokeWidth = 1
	r.track.CornerRadius = rad
	for len(r.rects) < len(r.bar.segs) {
		r.rects = append(r.rects, canvas.NewRectangle(color.Transparent))
	}
	r.rects = r.rects[:len(r.bar.segs)]
	n := len(r.rects)
	for i, s := range r.bar.segs {
		rc := r.rects[i]
		rc.FillColor = s.color
		rc.TopLeftCornerRadius, rc.BottomLeftCornerRadius = 0, 0
		rc.TopRightCornerRadius, rc.BottomRightCornerRadius = 0, 0
		if i == 0 {
			rc.TopLeftCornerRadius, rc.BottomLeftCornerRadius = rad, rad
		}
		if i == n-1 && r.bar.free() == 0 {
			rc.TopRightCornerRadius, rc.BottomRightCornerRadius = rad, rad
		}
	}
	r.objects = r.objects[:0]
	r.objects = append(r.objects, r.track)
	for _, rc := range r.rects {
		r.objects = append(r.objects, rc)
	}
	if r.bar.legend {
		r.legendBox.Objects = r.legendItems()
		r.legendBox.Refresh()
		r.objects = append(r.objects, r.legendBox)
	}
	r.Layout(r.bar.Size())
	canvas.Refresh(r.bar)
}

// legendItems is one swatch and label per segment, then the free part.
func (r *memBarRenderer) legendItems() []fyne.CanvasObject {
	var out []fyne.CanvasObject
	for _, s := range r.bar.segs {
		out = append(out, legendItem(s.color, s.label+"  "+gib(s.bytes)))
	}
	if r.bar.free() > 0 {
		out = append(out, legendItem(theme.Color(theme.ColorNameInputBackground), r.bar.freeLabel+"  "+gib(r.bar.free())))
	}
	return out
}

// legendItem is a small square swatch followed by text.
func legendItem(c color.Color, text string) fyne.CanvasObject {
	sw := canvas.NewRectangle(c)
	sw.StrokeColor = theme.Color(theme.ColorNameInputBorder)
	sw.StrokeWidth = 1
	sw.CornerRadius = 2
	sw.SetMinSize(fyne.NewSize(12, 12))
	return container.NewHBox(container.NewCenter(sw), widget.NewLabel(text))
}
