package interop

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mooncake-go/mooncake-go/hostcache"
)

// Values computed with scripts/interop_peer.py's functions (Python 3.11):
//
//	pattern(zlib.crc32(b"k"), 8), page_hashes("p", 4)
func TestSharedDefinitions(t *testing.T) {
	assert.Equal(t, []byte{93, 98, 103, 108, 113, 118, 123, 128}, Object("k", 8))
	prior, tokens := Tokens("p")
	assert.Equal(t, "148de9c5a7a44d19e56cd9ae1a554bf67847afb0c58f6e12fa29ac7ddfca9940", prior)
	hashes, err := hostcache.PageHashes(prior, tokens, PageSize)
	require.NoError(t, err)
	assert.Equal(t, []string{
		"c08a712b570e3a4d92632c01fb90dc22894a44484a2bdfb99995452458d7a338",
		"fecaf2ad9fa225438a1827f2d11d6073206a02b9e04cfddcc2b487a4d38c2bc2",
		"70ee05a4d1cc1d15be33ac160bf8c8c306051e76f15b09a4029768852968b3cc",
		"16ae1ddbb20726ac95d3e2099066ac75baf549f222492bca1f36e8ee620de8af",
	}, hashes)
}
