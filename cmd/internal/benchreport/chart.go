package benchreport

import (
	"bytes"
	"fmt"
	"image/color"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	_ "gonum.org/v1/plot/vg/vgimg" // png
	_ "gonum.org/v1/plot/vg/vgsvg" // svg
)

var (
	colInk    = color.RGBA{30, 30, 30, 255}
	colMuted  = color.RGBA{100, 100, 100, 255}
	colMet    = color.RGBA{46, 160, 67, 255}
	colMissed = color.RGBA{207, 34, 46, 255}
	colRef    = color.RGBA{150, 150, 150, 255}
	colGo     = color.RGBA{0, 125, 156, 255} // Go's blue
	colPy     = color.RGBA{255, 170, 0, 255}
	colStripe = color.RGBA{243, 245, 247, 255}
	colTarget = color.RGBA{20, 20, 20, 255}
	colGrid   = color.RGBA{215, 215, 215, 255}
)

const (
	chartRowH    = vg.Length(12) // points per case
	chartRatioW  = vg.Length(390)
	chartOpsW    = vg.Length(390)
	chartGap     = vg.Length(24)
	chartHeader  = vg.Length(70)
	chartFooter  = vg.Length(30)
	chartMargin  = vg.Length(12)
	chartXAxisH  = vg.Length(34) // the x axis, its tick labels and its label
	chartLabelPt = 7.5           // font size of the case names and bar labels
)

// chartFont is the chart's typeface, one of the fonts gonum/plot ships.
var chartFont = font.Font{Typeface: "Liberation", Variant: "Sans"}

func chartStyle(size float64, c color.Color) draw.TextStyle {
	return draw.TextStyle{Color: c, Font: font.From(chartFont, font.Length(size)), Handler: plot.DefaultTextHandler}
}

// WriteChart renders the comparison into path, in the format its extension
// names (.svg or .png): per case, the Go/Python keys/s ratio on a log2 axis
// (green: target met, red: missed, grey: reference rows) with the target
// marked, and both clients' keys/s on a log10 axis.
func WriteChart(path string, rows []Row, m Meta) error {
	w, err := Chart(rows, m, chartFormat(path))
	if err != nil {
		return err
	}
	return writeFile(path, w)
}

// chartFormat is the format path's extension names ("svg", "png").
func chartFormat(path string) string { return strings.TrimPrefix(filepath.Ext(path), ".") }

func writeFile(path string, w io.WriterTo) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if _, err := w.WriteTo(f); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// Chart renders the comparison in format ("svg" or "png").
func Chart(rows []Row, m Meta, format string) (io.WriterTo, error) {
	if len(rows) == 0 {
		return nil, fmt.Errorf("chart: no rows")
	}
	if format != "svg" && format != "png" {
		return nil, fmt.Errorf("chart: format %q, want svg or png", format)
	}
	n := len(rows)
	label := chartStyle(chartLabelPt, colInk)
	label.XAlign, label.YAlign = draw.XRight, draw.YCenter
	var labelW vg.Length
	for _, r := range rows {
		labelW = max(labelW, label.Width(r.Scenario))
	}
	labelW += 8
	width := chartMargin + labelW + chartRatioW + chartGap + chartOpsW + chartMargin
	height := chartHeader + chartRowH*vg.Length(n) + chartXAxisH + chartFooter
	cw, err := draw.NewFormattedCanvas(width, height, format)
	if err != nil {
		return nil, err
	}
	dc := draw.New(cw)
	dc.SetColor(color.White)
	dc.Fill(dc.Rectangle.Path())

	pr, po := ratioPlot(rows), opsPlot(rows)
	body := draw.Crop(dc, chartMargin+labelW, -chartMargin, chartFooter, -chartHeader)
	rc := draw.Crop(body, 0, -(chartGap + chartOpsW), 0, 0)
	oc := draw.Crop(body, chartRatioW+chartGap, 0, 0, 0)
	da := pr.DataCanvas(rc)

	// Stripes across both panels and the names, so a row reads across.
	rowY := func(i int) vg.Length { // the centre of case i, first case on top
		return da.Max.Y - (vg.Length(i)+0.5)*(da.Max.Y-da.Min.Y)/vg.Length(n)
	}
	half := (da.Max.Y - da.Min.Y) / vg.Length(2*n)
	for i, r := range rows {
		y := rowY(i)
		if i%2 == 1 {
			dc.FillPolygon(colStripe, rect(chartMargin, y-half, width-chartMargin, y+half))
		}
		dc.FillText(label, vg.Point{X: chartMargin + labelW - 6, Y: y}, r.Scenario)
	}
	pr.Draw(rc)
	po.Draw(oc)

	// Title, subtitle and the two legends.
	title := chartStyle(14, colInk)
	title.YAlign = draw.YTop
	dc.FillText(title, vg.Point{X: chartMargin, Y: height - 10}, "mooncake-go vs upstream's Python client: same cluster, same workload")
	sub := chartStyle(8.5, colMuted)
	sub.YAlign = draw.YTop
	s := fmt.Sprintf("%d runs per case and client, alternating; keys/s are medians over the runs, Go/Python the geometric mean of the paired per-run ratios. Measured %s",
		m.Runs, m.Started)
	if m.Host.CPU != "" {
		s += fmt.Sprintf(" on %s, %d CPUs", m.Host.CPU, m.Host.CPUs)
	}
	dc.FillText(sub, vg.Point{X: chartMargin, Y: height - 30}, s+".")
	ly := da.Max.Y + 12
	legend(&dc, rc.Min.X, ly, []legendItem{{colMet, "target met", false}, {colMissed, "target missed", false},
		{colRef, "reference (no target)", false}, {colTarget, "the case's target", true}})
	legend(&dc, oc.Min.X, ly, []legendItem{{colGo, "Go", false}, {colPy, "Python", false}})

	foot := chartStyle(8, colMuted)
	foot.YAlign = draw.YBottom
	dc.FillText(foot, vg.Point{X: chartMargin, Y: 10}, "Left: Go/Python keys/s per case, bars from 1×. A large-page row is red also when it moves less than 90% of "+
		"the bytes a plain memcpy of the same buffers moves in the same time (docs/benchmarks.md).")
	if format == "svg" {
		return svgFallbackFonts{cw}, nil
	}
	return cw, nil
}

