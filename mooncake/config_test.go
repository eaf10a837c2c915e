package mooncake

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseSize(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want Size
		err  bool
	}{
		{"0", 0, false},
		{"4294967296", 4 << 30, false},
		{"4gb", 4 << 30, false},
		{" 4 GB ", 4 << 30, false},
		{"4GiB", 4 << 30, false},
		{"4g", 4 << 30, false},
		{"512mb", 512 << 20, false},
		{"16MiB", 16 << 20, false},
		{"64kb", 64 << 10, false},
		{"1t", 1 << 40, false},
		{"100b", 100, false},
		{"", 0, true},
		{"gb", 0, true},
		{"4.5gb", 0, true},
		{"-1", 0, true},
		{"-4gb", 0, true},
		{"4xb", 0, true},
		{"4 g b", 0, true},
		{"99999999999999999999", 0, true},
		{"17179869184tb", 0, true},
	} {
		got, err := ParseSize(tc.in)
		if tc.err {
			assert.ErrorIsf(t, err, ErrInvalidSize, "ParseSize(%q) = %d", tc.in, got)
			continue
		}
		require.NoErrorf(t, err, "ParseSize(%q)", tc.in)
		assert.Equalf(t, tc.want, got, "ParseSize(%q)", tc.in)
	}
}

func TestSizeString(t *testing.T) {
	assert.Equal(t, "4gb", Size(4<<30).String())
	assert.Equal(t, "16mb", Size(16<<20).String())
	assert.Equal(t, "1025", Size(1025).String())
	assert.Equal(t, "0", Size(0).String())
	for _, z := range []Size{0, 1, 1 << 10, 3 << 20, 5 << 40, 12345} {
		back, err := ParseSize(z.String())
		require.NoError(t, err)
		assert.Equal(t, z, back)
	}
}

func FuzzParseSize(f *testing.F) {
	for _, s := range []string{"4gb", "512 MiB", "0", "1t", "-1", "4.5gb", "99999999999999999999tb"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		z, err := ParseSize(s)
		if err != nil {
			return
		}
		back, err := ParseSize(z.String())
		if err != nil || back != z {
			t.Fatalf("ParseSize(%q) = %d, String %q reparses to %d, %v", s, z, z.String(), back, err)
		}
	})
}

func TestParseConfig(t *testing.T) {
	cfg, err := ParseConfig([]byte(`{
		"local_hostname": "10.0.0.5",
		"metadata_server": "http://10.0.0.1:8080/metadata",
		"global_segment_size": "16gb",
		"local_buffer_size": 33554432,
		"protocol": "tcp",
		"device_name": "mlx5_0",
		"master_server_address": "10.0.0.1:50051",
		"master_metrics_port": 9003,
		"check_server": false
	}`))
	require.NoError(t, err)
	assert.Equal(t, Config{
		LocalHostname:       "10.0.0.5",
		MetadataServer:      "http://10.0.0.1:8080/metadata",
		GlobalSegmentSize:   16 << 30,
		LocalBufferSize:     32 << 20,
		Protocol:            "tcp",
		DeviceName:          "mlx5_0",
		MasterServerAddress: "10.0.0.1:50051",
	}, cfg)

	cfg, err = ParseConfig([]byte(`{"master_server_address": "m:1"}`))
	require.NoError(t, err)
	want := DefaultConfig()
	want.MasterServerAddress = "m:1"
	assert.Equal(t, want, cfg, "missing fields take defaults")

	for _, bad := range []string{
		`{"global_segment_size": "4.5gb"}`,
		`{"global_segment_size": -1}`,
		`{"global_segment_size": true}`,
		`{"protocol": 7}`,
		`not json`,
	} {
		_, err := ParseConfig([]byte(bad))
		assert.Errorf(t, err, "ParseConfig(%s)", bad)
	}
}

func TestLoadConfigFile(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "mooncake.json")
	require.NoError(t, os.WriteFile(p, []byte(`{"master_server_address":"127.0.0.1:50051","global_segment_size":"1gb"}`), 0o600))
	cfg, err := LoadConfigFile(p)
	require.NoError(t, err)
	assert.Equal(t, Size(1<<30), cfg.GlobalSegmentSize)
	_, err = LoadConfigFile(filepath.Join(dir, "missing.json"))
	require.Error(t, err)
	require.NoError(t, os.WriteFile(p, []byte(`{"global_segment_size":"lots"}`), 0o600))
	_, err = LoadConfigFile(p)
	require.ErrorContains(t, err, p)
	require.ErrorContains(t, err, "lots")
}

