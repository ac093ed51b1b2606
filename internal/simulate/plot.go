package simulate

import (
	"fmt"
	"image/color"
	"io"
	"math"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgsvg"
)

// WritePlot draws the result as two panels side by side, freshness against fetches per day for
// every policy (the cost and what it buys) and freshness over time, with one legend beside them,
// and writes it in format "svg" or "png". Each policy has its own colour and marker in both panels,
// so no label is written next to a point, where close policies' labels would overlap.
func (r *Result) WritePlot(w io.Writer, format string) error {
	styles := policyStyles(r.Policies)
	left, err := r.tradeoff(styles)
	if err != nil {
		return err
	}
	right, err := r.overTime(styles)
	if err != nil {
		return err
	}
	const width, height, legendWidth = 34 * vg.Centimeter, 13 * vg.Centimeter, 4 * vg.Centimeter
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
	plots := draw.Crop(dc, 0, -legendWidth, 0, 0)
	tiles := draw.Tiles{Rows: 1, Cols: 2, PadX: vg.Centimeter, PadTop: vg.Millimeter * 3, PadBottom: vg.Millimeter * 3,
		PadLeft: vg.Millimeter * 3, PadRight: vg.Millimeter * 3}
	canvases := plot.Align([][]*plot.Plot{{left, right}}, tiles, plots)
	left.Draw(canvases[0][0])
	right.Draw(canvases[0][1])
	if err := r.legend(styles).draw(draw.Crop(dc, width-legendWidth, 0, 0, 0)); err != nil {
		return err
	}
	if _, err := c.WriteTo(w); err != nil {
		return fmt.Errorf("write the %s plot: %w", format, err)
	}
	return nil
}

func (r *Result) title() string {
	return fmt.Sprintf("Freshness over time: %d pages, %d days, budget %d/day", r.Config.Pages, r.Config.Days, r.Config.Budget)
}

// palette has as many clearly different colours as there are policies (Tableau's ten, then black),
// so that no two policies share one; past it colours repeat with other markers and dashes.
var palette = []color.RGBA{
	{0x1f, 0x77, 0xb4, 0xff}, {0xff, 0x7f, 0x0e, 0xff}, {0x2c, 0xa0, 0x2c, 0xff}, {0xd6, 0x27, 0x28, 0xff},
	{0x94, 0x67, 0xbd, 0xff}, {0x8c, 0x56, 0x4b, 0xff}, {0xe3, 0x77, 0xc2, 0xff}, {0x7f, 0x7f, 0x7f, 0xff},
	{0xbc, 0xbd, 0x22, 0xff}, {0x17, 0xbe, 0xcf, 0xff}, {0x00, 0x00, 0x00, 0xff},
}

var glyphs = []draw.GlyphDrawer{draw.CircleGlyph{}, draw.SquareGlyph{}, draw.TriangleGlyph{}, draw.PyramidGlyph{},
	draw.RingGlyph{}, draw.BoxGlyph{}, draw.CrossGlyph{}, draw.PlusGlyph{}}

// style is how one policy is drawn in both panels.
type style struct {
	name   string
	color  color.Color
	glyph  draw.GlyphDrawer
	dashes []vg.Length
	width  vg.Length
}

// baselines are the reference policies (a perfect or a full crawl), drawn thin and dashed.
func baseline(name string) bool {
	return name == "oracle" || name == "optimal-true" || name == "everything"
}

func policyStyles(ps []PolicyResult) []style {
	out := make([]style, len(ps))
	for i, p := range ps {
		s := style{name: p.Name, color: palette[i%len(palette)], glyph: glyphs[i%len(glyphs)], width: vg.Points(1.4)}
		if round := i / len(palette); round > 0 {
			s.dashes = []vg.Length{vg.Points(float64(2 + 2*round)), vg.Points(2)}
		}
		if baseline(p.Name) {
			s.width, s.dashes = vg.Points(1), []vg.Length{vg.Points(4), vg.Points(2)}
		}
		out[i] = s
	}
	return out
}

// tradeoff is freshness against fetches per day, one marker per policy.
func (r *Result) tradeoff(styles []style) (*plot.Plot, error) {
	p := plot.New()
	p.Title.Text = "Freshness vs fetches per day"
	p.X.Label.Text = "fetches per day"
	p.Y.Label.Text = "freshness (time-average share of current copies)"
	p.Add(plotter.NewGrid())
	maxX := 0.0
	for i, pr := range r.Policies {
		sc, err := plotter.NewScatter(plotter.XYs{{X: pr.FetchesPerDay, Y: pr.Freshness}})
		if err != nil {
			return nil, fmt.Errorf("plot the trade-off of %s: %w", pr.Name, err)
		}
		sc.GlyphStyle = draw.GlyphStyle{Color: styles[i].color, Radius: vg.Points(4), Shape: styles[i].glyph}
		p.Add(sc)
		maxX = math.Max(maxX, pr.FetchesPerDay)
	}
	p.X.Min, p.X.Max = 0, math.Max(niceCeil(maxX*1.05), 1)
	p.Y.Min, p.Y.Max = 0, 1
	p.X.Tick.Marker = niceTicks{format: thousands}
	p.Y.Tick.Marker = niceTicks{format: percent}
	return p, nil
}

