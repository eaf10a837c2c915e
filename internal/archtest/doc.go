// Package archtest holds the test that keeps the import graph of the module
// what docs/architecture.md says it is. It has no API.
package archtest
