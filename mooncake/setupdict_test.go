package mooncake

import (
	"math"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestConfigFromSetupDict(t *testing.T) {
	base := func(kv ...string) map[string]string {
		d := map[string]string{"local_hostname": "127.0.0.1", "metadata_server": "P2PHANDSHAKE"}
		for i := 0; i+1 < len(kv); i += 2 {
			d[kv[i]] = kv[i+1]
		}
		return d
	}
	cfg, err := ConfigFromSetupDict(base())
	require.NoError(t, err)
	assert.Equal(t, Config{LocalHostname: "127.0.0.1", MetadataServer: "P2PHANDSHAKE", GlobalSegmentSize: 16 << 20,
		LocalBufferSize: 16 << 20, Protocol: "tcp", MasterServerAddress: "127.0.0.1:50051", TenantID: "default",
		ClientHTTPPort: 9300}, cfg, "upstream's defaults")

	cfg, err = ConfigFromSetupDict(base("global_segment_size", "1.5 GB", "local_buffer_size", "64m",
		"protocol", "rdma", "rdma_devices", "mlx5_0,mlx5_1", "master_server_addr", "10.0.0.1:50051",
		"enable_ssd_offload", "True", "ssd_offload_path", "/ssd", "tenant_id", "t1",
		"enable_client_http_server", "on", "client_http_port", " 9400 "))
	require.NoError(t, err)
	assert.Equal(t, Size(3<<29), cfg.GlobalSegmentSize)
	assert.Equal(t, Size(64<<20), cfg.LocalBufferSize)
	assert.Equal(t, "mlx5_0,mlx5_1", cfg.DeviceName)
	assert.Equal(t, "10.0.0.1:50051", cfg.MasterServerAddress)
	assert.True(t, cfg.EnableSSDOffload && cfg.EnableClientHTTPServer)
	assert.Equal(t, 9400, cfg.ClientHTTPPort)
	assert.Equal(t, "t1", cfg.TenantID)

	for _, tc := range []struct {
		name string
		dict map[string]string
	}{
		{"no hostname", map[string]string{"metadata_server": "x"}},
		{"no metadata server", map[string]string{"local_hostname": "x"}},
		{"a typo", base("global_segment_sise", "1gb")},
		{"a Go-only key", base("device_name", "mlx5_0")},
		{"ipc socket", base("ipc_socket_path", "@sock")},
		{"bad size", base("local_buffer_size", "lots")},
		{"bad unit", base("local_buffer_size", "1 PB")},
		{"negative size", base("global_segment_size", "-1")},
		{"bad boolean", base("enable_ssd_offload", "maybe")},
		{"bad port", base("client_http_port", "70000")},
	} {
		_, err := ConfigFromSetupDict(tc.dict)
		assert.ErrorIsf(t, err, ErrInvalidConfig, "%s", tc.name)
	}
}

func TestUpstreamByteSize(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want uint64
		ok   bool
	}{
		{"4096", 4096, true}, {" 16 MB ", 16 << 20, true}, {"1.5g", 3 << 29, true}, {"2T", 2 << 40, true},
		{"10b", 10, true}, {"1KB", 1024, true}, {"0.5k", 512, true}, {"infinite", math.MaxUint64, true},
		{"", 0, false}, {"MB", 0, false}, {"1 XB", 0, false}, {"1e3", 1000, true}, {"inf", 0, false}, {"NaN", 0, false}, {"99999999999 TB", 0, false},
	} {
		got, ok := upstreamByteSize(tc.in)
		assert.Equalf(t, tc.ok, ok, "%q", tc.in)
		if tc.ok {
			assert.Equalf(t, tc.want, got, "%q", tc.in)
		}
	}
}

// Whatever parses is a size a second parse of its decimal form agrees with.
func FuzzUpstreamByteSize(f *testing.F) {
	for _, s := range []string{"16 MB", "1.5g", "infinite", "0", "7 tb", ".5k"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n, ok := upstreamByteSize(s)
		if !ok || n == math.MaxUint64 || n > 1<<53 {
			return
		}
		back, ok := upstreamByteSize(strconv.FormatUint(n, 10))
		require.True(t, ok)
		require.Equal(t, n, back)
	})
}
