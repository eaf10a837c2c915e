package benchreport

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
)

// SummarySchema names the summary file.
const SummarySchema = "mcbench-summary/1"

// Summary is docs/benchmarks.json: everything the table and the chart are
// made of, so that they can be rendered again without the runs.
type Summary struct {
	Schema string `json:"schema"`
	Meta   Meta   `json:"meta"`
	Rows   []Row  `json:"rows"`
}

// WriteSummary writes s as JSON with one row per line: small diffs between
// reports, and the same bytes for the same runs.
func WriteSummary(w io.Writer, meta Meta, rows []Row) error {
	var b bytes.Buffer
	m, err := json.Marshal(meta)
	if err != nil {
		return err
	}
	fmt.Fprintf(&b, "{\"schema\": %q,\n\"meta\": %s,\n\"rows\": [\n", SummarySchema, m)
	for i, r := range rows {
		data, err := json.Marshal(r)
		if err != nil {
			return err
		}
		b.Write(data)
		if i < len(rows)-1 {
			b.WriteByte(',')
		}
		b.WriteByte('\n')
	}
	b.WriteString("]}\n")
	_, err = w.Write(b.Bytes())
	return err
}

// ReadSummary reads what WriteSummary wrote.
func ReadSummary(r io.Reader) (Summary, error) {
	dec := json.NewDecoder(r)
	dec.DisallowUnknownFields()
	var s Summary
	if err := dec.Decode(&s); err != nil {
		return Summary{}, fmt.Errorf("summary: %w", err)
	}
	if s.Schema != SummarySchema {
		return Summary{}, fmt.Errorf("summary schema %q, want %q", s.Schema, SummarySchema)
	}
	return s, nil
}
