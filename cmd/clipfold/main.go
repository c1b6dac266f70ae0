// Command clipfold compacts long LLM conversations with the clipfold
// WebAssembly plug-in, stores them (SQLite by default, or PostgreSQL),
// and lets you search, show and recall what was compacted.
//
//	clipfold compact testdata/conversations/debugging-session.json
//	clipfold search "connection leak"
//	clipfold show conv-checkout-inc-4471
//	clipfold recall dbg-0042
//	clipfold run testdata/conversations/support-chat.json --model-max-tokens 20000
//	clipfold version
//
// Every command has --help. Exit codes: 0 success, 1 failure, 2 usage or
// configuration error.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"

	"github.com/clipfold/clipfold/internal/redact"
)

// cliVersion is the command's own version; `clipfold version` also prints
// the plug-in's. `make dist` stamps its builds with -ldflags
// "-X main.cliVersion=0.1.0+<commit>" (a variable, so the linker can set it).
var cliVersion = "0.1.0"

// Exit codes.
const (
	exitOK      = 0
	exitFailure = 1
	exitUsage   = 2
)

// exitError carries an exit code and a message a person can act on.
type exitError struct {
	code int
	msg  string
}

func (e *exitError) Error() string { return e.msg }

func usagef(format string, args ...any) error {
	return &exitError{code: exitUsage, msg: fmt.Sprintf(format, args...)}
}

func failf(format string, args ...any) error {
	return &exitError{code: exitFailure, msg: fmt.Sprintf(format, args...)}
}

// errSilent ends a command with exit 1 after it printed its own report.
var errSilent = &exitError{code: exitFailure}

// env is what a command may touch of the process.
type env struct {
	ctx    context.Context
	stdin  io.Reader
	stdout io.Writer
	stderr io.Writer
	// stderrTTY says whether stderr is a terminal (progress bar vs log
	// lines).
	stderrTTY bool
	getenv    func(string) string
}

type command struct {
	name    string
	args    string // after the name in the usage line
	summary string
	help    string // description and examples, after the usage line
	run     func(e *env, args []string) error
}

var commands []*command

func init() {
	commands = []*command{compactCmd, searchCmd, showCmd, recallCmd, runCmd, versionCmd}
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	e := &env{ctx: ctx, stdin: os.Stdin, stdout: os.Stdout, stderr: os.Stderr,
		stderrTTY: isTerminal(os.Stderr), getenv: os.Getenv}
	code := run(e, os.Args[1:])
	stop()
	os.Exit(code)
}

func run(e *env, args []string) int {
	if len(args) == 0 {
		topUsage(e.stderr)
		return exitUsage
	}
	name := args[0]
	switch name {
	case "-h", "-help", "--help", "help":
		if len(args) > 1 {
			if c := lookup(args[1]); c != nil {
				return run(e, []string{c.name, "--help"})
			}
		}
		topUsage(e.stdout)
		return exitOK
	case "-version", "--version":
		name = "version"
	}
	c := lookup(name)
	if c == nil {
		fmt.Fprintf(e.stderr, "clipfold: unknown command %q\n\n", name)
		topUsage(e.stderr)
		return exitUsage
	}
	err := c.run(e, args[1:])
	if err == nil {
		return exitOK
	}
	if errors.Is(err, flag.ErrHelp) {
		return exitOK
	}
	// Every message that leaves the command is redacted: a URL in it
	// keeps neither its password nor a key-like query parameter.
	var ee *exitError
	if errors.As(err, &ee) {
		if ee.msg != "" {
			fmt.Fprintf(e.stderr, "clipfold %s: %s\n", c.name, redact.Text(ee.msg))
		}
		if ee.code == exitUsage && ee.msg != "" {
			fmt.Fprintf(e.stderr, "Run 'clipfold %s --help' for usage.\n", c.name)
		}
		return ee.code
	}
	fmt.Fprintf(e.stderr, "clipfold %s: %s\n", c.name, redact.Text(explain(err)))
	return exitFailure
}

func lookup(name string) *command {
	for _, c := range commands {
		if c.name == name {
			return c
		}
	}
	return nil
}

func topUsage(w io.Writer) {
	fmt.Fprint(w, `clipfold compacts long LLM conversations with the clipfold WebAssembly plug-in:
old messages are summarized (importance first) into an archive you can search,
and replaced by one clip-archive message. Nothing is ever lost: every original
message stays retrievable.

Usage: clipfold <command> [flags] [arguments]

Commands:
`)
	for _, c := range commands {
		fmt.Fprintf(w, "  %-8s %s\n", c.name, c.summary)
	}
	fmt.Fprint(w, `
First run (offline, no API key needed):
  clipfold compact testdata/conversations/debugging-session.json
  clipfold search "connection leak"

Run 'clipfold <command> --help' for a command's flags and examples.
`)
}

// newFlags makes a command's flag set with a usage text built from the
// command's help.
func newFlags(e *env, c *command) *flag.FlagSet {
	fs := flag.NewFlagSet("clipfold "+c.name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	return fs
}

// printHelp writes a command's full help to w.
func printHelp(w io.Writer, c *command, fs *flag.FlagSet) {
	fmt.Fprintf(w, "Usage: clipfold %s %s\n\n%s\n\nFlags:\n", c.name, c.args, strings.TrimSpace(c.summary))
	fs.SetOutput(w)
	fs.PrintDefaults()
	fs.SetOutput(io.Discard)
	fmt.Fprintf(w, "\n%s\n", strings.TrimSpace(c.help))
}

// parse parses flags and positional arguments in any order ("--" ends
// flags), prints help for -h/--help, and checks the positional count.
func parse(e *env, c *command, fs *flag.FlagSet, args []string, minPos, maxPos int) ([]string, error) {
	var pos []string
	for {
		err := fs.Parse(args)
		if errors.Is(err, flag.ErrHelp) {
			printHelp(e.stdout, c, fs)
			return nil, flag.ErrHelp
		}
		if err != nil {
			// The flag package names an undefined flag only in its
			// message; every other message (a bad value, a missing
			// argument) reads well as it is.
			if name, ok := strings.CutPrefix(err.Error(), "flag provided but not defined: "); ok {
				return nil, usagef("unknown flag %s", name)
			}
			return nil, usagef("%s", err)
		}
		rest := fs.Args()
		consumed := len(args) - len(rest)
		if consumed > 0 && args[consumed-1] == "--" {
			pos = append(pos, rest...)
			break
		}
		if len(rest) == 0 {
			break
		}
		pos = append(pos, rest[0])
		args = rest[1:]
	}
	switch {
	case len(pos) < minPos:
		return nil, usagef("missing argument: usage: clipfold %s %s", c.name, c.args)
	case maxPos >= 0 && len(pos) > maxPos:
		return nil, usagef("unexpected argument %q: usage: clipfold %s %s", pos[maxPos], c.name, c.args)
	}
	return pos, nil
}
