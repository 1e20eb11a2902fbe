package ui

import (
	"image/color"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/theme"
)

// Theme is Headroom's look: Fyne's default theme with Headroom's accent
// colour, following the system's light or dark setting unless a variant is
// forced.
type Theme struct {
	base    fyne.Theme
	variant fyne.ThemeVariant
	forced  bool
}

// NewTheme returns the theme that follows the system's light or dark
// setting.
func NewTheme() *Theme { return &Theme{base: theme.DefaultTheme()} }

// NewThemeVariant returns the theme fixed to v (theme.VariantLight or
// theme.VariantDark), as screenshots use.
func NewThemeVariant(v fyne.ThemeVariant) *Theme {
	return &Theme{base: theme.DefaultTheme(), variant: v, forced: true}
}

// Colours that are not the theme's own; chosen to read on both light and
// dark backgrounds.
var (
	accentLight = color.NRGBA{R: 0x2f, G: 0x5b, B: 0xd6, A: 0xff}
	accentDark  = color.NRGBA{R: 0x6e, G: 0x95, B: 0xff, A: 0xff}
)

// Color returns the named colour for the variant (or the forced one).
func (t *Theme) Color(n fyne.ThemeColorName, v fyne.ThemeVariant) color.Color {
	if t.forced {
		v = t.variant
	}
	switch n {
	case theme.ColorNamePrimary, theme.ColorNameFocus, theme.ColorNameHyperlink:
		if v == theme.VariantDark {
			return accentDark
		}
		return accentLight
	case theme.ColorNameSelection:
		if v == theme.VariantDark {
			return color.NRGBA{R: 0x6e, G: 0x95, B: 0xff, A: 0x40}
		}
		return color.NRGBA{R: 0x2f, G: 0x5b, B: 0xd6, A: 0x30}
	}
	return t.base.Color(n, v)
}

// Font returns the default theme's font.
func (t *Theme) Font(s fyne.TextStyle) fyne.Resource { return t.base.Font(s) }

// Icon returns the default theme's icon.
func (t *Theme) Icon(n fyne.ThemeIconName) fyne.Resource { return t.base.Icon(n) }

// Size returns the default theme's sizes.
func (t *Theme) Size(n fyne.ThemeSizeName) float32 { return t.base.Size(n) }

// palette holds the fixed series colours of memory bars and charts. They
// are mid-tone so that they read on light and dark backgrounds alike.
var palette = struct {
	weights, kv, overhead, host, series1, series2, series3, good, warn, offload, bad color.NRGBA
}{
	weights:  color.NRGBA{R: 0x3b, G: 0x82, B: 0xf6, A: 0xff}, // blue
	kv:       color.NRGBA{R: 0x8b, G: 0x5c, B: 0xf6, A: 0xff}, // violet
	overhead: color.NRGBA{R: 0xf5, G: 0x9e, B: 0x0b, A: 0xff}, // amber
	host:     color.NRGBA{R: 0x14, G: 0xb8, B: 0xa6, A: 0xff}, // teal
	series1:  color.NRGBA{R: 0x3b, G: 0x82, B: 0xf6, A: 0xff},
	series2:  color.NRGBA{R: 0xf9, G: 0x73, B: 0x16, A: 0xff}, // orange
	series3:  color.NRGBA{R: 0x10, G: 0xb9, B: 0x81, A: 0xff}, // green
	good:     color.NRGBA{R: 0x16, G: 0xa3, B: 0x4a, A: 0xff},
	warn:     color.NRGBA{R: 0xd9, G: 0x77, B: 0x06, A: 0xff},
	offload:  color.NRGBA{R: 0x25, G: 0x63, B: 0xeb, A: 0xff}, // blue
	bad:      color.NRGBA{R: 0xdc, G: 0x26, B: 0x26, A: 0xff},
}
