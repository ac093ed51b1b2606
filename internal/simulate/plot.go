package simulate

import (
	"fmt"
	"image/color"
	"io"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgsvg"
)

// WritePlot draws the result as two panels side by side, freshness against fetches per day for
// every policy (the cost and what it buys) and freshness over time, and writes it in format "svg"
// or "png".
func (r *Result) WritePlot(w io.Writer, format string) error {
	left, err := r.tradeoff()
	if err != nil {
		return err
	}
	right, err := r.overTime()
	if err != nil {
		return err
	}
	const width, height = 32 * vg.Centimeter, 13 * vg.Centimeter
	var c vg.CanvasWriterTo
	switch strings.ToLower(format) {
	case "svg":
		c = vgsvg.New(width, height)
	case "png":
		c = vgimg.PngCanvas{Canvas: vgimg.NewWith(vgimg.UseWH(width, height), vgimg.UseDPI(110))}
	default:
		return fmt.Errorf("plot format %q: want svg or png", format)
	}
	dc := draw.New(c)
	tiles := draw.Tiles{Rows: 1, Cols: 2, PadX: vg.Centimeter, PadTop: vg.Millimeter * 3, PadBottom: vg.Millimeter * 3,
		PadLeft: vg.Millimeter * 3, PadRight: vg.Millimeter * 3}
	plots := [][]*plot.Plot{{left, right}}
	canvases := plot.Align(plots, tiles, dc)
	left.Draw(canvases[0][0])
	right.Draw(canvases[0][1])
	if _, err := c.WriteTo(w); err != nil {
		return fmt.Errorf("write the %s plot: %w", format, err)
	}
	return nil
}

func (r *Result) title() string {
	return fmt.Sprintf("Freshness over time: %d pages, %d days, budget %d/day", r.Config.Pages, r.Config.Days, r.Config.Budget)
}

// tradeoff is freshness against fetches per day, one labelled point per policy.
func (r *Result) tradeoff() (*plot.Plot, error) {
	p := plot.New()
	p.Title.Text = "Freshness vs fetches per day"
	p.X.Label.Text = "fetches per day"
	p.Y.Label.Text = "freshness (time-average share of current copies)"
	xys := make(plotter.XYs, len(r.Policies))
	labels := make([]string, len(r.Policies))
	for i, pr := range r.Policies {
		xys[i] = plotter.XY{X: pr.FetchesPerDay, Y: pr.Freshness}
		labels[i] = " " + pr.Name
	}
	sc, err := plotter.NewScatter(xys)
	if err != nil {
		return nil, fmt.Errorf("plot the trade-off: %w", err)
	}
	sc.GlyphStyle.Radius = vg.Points(3)
	sc.GlyphStyle.Shape = draw.CircleGlyph{}
	lb, err := plotter.NewLabels(plotter.XYLabels{XYs: xys, Labels: labels})
	if err != nil {
		return nil, fmt.Errorf("plot the trade-off: %w", err)
	}
	for i := range lb.TextStyle {
		lb.TextStyle[i].Font.Size = vg.Points(8)
	}
	p.Add(plotter.NewGrid(), sc, lb)
	p.Y.Min, p.Y.Max = 0, 1
	p.X.Min = 0
	return p, nil
}

// overTime is every policy's daily freshness.
func (r *Result) overTime() (*plot.Plot, error) {
	p := plot.New()
	p.Title.Text = r.title()
	p.Title.TextStyle.Font.Size = vg.Points(9)
	p.X.Label.Text = "day"
	p.Y.Label.Text = "freshness over the day"
	p.Add(plotter.NewGrid())
	for i, pr := range r.Policies {
		xys := make(plotter.XYs, len(pr.DailyFresh))
		for d, f := range pr.DailyFresh {
			xys[d] = plotter.XY{X: float64(d), Y: f}
		}
		l, err := plotter.NewLine(xys)
		if err != nil {
			return nil, fmt.Errorf("plot %s over time: %w", pr.Name, err)
		}
		l.Color = plotutil.Color(i)
		l.Dashes = plotutil.Dashes(i / len(plotutil.DefaultColors))
		l.Width = vg.Points(1.2)
		if pr.Name == "oracle" || pr.Name == "optimal-true" || pr.Name == "everything" {
			l.Width = vg.Points(0.8)
			l.Dashes = []vg.Length{vg.Points(3), vg.Points(2)}
		}
		p.Add(l)
		p.Legend.Add(pr.Name, l)
	}
	p.Legend.Top = false
	p.Legend.Left = false
	p.Legend.TextStyle.Font.Size = vg.Points(8)
	p.Legend.Padding = vg.Points(1)
	p.Y.Min, p.Y.Max = 0, 1
	p.BackgroundColor = color.White
	return p, nil
}