func TestConfigFromEnv(t *testing.T) {
	env := func(m map[string]string) func(string) (string, bool) {
		return func(k string) (string, bool) { v, ok := m[k]; return v, ok }
	}
	cfg, err := configFromLookup(env(map[string]string{
		EnvMaster:            "127.0.0.1:50051",
		EnvMetadataServer:    "http://127.0.0.1:8080/metadata",
		EnvGlobalSegmentSize: "8gb",
		EnvLocalBufferSize:   "67108864",
		EnvProtocol:          "tcp",
		EnvDevice:            "",
		EnvLegacyHostname:    "legacy-host",
	}))
	require.NoError(t, err)
	assert.Equal(t, Config{
		LocalHostname:       "legacy-host",
		MetadataServer:      "http://127.0.0.1:8080/metadata",
		GlobalSegmentSize:   8 << 30,
		LocalBufferSize:     64 << 20,
		Protocol:            "tcp",
		MasterServerAddress: "127.0.0.1:50051",
	}, cfg)

	cfg, err = configFromLookup(env(map[string]string{EnvMaster: "m:1", EnvLocalHostname: "new", EnvLegacyHostname: "old"}))
	require.NoError(t, err)
	assert.Equal(t, "new", cfg.LocalHostname, "MOONCAKE_LOCAL_HOSTNAME wins over LOCAL_HOSTNAME")
	assert.Equal(t, DefaultGlobalSegmentSize, cfg.GlobalSegmentSize)

	_, err = configFromLookup(env(map[string]string{}))
	require.ErrorContains(t, err, EnvMaster)
	_, err = configFromLookup(env(map[string]string{EnvMaster: "m:1", EnvGlobalSegmentSize: "4.5gb"}))
	require.ErrorContains(t, err, EnvGlobalSegmentSize)

	p := filepath.Join(t.TempDir(), "c.json")
	require.NoError(t, os.WriteFile(p, []byte(`{"master_server_address":"file:1"}`), 0o600))
	cfg, err = configFromLookup(env(map[string]string{EnvConfigPath: p, EnvMaster: "env:1"}))
	require.NoError(t, err)
	assert.Equal(t, "file:1", cfg.MasterServerAddress, "the config file wins over the variables")
}

func TestConfigValidate(t *testing.T) {
	ok := DefaultConfig()
	ok.MasterServerAddress = "m:1"
	require.NoError(t, ok.Validate())
	for name, mod := range map[string]func(*Config){
		"master":   func(c *Config) { c.MasterServerAddress = "" },
		"protocol": func(c *Config) { c.Protocol = "udp" },
		"hostname": func(c *Config) { c.LocalHostname = "" },
		"metadata": func(c *Config) { c.MetadataServer = "" },
		// C would cut these at the NUL: "m\x00A" and "m\x00B" would be one cluster.
		"nul master":               func(c *Config) { c.MasterServerAddress = "m\x00A" },
		"nul hostname":             func(c *Config) { c.LocalHostname = "127.0.0.1:4000\x00junk" },
		"nul metadata":             func(c *Config) { c.MetadataServer = "P2PHANDSHAKE\x00" },
		"nul device":               func(c *Config) { c.DeviceName = "mlx5_0\x00" },
		"nul protocol":             func(c *Config) { c.Protocol = "tcp\x00" },
		"negative connect timeout": func(c *Config) { c.ConnectTimeout = -time.Second },
	} {
		c := ok
		mod(&c)
		assert.ErrorIs(t, c.Validate(), ErrInvalidConfig, name)
	}
}

