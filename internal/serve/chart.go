package serve

import (
	"fmt"
	"math"
	"slices"
	"time"
)

// Chart is a stacked bar chart, laid out here and drawn as inline SVG by the chart template, so
// that pages need no script and no external library.
type Chart struct {
	Label         string // for screen readers
	Width, Height int
	Plot          Rect // the plotting area inside the axes
	Bars          []Bar
	Ticks         []Tick
	XTicks        []XTick // dates under the bars, thinned so that they never overlap
	Legend        []Series
	Empty         bool
}

// XTick is a label under one bar.
type XTick struct {
	X     float64 // the bar's centre
	Y     float64 // the baseline of the label
	Label string
}

// Rect is an area of the chart.
type Rect struct{ X, Y, W, H float64 }

// Bar is one column: its segments stacked from the axis up.
type Bar struct {
	Href  string // where a click leads; "" for none
	Title string // the tooltip
	Segs  []Seg
	Skip  *Rect // a run without a fetch: a short hatched mark on the axis
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
	Date   time.Time // under the bar, when the chart has a date axis; zero: none
	Skip   bool      // nothing happened in this column (a run that skipped the page or site): marked as such
}

// Chart geometry, in SVG user units; the SVG scales to the page width.
const (
	chartLeft   = 44 // room for the tick labels
	chartRight  = 6
	chartTop    = 8
	chartBottom = 20 // room for the date labels
	labelWidth  = 72 // the room one date label needs, with a gap
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
	if len(cols) == 0 {
		c.Empty = true
		return c
	}
	if top <= 0 {
		top = 1 // nothing to stack, but the columns (skips, dates) still say something
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
		if col.Skip {
			b.Skip = &Rect{X: round2(c.Plot.X + float64(i)*step + gap/2), Y: round2(c.Plot.Y + c.Plot.H - 3), W: round2(step - gap), H: 3}
		}
		c.Bars = append(c.Bars, b)
	}
	c.XTicks = dateTicks(cols, c.Plot, step)
	return c
}

// dateTicks labels the bars with their dates, as many as fit without overlapping: every k-th bar,
// counted from the newest (the right), whose label is what a reader looks for first. A label shows
// the day, and the time too when two labelled columns fall on the same day.
func dateTicks(cols []Column, plot Rect, step float64) []XTick {
	n := len(cols)
	if n == 0 || cols[n-1].Date.IsZero() {
		return nil
	}
	every := int(math.Ceil(labelWidth / step))
	every = max(every, 1)
	sameDay := false
	for i := n - 1; i-every >= 0; i -= every {
		a, b := cols[i].Date.UTC(), cols[i-every].Date.UTC()
		if a.Year() == b.Year() && a.YearDay() == b.YearDay() {
			sameDay = true
		}
	}
	layout := "2006-01-02"
	if sameDay {
		layout = "01-02 15:04"
	}
	var ticks []XTick
	for i := n - 1; i >= 0; i -= every {
		if cols[i].Date.IsZero() {
			continue
		}
		x := plot.X + (float64(i)+0.5)*step
		// keep the label inside the chart: centred, unless that would cut it at the left edge
		x = math.Max(x, plot.X+labelWidth/2-4)
		ticks = append(ticks, XTick{X: round2(x), Y: plot.Y + plot.H + 14, Label: cols[i].Date.UTC().Format(layout)})
	}
	slices.Reverse(ticks)
	// two labels may still touch after the left-edge shift: drop the older one
	for i := 0; i+1 < len(ticks); {
		if ticks[i+1].X-ticks[i].X < labelWidth-4 {
			ticks = slices.Delete(ticks, i, i+1)
			continue
		}
		i++
	}
	return ticks
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
