package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"sync"

	"github.com/mooncake-go/mooncake-go/mooncake"
	"github.com/mooncake-go/mooncake-go/mooncake/kvevents"
)

// memberLocator finds the KV event publisher of an HA master group: only
// the serving leader binds its publisher (upstream creates the master
// service, and its publisher, when a master starts to serve, and destroys
// it when leadership is lost), so the leader's endpoint is the one that
// accepts a connection. Each call starts with the member after the one it
// named last: the subscriber asks again when that connection failed or
// ended, so a leader that stopped without closing its socket (a paused
// process still accepts TCP connections, and then never answers the
// handshake) is passed over on the next attempt instead of being named
// forever.
type memberLocator struct {
	members []string // tcp://host:port of each master
	mu      sync.Mutex
	last    int
}

func newMemberLocator(members []string) *memberLocator {
	return &memberLocator{members: members, last: -1}
}

// Endpoint implements kvevents.Locator.
func (l *memberLocator) Endpoint(ctx context.Context) (string, error) {
	l.mu.Lock()
	start := l.last + 1
	l.mu.Unlock()
	var errs []error
	var d net.Dialer
	for i := range l.members {
		j := (start + i) % len(l.members)
		ep := l.members[j]
		c, err := d.DialContext(ctx, "tcp", strings.TrimPrefix(ep, "tcp://"))
		if err != nil {
			errs = append(errs, err)
			continue
		}
		c.Close()
		l.mu.Lock()
		l.last = j
		l.mu.Unlock()
		return ep, nil
	}
	return "", fmt.Errorf("no publisher of %d masters accepts a connection: %w", len(l.members), errors.Join(errs...))
}

// leaderPrefix is -events' form for the leader recorded by an HA group.
const leaderPrefix = "leader:"

// locate is the Locator of -events: leader:PORT follows the leader recorded
// in the HA group of cfg's master address (kvevents.LeaderLocator), the
// rest is locatorOf's.
func locate(events string, cfg mooncake.Config) (kvevents.Locator, error) {
	port, ok := strings.CutPrefix(events, leaderPrefix)
	if !ok {
		loc, _, err := locatorOf(events)
		return loc, err
	}
	p, err := strconv.Atoi(port)
	if err != nil || p <= 0 || p > 65535 {
		return nil, fmt.Errorf("-events %q: want leader:PORT, the port every master binds its publisher on", events)
	}
	return kvevents.NewLeaderLocator(kvevents.LeaderConfig{MasterAddress: cfg.MasterServerAddress, ClusterID: cfg.ClusterID,
		Publisher: kvevents.PublisherPort(p)})
}

// locatorOf is the Locator of -events: one endpoint, or the members of an
// HA group separated by commas.
func locatorOf(events string) (kvevents.Locator, []string, error) {
	var members []string
	for _, ep := range strings.Split(events, ",") {
		ep = strings.TrimSpace(ep)
		host, port, err := net.SplitHostPort(strings.TrimPrefix(ep, "tcp://"))
		if !strings.HasPrefix(ep, "tcp://") || err != nil || host == "" || host == "*" || port == "" || port == "0" {
			return nil, nil, fmt.Errorf("-events: %q: want tcp://host:port (comma-separated for the masters of an HA group)", ep)
		}
		members = append(members, ep)
	}
	if len(members) == 1 {
		return kvevents.Static(members[0]), members, nil
	}
	return newMemberLocator(members), members, nil
}
