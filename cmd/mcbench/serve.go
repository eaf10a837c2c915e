package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/mooncake-go/mooncake-go/cmd/internal/benchplan"
)

// serve is the client side of the serve protocol (see cmd/internal/benchdrive):
// the Run header, then one reply per case name read from in, until "quit"
// or the end of input.
func (b *bench) serve(doc Run, plan []Case, in io.Reader, out io.Writer) error {
	byName := map[string]Case{}
	for _, c := range plan {
		byName[c.Name] = c
	}
	enc := json.NewEncoder(out)
	if err := enc.Encode(doc); err != nil {
		return err
	}
	sc := bufio.NewScanner(in)
	for seq := 0; sc.Scan(); seq++ {
		name := strings.TrimSpace(sc.Text())
		if name == "" {
			continue
		}
		if name == "quit" {
			return nil
		}
		var rep benchplan.ServeReply
		if c, ok := byName[name]; !ok {
			rep.Error = fmt.Sprintf("no case %q in the plan", name)
		} else if res, err := b.runCase(seq, c); err != nil {
			rep.Error = fmt.Sprintf("%s: %v", name, err)
		} else {
			rep.Results = res
		}
		if rep.Results == nil {
			rep.Results = []Result{}
		}
		if err := enc.Encode(rep); err != nil {
			return err
		}
	}
	return sc.Err()
}
