// Command jumpthread threads the jumps of a module built by
// standard Go for GOARCH=wasm (see internal/jumpthread):
//
//	go run ./tools/jumpthread -o out.wasm in.wasm
//
// make build runs it on build/clipfold.wasm.
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/clipfold/clipfold/internal/jumpthread"
)

func main() {
	out := flag.String("o", "", "output file (default: rewrite the input in place)")
	quiet := flag.Bool("q", false, "do not print what was threaded")
	flag.Usage = func() {
		fmt.Fprintln(os.Stderr, "usage: jumpthread [-o out.wasm] [-q] in.wasm")
		flag.PrintDefaults()
	}
	flag.Parse()
	if flag.NArg() != 1 {
		flag.Usage()
		os.Exit(2)
	}
	in := flag.Arg(0)
	if *out == "" {
		*out = in
	}
	if err := run(in, *out, *quiet); err != nil {
		fmt.Fprintln(os.Stderr, "jumpthread:", err)
		os.Exit(1)
	}
}

func run(in, out string, quiet bool) error {
	b, err := os.ReadFile(in)
	if err != nil {
		return err
	}
	t, st, err := jumpthread.Thread(b)
	if err != nil {
		return fmt.Errorf("%s: %w", in, err)
	}
	// Write beside the output and rename: a reader never sees half a module.
	tmp := out + ".tmp"
	if err := os.WriteFile(tmp, t, 0o644); err != nil {
		return err
	}
	if err := os.Rename(tmp, out); err != nil {
		os.Remove(tmp)
		return err
	}
	if !quiet {
		fmt.Fprintf(os.Stderr, "jumpthread: %s: %s\n", out, st)
	}
	return nil
}