// overTime is every policy's daily freshness.
func (r *Result) overTime(styles []style) (*plot.Plot, error) {
	p := plot.New()
	p.Title.Text = r.title()
	p.Title.TextStyle.Font.Size = vg.Points(9)
	p.X.Label.Text = "day"
	p.Y.Label.Text = "freshness over the day"
	p.Add(plotter.NewGrid())
	days := 1
	for i, pr := range r.Policies {
		xys := make(plotter.XYs, len(pr.DailyFresh))
		for d, f := range pr.DailyFresh {
			xys[d] = plotter.XY{X: float64(d), Y: f}
		}
		days = max(days, len(pr.DailyFresh))
		l, err := plotter.NewLine(xys)
		if err != nil {
			return nil, fmt.Errorf("plot %s over time: %w", pr.Name, err)
		}
		l.Color, l.Width, l.Dashes = styles[i].color, styles[i].width, styles[i].dashes
		p.Add(l)
	}
	p.X.Min, p.X.Max = 0, float64(max(days-1, 1))
	p.Y.Min, p.Y.Max = 0, 1
	p.X.Tick.Marker = niceTicks{format: whole}
	p.Y.Tick.Marker = niceTicks{format: percent}
	p.BackgroundColor = color.White
	return p, nil
}

// legendBox is the one legend of both panels: each policy's marker and line.
type legendBox struct{ l plot.Legend }

func (r *Result) legend(styles []style) legendBox {
	l := plot.NewLegend()
	l.Top, l.Left = true, true
	l.TextStyle.Font.Size = vg.Points(9)
	l.Padding = vg.Points(3)
	l.ThumbnailWidth = vg.Points(22)
	for _, s := range styles {
		line := &plotter.Line{LineStyle: draw.LineStyle{Color: s.color, Width: s.width, Dashes: s.dashes}}
		mark := &plotter.Scatter{GlyphStyle: draw.GlyphStyle{Color: s.color, Radius: vg.Points(3.5), Shape: s.glyph}}
		l.Add(s.name, line, mark)
	}
	return legendBox{l}
}

func (b legendBox) draw(c draw.Canvas) error {
	c = draw.Crop(c, vg.Millimeter*2, 0, 0, -vg.Centimeter)
	b.l.Draw(c)
	return nil
}

// niceTicks puts about five labelled ticks at round values (1, 2 or 5 times a power of ten), with
// unlabelled ones between, and writes the labels with format.
type niceTicks struct{ format func(float64) string }

func (t niceTicks) Ticks(lo, hi float64) []plot.Tick {
	if !(hi > lo) {
		return []plot.Tick{{Value: lo, Label: t.format(lo)}}
	}
	step := niceStep((hi - lo) / 5)
	var ticks []plot.Tick
	start := math.Ceil(lo/step-1e-9) * step
	for v := start; v <= hi+step*1e-9; v += step {
		v = math.Round(v/step) * step // no drift: 0.30000000000000004 is 0.3
		if v == 0 {
			v = 0 // not -0, which prints as "-0"
		}
		ticks = append(ticks, plot.Tick{Value: v, Label: t.format(v)})
		if mid := v + step/2; mid < hi {
			ticks = append(ticks, plot.Tick{Value: mid})
		}
	}
	return ticks
}

// niceStep rounds v up to 1, 2 or 5 times a power of ten.
func niceStep(v float64) float64 {
	p := math.Pow(10, math.Floor(math.Log10(v)))
	for _, m := range []float64{1, 2, 5} {
		if m*p >= v*0.999 {
			return m * p
		}
	}
	return 10 * p
}

// niceCeil rounds v up to a multiple of its nice step.
func niceCeil(v float64) float64 {
	if v <= 0 {
		return 0
	}
	s := niceStep(v / 5)
	return math.Ceil(v/s) * s
}

func percent(v float64) string { return fmt.Sprintf("%.0f%%", 100*v) }

func whole(v float64) string { return fmt.Sprintf("%.0f", v) }

// thousands writes a whole number with thousands separators: 12,500.
func thousands(v float64) string {
	s := fmt.Sprintf("%.0f", math.Abs(v))
	var b strings.Builder
	if v < 0 {
		b.WriteByte('-')
	}
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}
