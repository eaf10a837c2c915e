package main

import (
	"errors"
	"io"
)

func runCompare(args []string, stdout io.Writer) error { return errors.New("todo") }
