package kvevents

import (
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
)

// ErrEndpoint is what every malformed endpoint matches (errors.Is).
var ErrEndpoint = errors.New("kvevents: bad endpoint")

// EndpointError names the endpoint that did not parse and why.
type EndpointError struct {
	Endpoint string
	Reason   string
}

func (e *EndpointError) Error() string {
	return fmt.Sprintf("kvevents: endpoint %q: %s", e.Endpoint, e.Reason)
}

// Is makes an EndpointError match ErrEndpoint.
func (e *EndpointError) Is(target error) bool { return target == ErrEndpoint }

// splitEndpoint parses ZMQ's "tcp://host:port" (the only transport the
// master's publisher is used with here; host "*" is every interface, as
// libzmq's bind takes it) into a net address.
func splitEndpoint(ep string) (host, port string, err error) {
	rest, ok := strings.CutPrefix(ep, "tcp://")
	if !ok {
		return "", "", &EndpointError{ep, "want tcp://host:port (other ZMQ transports are not spoken)"}
	}
	host, port, err = net.SplitHostPort(rest)
	if err != nil {
		return "", "", &EndpointError{ep, err.Error()}
	}
	if n, err := strconv.ParseUint(port, 10, 16); err != nil || (n == 0 && port != "0") {
		return "", "", &EndpointError{ep, "port must be 0..65535"}
	}
	if host == "" {
		return "", "", &EndpointError{ep, "no host"}
	}
	return host, port, nil
}

// dialAddress is the address a subscriber connects to.
func dialAddress(ep string) (string, error) {
	host, port, err := splitEndpoint(ep)
	if err != nil {
		return "", err
	}
	if host == "*" {
		return "", &EndpointError{ep, "a subscriber needs a host, not *"}
	}
	if port == "0" {
		return "", &EndpointError{ep, "a subscriber needs a port, not 0"}
	}
	return net.JoinHostPort(host, port), nil
}
