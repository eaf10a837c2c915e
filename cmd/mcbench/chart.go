package main

import (
	"fmt"
	"image"
	"image/color"
	"image/draw"
	"image/png"
	"math"
	"os"
)

// writeChart renders the comparison as a PNG: per case, the Go/Python
// keys/s ratio on a log2 axis (green: target met, red: missed, grey:
// reference rows), and both clients' keys/s on a log10 axis.
func writeChart(path string, rows []Row, m meta) error {
	img := renderChart(rows, m)
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := png.Encode(f, img); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

var (
	colBG     = color.RGBA{255, 255, 255, 255}
	colInk    = color.RGBA{30, 30, 30, 255}
	colGrid   = color.RGBA{225, 225, 225, 255}
	colAxis   = color.RGBA{120, 120, 120, 255}
	colMet    = color.RGBA{46, 160, 67, 255}
	colMissed = color.RGBA{207, 34, 46, 255}
	colRef    = color.RGBA{150, 150, 150, 255}
	colGo     = color.RGBA{0, 125, 156, 255} // Go's blue
	colPy     = color.RGBA{255, 170, 0, 255}
	colStripe = color.RGBA{246, 248, 250, 255}
	colTarget = color.RGBA{90, 90, 90, 255}
)

func fillRect(img *image.RGBA, x0, y0, x1, y1 int, c color.RGBA) {
	if x1 < x0 {
		x0, x1 = x1, x0
	}
	draw.Draw(img, image.Rect(x0, y0, x1, y1), &image.Uniform{c}, image.Point{}, draw.Src)
}

func renderChart(rows []Row, m meta) *image.RGBA {
	const (
		rowH    = 16
		top     = 84
		bottom  = 40
		labelW  = 300
		ratioW  = 380
		gap     = 40
		opsW    = 420
		marginR = 20
	)
	labelMax := 0
	for _, r := range rows {
		labelMax = max(labelMax, textWidth(r.Scenario, 1))
	}
	lw := max(labelW, labelMax+16)
	width := lw + ratioW + gap + opsW + marginR
	height := top + len(rows)*rowH + bottom
	img := image.NewRGBA(image.Rect(0, 0, width, height))
	fillRect(img, 0, 0, width, height, colBG)

	// Ratio axis: log2, from the smallest to the largest power of two
	// around the data and 1.
	lo, hi := 0.5, 2.0
	for _, r := range rows {
		for _, v := range []float64{r.Ratio, r.Target} {
			if v > 0 {
				lo, hi = math.Min(lo, v), math.Max(hi, v)
			}
		}
	}
	l2lo, l2hi := math.Floor(math.Log2(lo)), math.Ceil(math.Log2(hi))
	rx0 := lw
	rx := func(v float64) int {
		return rx0 + int((math.Log2(v)-l2lo)/(l2hi-l2lo)*float64(ratioW))
	}
	// keys/s axis: log10.
	olo, ohi := math.Inf(1), 0.0
	for _, r := range rows {
		for _, v := range []float64{r.GoOpsPerSec, r.PythonOpsPerS} {
			if v > 0 {
				olo, ohi = math.Min(olo, v), math.Max(ohi, v)
			}
		}
	}
	if ohi == 0 {
		olo, ohi = 1, 10
	}
	l10lo, l10hi := math.Floor(math.Log10(olo)), math.Ceil(math.Log10(ohi))
	if l10hi == l10lo {
		l10hi++
	}
	ox0 := lw + ratioW + gap
	ox := func(v float64) int {
		if v <= 0 {
			return ox0
		}
		return ox0 + int((math.Log10(v)-l10lo)/(l10hi-l10lo)*float64(opsW))
	}

	title := "mooncake-go vs upstream Python client: same cluster, same workload"
	drawText(img, 10, 8, title, 2, colInk)
	sub := fmt.Sprintf("%d runs per case and client (alternating): keys/s medians, Go/Python geometric mean of paired runs; %s", m.rounds, m.started)
	if cpu, ok := m.host["cpu"].(string); ok {
		sub += fmt.Sprintf("; %s, %v CPUs", cpu, m.host["cpus"])
	}
	drawText(img, 10, 30, sub, 1, colAxis)
	drawText(img, rx0, 50, "Go/Python keys/s (log scale)", 1, colInk)
	drawText(img, ox0, 50, "keys/s (log scale):", 1, colInk)
	lx := ox0 + textWidth("keys/s (log scale): ", 1)
	fillRect(img, lx, 50, lx+10, 57, colGo)
	drawText(img, lx+14, 50, "Go", 1, colInk)
	lx += 14 + textWidth("Go  ", 1)
	fillRect(img, lx, 50, lx+10, 57, colPy)
	drawText(img, lx+14, 50, "Python", 1, colInk)
	lx = rx0 + textWidth("Go/Python keys/s (log scale)  ", 1)
	for _, k := range []struct {
		c color.RGBA
		s string
	}{{colMet, "target met"}, {colMissed, "missed"}, {colRef, "reference"}} {
		fillRect(img, lx, 50, lx+10, 57, k.c)
		drawText(img, lx+14, 50, k.s, 1, colInk)
		lx += 14 + textWidth(k.s+"  ", 1)
	}

	plotTop, plotBot := top, top+len(rows)*rowH
	for i := range rows {
		if i%2 == 1 {
			fillRect(img, 0, top+i*rowH, width, top+(i+1)*rowH, colStripe)
		}
	}
	// Grid and tick labels.
	for e := l2lo; e <= l2hi; e++ {
		x := rx(math.Exp2(e))
		c := colGrid
		if e == 0 {
			c = colAxis
		}
		fillRect(img, x, plotTop, x+1, plotBot, c)
		lab := fmt.Sprintf("%g×", math.Exp2(e))
		drawText(img, x-textWidth(lab, 1)/2, plotTop-12, lab, 1, colAxis)
		drawText(img, x-textWidth(lab, 1)/2, plotBot+6, lab, 1, colAxis)
	}
	for e := l10lo; e <= l10hi; e++ {
		x := ox(math.Pow(10, e))
		fillRect(img, x, plotTop, x+1, plotBot, colGrid)
		lab := siName(math.Pow(10, e))
		drawText(img, x-textWidth(lab, 1)/2, plotTop-12, lab, 1, colAxis)
		drawText(img, x-textWidth(lab, 1)/2, plotBot+6, lab, 1, colAxis)
	}
	one := rx(1)
	for i, r := range rows {
		y := top + i*rowH
		drawText(img, lw-8-textWidth(r.Scenario, 1), y+4, r.Scenario, 1, colInk)
		if r.Ratio > 0 {
			c := colRef
			if r.Met != nil {
				c = colMet
				if !*r.Met || (r.MemcpyMet != nil && !*r.MemcpyMet) {
					c = colMissed
				}
			}
			x := rx(r.Ratio)
			fillRect(img, min(one, x), y+3, max(one, x)+1, y+rowH-3, c)
			if r.Target > 0 {
				tx := rx(r.Target)
				fillRect(img, tx, y+1, tx+2, y+rowH-1, colTarget)
			}
			lab := fmtRatio(r.Ratio)
			if x >= one {
				drawText(img, min(x+4, rx0+ratioW-textWidth(lab, 1)), y+4, lab, 1, colInk)
			} else {
				drawText(img, max(x-4-textWidth(lab, 1), rx0), y+4, lab, 1, colInk)
			}
		}
		fillRect(img, ox0, y+2, ox(r.GoOpsPerSec), y+7, colGo)
		fillRect(img, ox0, y+8, ox(r.PythonOpsPerS), y+13, colPy)
	}
	drawText(img, 10, height-14, "target marks: the ratio each case must reach (issue 5); large-page rows must also reach 90% of a memcpy of the same bytes.", 1, colAxis)
	return img
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