// ConnectTimeout (which replaced the MasterDialTimeout and
// MetadataProbeTimeout variables) bounds both of Open's probes: 0 means
// the default; it is the binding's own setting, in no config file.
func TestConnectTimeout(t *testing.T) {
	assert.Equal(t, DefaultConnectTimeout, Config{}.connectTimeout())
	assert.Equal(t, 2*time.Second, Config{ConnectTimeout: 2 * time.Second}.connectTimeout())
	ok := DefaultConfig()
	ok.MasterServerAddress = "m:1"
	ok.ConnectTimeout = time.Millisecond
	require.NoError(t, ok.Validate())
	b, err := json.Marshal(ok)
	require.NoError(t, err)
	assert.NotContains(t, string(b), "timeout", "not part of upstream's configuration")
	c, err := ParseConfig(b)
	require.NoError(t, err)
	assert.Zero(t, c.ConnectTimeout)

	require.NoError(t, DummyConfig{ServerAddress: "127.0.0.1:50052", ConnectTimeout: time.Second}.Validate())
	for _, d := range []DummyConfig{
		{ServerAddress: ""},
		{ServerAddress: "127.0.0.1"},
		{ServerAddress: ":50052"},
		{ServerAddress: "127.0.0.1:0"},
		{ServerAddress: "127.0.0.1:x"},
		{ServerAddress: "127.0.0.1:50052", ConnectTimeout: -time.Second},
	} {
		assert.ErrorIs(t, d.Validate(), ErrInvalidConfig, "%+v", d)
	}
}

// Every config error matches ErrInvalidConfig (and a size error also
// ErrInvalidSize), so callers need not parse messages.
func TestConfigErrorSentinels(t *testing.T) {
	_, err := ParseConfig([]byte(`{"protocol": 5}`))
	assert.ErrorIs(t, err, ErrInvalidConfig)
	_, err = ParseConfig([]byte(`{"global_segment_size": "4zb"}`))
	assert.ErrorIs(t, err, ErrInvalidConfig)
	assert.ErrorIs(t, err, ErrInvalidSize)
	_, err = ParseConfig([]byte(`{"local_buffer_size": -1}`))
	assert.ErrorIs(t, err, ErrInvalidSize)

	path := filepath.Join(t.TempDir(), "c.json")
	require.NoError(t, os.WriteFile(path, []byte(`{`), 0o644))
	_, err = LoadConfigFile(path)
	assert.ErrorIs(t, err, ErrInvalidConfig)
	_, err = LoadConfigFile(filepath.Join(t.TempDir(), "missing.json"))
	assert.ErrorIs(t, err, os.ErrNotExist)

	env := map[string]string{}
	lookup := func(k string) (string, bool) { v, ok := env[k]; return v, ok }
	_, err = configFromLookup(lookup)
	assert.ErrorIs(t, err, ErrInvalidConfig, "no master")
	env[EnvMaster] = "m:1"
	env[EnvGlobalSegmentSize] = "lots"
	_, err = configFromLookup(lookup)
	assert.ErrorIs(t, err, ErrInvalidConfig)
	assert.ErrorIs(t, err, ErrInvalidSize)

	cfg := DefaultConfig()
	cfg.MasterServerAddress = "m\x00A"
	_, err = Open(cfg)
	assert.ErrorIs(t, err, ErrInvalidConfig)
	assert.ErrorIs(t, err, ErrInvalidParams)
	assert.Contains(t, err.Error(), "NUL")
}

func TestConfigLogFields(t *testing.T) {
	ok := Config{LocalHostname: "h", MetadataServer: "P2PHANDSHAKE", Protocol: "tcp", MasterServerAddress: "a"}
	for _, l := range append([]string{"", "WARNING", "Error"}, logLevels...) {
		c := ok
		c.LogLevel = l
		if err := c.Validate(); err != nil {
			t.Errorf("log_level %q: %v", l, err)
		}
	}
	for _, c := range []Config{
		func() Config { c := ok; c.LogLevel = "verbose"; return c }(),
		func() Config { c := ok; c.LogDir = "/tmp\x00/x"; return c }(),
	} {
		if err := c.Validate(); !errors.Is(err, ErrInvalidConfig) {
			t.Errorf("%+v: %v, want ErrInvalidConfig", c, err)
		}
	}
	c, err := ParseConfig([]byte(`{"master_server_address": "a", "log_level": "error", "log_dir": "/var/log/mc"}`))
	if err != nil || c.LogLevel != "error" || c.LogDir != "/var/log/mc" {
		t.Errorf("ParseConfig: %+v, %v", c, err)
	}
}
