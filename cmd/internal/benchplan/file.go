package benchplan

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// PlanSchema names the plan file.
const PlanSchema = "mcbench-plan/1"

// Settings say how the cases of a plan are measured. Both clients must use
// the same, so they travel with the plan instead of being parsed twice.
type Settings struct {
	DurationS   float64 `json:"duration_s"`   // measured time of each time-based case
	WarmupS     float64 `json:"warmup_s"`     // unmeasured warm-up of each time-based case
	GenBytes    int64   `json:"gen_bytes"`    // written bytes after which a case's fresh keys are removed
	RWMixRead   int     `json:"rwmixread"`    // mixed_rw: percent of requests that read
	Seed        uint64  `json:"seed"`         // mixed_rw random seed
	Segment     uint64  `json:"segment"`      // global segment size each client mounts
	LocalBuffer uint64  `json:"local_buffer"` // each client's local buffer
	Populate    bool    `json:"populate"`     // pre-fault registered memory
	THP         bool    `json:"thp"`          // transparent huge pages for registered memory
	MemcpyRef   bool    `json:"memcpy_ref"`   // large-page cases also time a plain copy
	Prefault    string  `json:"prefault"`     // on, off or auto (on for a live cluster)
}

// File is a plan file, as `mcbench -list` writes it: one header line
// {"schema", "params", "settings"}, then one Case per line, in run order.
type File struct {
	Params   Params
	Settings Settings
	Cases    []Case
}

type fileHeader struct {
	Schema   string   `json:"schema"`
	Params   Params   `json:"params"`
	Settings Settings `json:"settings"`
}

// Write writes f in the plan file format.
func (f File) Write(w io.Writer) error {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	if err := enc.Encode(fileHeader{PlanSchema, f.Params, f.Settings}); err != nil {
		return err
	}
	for _, c := range f.Cases {
		if err := enc.Encode(c); err != nil {
			return err
		}
	}
	_, err := w.Write(b.Bytes())
	return err
}

// ReadFile reads a plan file. Unknown fields are errors: a plan that this
// build would not run exactly as written is refused rather than
// approximated.
func ReadFile(r io.Reader) (File, error) {
	dec := json.NewDecoder(r)
	dec.DisallowUnknownFields()
	var h fileHeader
	if err := dec.Decode(&h); err != nil {
		return File{}, fmt.Errorf("plan header: %w", err)
	}
	if h.Schema != PlanSchema {
		return File{}, fmt.Errorf("plan schema %q, want %q", h.Schema, PlanSchema)
	}
	f := File{Params: h.Params, Settings: h.Settings}
	seen := map[string]bool{}
	for {
		var c Case
		err := dec.Decode(&c)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return File{}, fmt.Errorf("plan case %d: %w", len(f.Cases)+1, err)
		}
		if c.Name == "" || seen[c.Name] {
			return File{}, fmt.Errorf("plan case %d: empty or repeated name %q", len(f.Cases)+1, c.Name)
		}
		seen[c.Name] = true
		f.Cases = append(f.Cases, c)
	}
	return f, nil
}
