//go:build cgo

package main

// Symbolized C and C++ frames in a crash's stack trace.
import _ "github.com/ianlancetaylor/cgosymbolizer"
