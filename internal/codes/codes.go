// Package codes holds every error code mooncake-go knows, in Mooncake's own
// values: the store's mooncake::ErrorCode and the transfer engine's two
// code spaces (ERR_* from its int calls, Status::Code from submit, status
// and free). It is pure Go so that the cgo packages, hostcache and the test
// doubles all take their codes from here.
//
// The values, names and the C defines of cgo/include/mcgo/codes.h are
// generated from codes.tsv; edit the table and run go generate.
package codes

//go:generate go run ./gen

// Entry is one row of the table.
type Entry struct {
	Value    int64
	Upstream string // upstream's enumerator or macro name
	Go       string // the Go name, without a package prefix
	Doc      string
}

// StoreTable, EngineTable and StatusTable return the rows of each space in
// table order. The slices must not be modified.
func StoreTable() []Entry  { return storeEntries[:] }
func EngineTable() []Entry { return engineEntries[:] }
func StatusTable() []Entry { return statusEntries[:] }
