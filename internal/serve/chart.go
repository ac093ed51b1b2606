package serve

import (
	"fmt"
	"math"
)

// Chart is a stacked bar chart, laid out here and drawn as inline SVG by the chart template, so
// that pages need no script and no external library.
type Chart struct {
	Label         string // for screen readers
	Width, Height int
	Plot          Rect // the plotting area inside the axes
	Bars          []Bar
	Ticks         []Tick
	Legend        []Series
	Empty         bool
}

// Rect is an area of the chart.
type Rect struct{ X, Y, W, H float64 }

// Bar is one column: its segments stacked from the axis up.
type Bar struct {
	Href  string // where a click leads; "" for none
	Title string // the tooltip
	Segs  []Seg
}

// Seg is one series' part of a bar.
type Seg struct {
	Rect
	Class string
}

// Tick is a labelled line across the plot.
type Tick struct {
	Y     float64
	Label string
}

// Series is one kind of count in a chart: its legend name and the CSS class that colours it.
type Series struct {
	Name  string
	Class string
}

// Column is the data of one bar.
type Column struct {
	Values []float64 // one per series, stacked in series order
	Href   string
	Title  string
}

// Chart geometry, in SVG user units; the SVG scales to the page width.
const (
	chartLeft   = 44 // room for the tick labels
	chartRight  = 6
	chartTop    = 8
	chartBottom = 6
)

// StackedBars lays out cols as stacked bars over series, scaled so the tallest stack fits; yMax > 0
// fixes the scale instead (a share, say, where 1 is the top). format writes tick labels.
func StackedBars(label string, width, height int, series []Series, cols []Column, yMax float64, format func(float64) string) Chart {
	c := Chart{Label: label, Width: width, Height: height, Legend: series}
	c.Plot = Rect{X: chartLeft, Y: chartTop, W: float64(width - chartLeft - chartRight), H: float64(height - chartTop - chartBottom)}
	top := yMax
	if top <= 0 {
		for _, col := range cols {
			sum := 0.0
			for _, v := range col.Values {
				sum += v
			}
			top = math.Max(top, sum)
		}
	}
	if len(cols) == 0 || top <= 0 {
		c.Empty = true
		return c
	}
	if yMax <= 0 {
		top = niceCeil(top)
	}
	for _, f := range []float64{0, 0.5, 1} {
		c.Ticks = append(c.Ticks, Tick{Y: c.Plot.Y + c.Plot.H*(1-f), Label: format(top * f)})
	}
	step := c.Plot.W / float64(len(cols))
	gap := math.Min(step*0.2, 4)
	for i, col := range cols {
		b := Bar{Href: col.Href, Title: col.Title}
		y := c.Plot.Y + c.Plot.H
		for s, v := range col.Values {
			if v <= 0 || s >= len(series) {
				continue
			}
			h := c.Plot.H * v / top
			y -= h
			b.Segs = append(b.Segs, Seg{Rect: Rect{X: round2(c.Plot.X + float64(i)*step + gap/2), Y: round2(y),
				W: round2(step - gap), H: round2(h)}, Class: series[s].Class})
		}
		c.Bars = append(c.Bars, b)
	}
	return c
}

// niceCeil rounds v up to 1, 2 or 5 times a power of ten, so the axis reads well.
func niceCeil(v float64) float64 {
	p := math.Pow(10, math.Floor(math.Log10(v)))
	for _, m := range []float64{1, 2, 5, 10} {
		if m*p >= v {
			return m * p
		}
	}
	return 10 * p
}

func round2(v float64) float64 { return math.Round(v*100) / 100 }

// count formats a tick of whole numbers.
func count(v float64) string {
	if v >= 10000 {
		return fmt.Sprintf("%.0fk", v/1000)
	}
	return fmt.Sprintf("%.0f", v)
}

// percent formats a tick of shares.
func percent(v float64) string { return fmt.Sprintf("%.0f%%", 100*v) }
