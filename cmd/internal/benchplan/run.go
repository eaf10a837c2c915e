package benchplan

// Schema names the JSON of a run (a Run document, or the header a client
// in serve mode writes first).
const Schema = "mcbench/1"

// Run is one run's JSON document, the same from both clients.
type Run struct {
	Schema   string         `json:"schema"`
	Client   string         `json:"client"` // "go" or "python"
	Engine   string         `json:"engine"`
	Version  string         `json:"version"`
	Host     map[string]any `json:"host"`
	Started  string         `json:"started"`
	Params   map[string]any `json:"params"`
	Results  []Result       `json:"results"`
	Failures []string       `json:"failures,omitempty"`
}

// Result is one measured case of a run.
type Result struct {
	Case
	Requests  int     `json:"requests"`
	Keys      int     `json:"keys"`
	Bytes     int64   `json:"bytes"`
	BusySec   float64 `json:"busy_s"` // with several callers: the measured window (wall time)
	WallSec   float64 `json:"wall_s"`
	OpsPerSec float64 `json:"ops_per_s"` // keys (objects) per second of busy time
	ReqPerSec float64 `json:"req_per_s"`
	GBps      float64 `json:"gbps"` // 1e9 bytes per second of busy time
	MeanUs    float64 `json:"mean_us"`
	P50Us     float64 `json:"p50_us"`
	P99Us     float64 `json:"p99_us"`
	P999Us    float64 `json:"p999_us"`
	Errors    int     `json:"errors"`
	// CPUSec is the client process's CPU time (user + system, getrusage:
	// every thread, the store client's own included) over the measured
	// window, and CPUUsPerOp that per key (object) moved: what the client
	// takes from the service it runs in.
	CPUSec     float64 `json:"cpu_s,omitempty"`
	CPUUsPerOp float64 `json:"cpu_us_per_op,omitempty"`
	// MemcpyGBps, for large-page cases, is a plain copy of the same bytes,
	// timed right after the case's requests so that it sees the same machine
	// conditions: the reference of the "90% of memcpy" target.
	MemcpyGBps float64 `json:"memcpy_gbps,omitempty"`
	// OutsideUs, for HiCache cases, is the mean time per request spent
	// outside the store client's calls (page meta, keys, lists, result
	// checks): what the HiCache layer itself costs.
	OutsideUs float64 `json:"outside_us,omitempty"`
	// The store's combining counters over the measured window, for a
	// combining twin (Case.Combining; mooncake.OpStats), summed over the
	// calls that combine: the single-key calls made, those that crossed
	// into C in one batch with others, the batch crossings that carried
	// them, and the crossings by size (element i: 2^i+1 to 2^(i+1) calls).
	SingleCalls        uint64   `json:"single_calls,omitempty"`
	CombinedCalls      uint64   `json:"combined_calls,omitempty"`
	CombinedBatches    uint64   `json:"combined_batches,omitempty"`
	CombinedBatchSizes []uint64 `json:"combined_batch_sizes,omitempty"`
	// With -own-segment, a sample of the case's objects (PlacedKeys, looked
	// up after the measured requests) and those of them with a replica
	// outside the client's own segment (OffSegmentKeys): objects that move
	// over the network, not by memcpy. The Go client's only.
	PlacedKeys     int `json:"placed_keys,omitempty"`
	OffSegmentKeys int `json:"off_segment_keys,omitempty"`
	// LoopbackBytesPerKey is the host's loopback traffic over the measured
	// window per key (time-based cases; the drive runs one client at a
	// time): RPC only when objects move by memcpy, their bytes too when
	// they move over TCP. The Go client's only.
	LoopbackBytesPerKey float64 `json:"lo_bytes_per_key,omitempty"`
}

// ServeReply is a client's answer to one case name in serve mode (mcbench
// -serve, bench_python.py --serve): the case's results, or why it failed.
type ServeReply struct {
	Results []Result `json:"results"`
	Error   string   `json:"error,omitempty"`
}
