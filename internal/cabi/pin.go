//go:build cgo

package cabi

import (
	"sort"
	"strings"
)

// acceptedList names the accepted upstream commits for an error message.
func acceptedList() string {
	var out []string
	for c, label := range acceptedUpstream {
		out = append(out, label+" ("+c[:min(12, len(c))]+")")
	}
	sort.Strings(out)
	return strings.Join(out, ", ")
}
