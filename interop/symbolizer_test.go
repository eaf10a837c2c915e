//go:build cgo

package interop

// Symbolized C++ frames if the native library crashes under the test.
import _ "github.com/ianlancetaylor/cgosymbolizer"