// svgFallbackFonts names fonts a viewer may have instead of Liberation
// Sans, which the SVG names but does not embed (that would add hundreds of
// kilobytes): Arial and Helvetica have its metrics, so the text still fits
// where it was measured to fit.
type svgFallbackFonts struct{ w io.WriterTo }

func (s svgFallbackFonts) WriteTo(w io.Writer) (int64, error) {
	var b bytes.Buffer
	if _, err := s.w.WriteTo(&b); err != nil {
		return 0, err
	}
	out := bytes.ReplaceAll(b.Bytes(), []byte("font-family:Liberation Sans;"),
		[]byte("font-family:'Liberation Sans',Arial,Helvetica,sans-serif;"))
	n, err := w.Write(out)
	return int64(n), err
}

type legendItem struct {
	c    color.Color
	text string
	tick bool // a target tick rather than a swatch
}

func legend(c *draw.Canvas, x, y vg.Length, items []legendItem) {
	sty := chartStyle(8, colInk)
	sty.YAlign = draw.YCenter
	for _, it := range items {
		if it.tick {
			c.StrokeLine2(draw.LineStyle{Color: it.c, Width: 1.5}, x+4, y-5, x+4, y+5)
		} else {
			c.FillPolygon(it.c, rect(x, y-4, x+9, y+4))
		}
		c.FillText(sty, vg.Point{X: x + 13, Y: y}, it.text)
		x += 13 + sty.Width(it.text) + 14
	}
}

func rect(x0, y0, x1, y1 vg.Length) []vg.Point {
	return []vg.Point{{X: x0, Y: y0}, {X: x1, Y: y0}, {X: x1, Y: y1}, {X: x0, Y: y1}}
}

// basePlot is a panel without a y axis: the names are drawn once, left of
// both panels, and both panels share the rows.
func basePlot(n int, xlabel string) *plot.Plot {
	p := plot.New()
	p.BackgroundColor = nil // the stripes show through
	p.HideY()
	p.Y.Min, p.Y.Max = -0.5, float64(n)-0.5
	p.Y.Padding, p.X.Padding = 0, 0
	p.X.Scale = plot.LogScale{}
	p.X.Label.Text = xlabel
	p.X.Label.TextStyle = chartStyle(9, colInk)
	p.X.Label.TextStyle.XAlign, p.X.Label.TextStyle.YAlign = draw.XCenter, draw.YBottom
	p.X.Tick.Label = chartStyle(8, colMuted)
	p.Title.TextStyle = chartStyle(9, colInk)
	p.X.Tick.Label.XAlign, p.X.Tick.Label.YAlign = draw.XCenter, draw.YTop
	g := plotter.NewGrid()
	g.Horizontal.Color = nil
	g.Vertical = draw.LineStyle{Color: colGrid, Width: 0.5}
	p.Add(g)
	return p
}

