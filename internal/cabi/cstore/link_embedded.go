//go:build cgo && !mooncake_native

package cstore

import _ "github.com/mooncake-go/mooncake-go/cgo/embedded/store" // the embedded store backend
