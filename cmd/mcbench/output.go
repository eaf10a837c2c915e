package main

import (
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/mooncake-go/mooncake-go/cmd/internal/benchreport"
)

// writeTable prints results for people.
func writeTable(w io.Writer, results []Result) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "case\tkeys/s\treq/s\tGB/s\tp50 µs\tp99 µs\tp999 µs\terrors\t")
	for _, r := range results {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%.3f\t%s\t%s\t%s\t%d\t\n", r.Name, benchreport.Num(r.OpsPerSec), benchreport.Num(r.ReqPerSec), r.GBps,
			benchreport.Num(r.P50Us), benchreport.Num(r.P99Us), benchreport.Num(r.P999Us), r.Errors)
	}
	tw.Flush()
}

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

// progress draws "[ 3/64] name ######.... 1.2s" on one line of stderr,
// redrawn at most ten times a second, when enabled.
type progress struct {
	w       io.Writer
	on      bool
	total   int
	mu      sync.Mutex
	idx     int
	name    string
	frac    float64
	started time.Time
	last    time.Time
	drawn   bool
}

func newProgress(w io.Writer, on bool, total int) *progress {
	return &progress{w: w, on: on, total: total, started: time.Now()}
}

func (p *progress) begin(idx int, name string) {
	if !p.on {
		return
	}
	p.mu.Lock()
	p.idx, p.name, p.frac = idx, name, 0
	p.mu.Unlock()
	p.draw(true)
}

func (p *progress) fraction(f float64) {
	if !p.on {
		return
	}
	p.mu.Lock()
	p.frac = min(max(f, 0), 1)
	p.mu.Unlock()
	p.draw(false)
}

func (p *progress) draw(force bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	now := time.Now()
	if !force && now.Sub(p.last) < 100*time.Millisecond {
		return
	}
	p.last = now
	const width = 24
	n := int(p.frac * width)
	bar := strings.Repeat("#", n) + strings.Repeat(".", width-n)
	name := p.name
	if len(name) > 44 {
		name = name[:44]
	}
	fmt.Fprintf(p.w, "\r\033[K[%*d/%d] %-44s %s %5.0fs", len(fmt.Sprint(p.total)), p.idx+1, p.total, name, bar,
		now.Sub(p.started).Seconds())
	p.drawn = true
}

func (p *progress) stop() {
	if p == nil || !p.on {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.drawn {
		fmt.Fprint(p.w, "\r\033[K")
		p.drawn = false
	}
}

// note writes a line of its own to the progress writer (stderr), clearing
// the bar first when one is drawn.
func (p *progress) note(line string) {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.drawn {
		fmt.Fprint(p.w, "\r\033[K")
		p.drawn = false
	}
	fmt.Fprintln(p.w, line)
}