func ratioPlot(rows []Row) *plot.Plot {
	lo, hi := 0.5, 2.0
	for _, r := range rows {
		for _, v := range []float64{r.Ratio, r.Target} {
			if v > 0 {
				lo, hi = math.Min(lo, v), math.Max(hi, v)
			}
		}
	}
	l2lo, l2hi := math.Floor(math.Log2(lo)), math.Ceil(math.Log2(hi))
	p := basePlot(len(rows), "Go/Python keys/s (log scale)")
	p.X.Min, p.X.Max = math.Exp2(l2lo), math.Exp2(l2hi)
	var ticks []plot.Tick
	for e := l2lo; e <= l2hi; e++ {
		ticks = append(ticks, plot.Tick{Value: math.Exp2(e), Label: fmt.Sprintf("%g×", math.Exp2(e))})
	}
	p.X.Tick.Marker = plot.ConstantTicks(ticks)
	p.Add(ratioBars(rows))
	return p
}

func opsPlot(rows []Row) *plot.Plot {
	lo, hi := math.Inf(1), 0.0
	for _, r := range rows {
		for _, v := range []float64{r.GoOpsPerSec, r.PythonOpsPerS} {
			if v > 0 {
				lo, hi = math.Min(lo, v), math.Max(hi, v)
			}
		}
	}
	if hi == 0 {
		lo, hi = 1, 10
	}
	l10lo, l10hi := math.Floor(math.Log10(lo)), math.Ceil(math.Log10(hi))
	if l10hi == l10lo {
		l10hi++
	}
	p := basePlot(len(rows), "keys/s per client (log scale)")
	p.X.Min, p.X.Max = math.Pow(10, l10lo), math.Pow(10, l10hi)
	var ticks []plot.Tick
	for e := l10lo; e <= l10hi; e++ {
		v := math.Pow(10, e)
		ticks = append(ticks, plot.Tick{Value: v, Label: siName(v)})
		for k := 2; k < 10 && e < l10hi; k++ {
			ticks = append(ticks, plot.Tick{Value: v * float64(k)})
		}
	}
	p.X.Tick.Marker = plot.ConstantTicks(ticks)
	p.Add(opsBars(rows))
	return p
}

func siName(v float64) string {
	switch {
	case v >= 1e9:
		return fmt.Sprintf("%gG", v/1e9)
	case v >= 1e6:
		return fmt.Sprintf("%gM", v/1e6)
	case v >= 1e3:
		return fmt.Sprintf("%gk", v/1e3)
	}
	return fmt.Sprintf("%g", v)
}

// ratioBars draws each case's Go/Python ratio as a bar from 1×, its value,
// and its target.
type ratioBars []Row

func (rows ratioBars) Plot(c draw.Canvas, p *plot.Plot) {
	trX, trY := p.Transforms(&c)
	n := len(rows)
	half := (trY(1) - trY(0)) * 0.32
	one := trX(1)
	c.StrokeLine2(draw.LineStyle{Color: colMuted, Width: 0.8}, one, c.Min.Y, one, c.Max.Y)
	lab := chartStyle(chartLabelPt, colInk)
	lab.YAlign = draw.YCenter
	for i, r := range rows {
		if r.Ratio <= 0 {
			continue
		}
		y := trY(float64(n - 1 - i))
		col := colRef
		if r.Met != nil {
			col = colMet
			if !*r.Met || (r.MemcpyMet != nil && !*r.MemcpyMet) {
				col = colMissed
			}
		}
		x := trX(r.Ratio)
		c.FillPolygon(col, rect(min(one, x), y-half, max(one, x), y+half))
		if r.Target > 0 {
			tx := trX(r.Target)
			c.StrokeLine2(draw.LineStyle{Color: colTarget, Width: 1.5}, tx, y-half-1.5, tx, y+half+1.5)
		}
		l := lab
		if col == colMissed {
			l.Color = colMissed // a bar too short to see still reads as missed
		}
		if x >= one {
			l.XAlign = draw.XLeft
			x = max(x, trX(max(r.Target, 1))) + 3
		} else {
			l.XAlign = draw.XRight
			x -= 3
		}
		c.FillText(l, vg.Point{X: x, Y: y}, fmtRatio(r.Ratio))
	}
}

// opsBars draws each case's keys/s, Go above Python.
type opsBars []Row

func (rows opsBars) Plot(c draw.Canvas, p *plot.Plot) {
	trX, trY := p.Transforms(&c)
	n := len(rows)
	h := (trY(1) - trY(0)) * 0.32
	for i, r := range rows {
		y := trY(float64(n - 1 - i))
		if r.GoOpsPerSec > 0 {
			c.FillPolygon(colGo, rect(c.Min.X, y, trX(r.GoOpsPerSec), y+h))
		}
		if r.PythonOpsPerS > 0 {
			c.FillPolygon(colPy, rect(c.Min.X, y-h, trX(r.PythonOpsPerS), y))
		}
	}
}
