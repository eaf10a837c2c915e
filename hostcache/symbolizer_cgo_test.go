//go:build cgo

package hostcache_test

// Symbolized C++ frames if the engine crashes under the end-to-end tests.
import _ "github.com/ianlancetaylor/cgosymbolizer"
