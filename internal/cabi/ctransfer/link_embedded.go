//go:build cgo && !mooncake_native

package ctransfer

import _ "github.com/mooncake-go/mooncake-go/cgo/embedded/transfer" // the embedded transfer engine
