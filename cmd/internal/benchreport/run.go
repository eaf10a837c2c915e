package benchreport

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
)

// Options of one report (mcbench compare).
type Options struct {
	GoFiles, PythonFiles []string // run files, one per run
	CFiles               []string // the C floor's run files (optional), one per run
	Noise                string   // the A/A check's summary (docs/benchmarks-aa.json), shown beside the views' ratios
	Summary              string   // instead of run files: render from this summary (docs/benchmarks.json)
	Out                  string   // write the summary here
	Chart                string   // write the chart here (.svg or .png)
	Markdown             string   // replace the generated section of this Markdown file
	Command              string   // the command that made the runs, quoted in the report
	AA                   bool     // A/A check: the Python files are Go runs too; print their table only
}

// Run makes the report: the table on stdout, and the files o names.
func Run(o Options, stdout io.Writer) error {
	var rows []Row
	var meta Meta
	switch {
	case o.Summary != "":
		if len(o.GoFiles) > 0 || len(o.PythonFiles) > 0 || o.AA {
			return errors.New("a summary replaces the run files (no -go, -python or -aa with -summary)")
		}
		s, err := readSummaryFile(o.Summary)
		if err != nil {
			return err
		}
		rows, meta = s.Rows, s.Meta
		if o.Command != "" {
			meta.Command = o.Command
		}
	case len(o.GoFiles) == 0 || len(o.PythonFiles) == 0:
		return errors.New("compare needs -go and -python run files, or -summary")
	default:
		goRuns, err := LoadRuns(o.GoFiles, "go")
		if err != nil {
			return err
		}
		second := "python"
		if o.AA {
			second = "go"
		}
		pyRuns, err := LoadRuns(o.PythonFiles, second)
		if err != nil {
			return err
		}
		if rows, err = Compare(goRuns, pyRuns); err != nil {
			return err
		}
		if len(o.CFiles) > 0 {
			cRuns, err := LoadRuns(o.CFiles, "c")
			if err != nil {
				return err
			}
			if err := AddFloor(rows, goRuns, pyRuns, cRuns); err != nil {
				return err
			}
		}
		meta = MetaFromRuns(goRuns, pyRuns, o.Command)
		if o.AA {
			// The A/A summary is what bench-compare's views take their
			// noise floor from.
			if o.Chart != "" || o.Markdown != "" {
				return errors.New("-aa prints its table and writes its summary only (no -chart or -md)")
			}
			if o.Out != "" {
				if err := writeSummaryFile(o.Out, meta, rows); err != nil {
					return err
				}
			}
			_, err := io.WriteString(stdout, AATable(rows))
			return err
		}
	}
	if o.Noise != "" {
		s, err := readSummaryFile(o.Noise)
		if err != nil {
			return err
		}
		meta.Noise = map[string]Row{}
		for _, r := range s.Rows {
			meta.Noise[r.Scenario] = r
		}
	}
	table := Markdown(rows, meta)
	if _, err := io.WriteString(stdout, table); err != nil {
		return err
	}
	if o.Out != "" {
		if err := writeSummaryFile(o.Out, meta, rows); err != nil {
			return err
		}
	}
	if o.Chart != "" {
		if err := WriteChart(o.Chart, rows, meta); err != nil {
			return err
		}
	}
	if o.Markdown != "" {
		if err := ReplaceSection(o.Markdown, table); err != nil {
			return err
		}
	}
	return nil
}

func readSummaryFile(path string) (Summary, error) {
	f, err := os.Open(path)
	if err != nil {
		return Summary{}, err
	}
	defer f.Close()
	s, err := ReadSummary(f)
	if err != nil {
		return Summary{}, fmt.Errorf("%s: %w", path, err)
	}
	return s, nil
}

func writeSummaryFile(path string, meta Meta, rows []Row) error {
	var b bytes.Buffer
	if err := WriteSummary(&b, meta, rows); err != nil {
		return err
	}
	return os.WriteFile(path, b.Bytes(), 0o644)
}
