package kvevents

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"strconv"
)

// The little of Redis' protocol (RESP2) LeaderLocator reads.

type bufioReader = bufio.Reader

func newBufioReader(r io.Reader) *bufio.Reader { return bufio.NewReaderSize(r, 4096) }

var errRESP = errors.New("kvevents: malformed redis reply")

// maxRESP bounds a reply's strings and arrays: a leader record is small.
const maxRESP = 1 << 20

func readLine(r *bufio.Reader) (string, error) {
	line, err := r.ReadSlice('\n')
	if err != nil {
		return "", err
	}
	if len(line) < 3 || line[len(line)-2] != '\r' {
		return "", errRESP
	}
	return string(line[:len(line)-2]), nil
}

func readRESP(r *bufio.Reader, depth int) (any, error) {
	if depth > 4 {
		return nil, errRESP
	}
	line, err := readLine(r)
	if err != nil {
		return nil, err
	}
	switch line[0] {
	case '+':
		return line[1:], nil
	case '-':
		return nil, fmt.Errorf("kvevents: redis: %s", line[1:])
	case ':':
		return strconv.ParseInt(line[1:], 10, 64)
	case '$':
		n, err := strconv.Atoi(line[1:])
		if err != nil || n > maxRESP {
			return nil, errRESP
		}
		if n < 0 {
			return nil, nil
		}
		b := make([]byte, n+2)
		if _, err := io.ReadFull(r, b); err != nil {
			return nil, err
		}
		if b[n] != '\r' || b[n+1] != '\n' {
			return nil, errRESP
		}
		return string(b[:n]), nil
	case '*':
		n, err := strconv.Atoi(line[1:])
		if err != nil || n > maxRESP {
			return nil, errRESP
		}
		if n < 0 {
			return nil, nil
		}
		out := make([]any, n)
		for i := range out {
			if out[i], err = readRESP(r, depth+1); err != nil {
				return nil, err
			}
		}
		return out, nil
	}
	return nil, errRESP
}
