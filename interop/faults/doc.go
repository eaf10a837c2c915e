// Package faults holds the fault tests against real Mooncake (make
// chaos-native, which make test-native calls): each test starts its own
// mooncake_master on loopback (internal/testcluster), runs clients that do
// batch puts and gets the whole time, and then kills, restarts or cuts off
// a part of the cluster by PID. They need the native build; in other builds
// the package has no tests.
package faults
