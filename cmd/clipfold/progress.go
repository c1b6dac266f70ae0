package main

import (
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"github.com/clipfold/clipfold/internal/redact"
	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"
)

func isTerminal(f *os.File) bool { return term.IsTerminal(int(f.Fd())) }

// progress shows work on stderr: a bar on a terminal, one plain line per
// step otherwise, nothing with --quiet.
type progress struct {
	mu    sync.Mutex
	w     io.Writer
	tty   bool
	quiet bool
	bar   *progressbar.ProgressBar
	what  string
	total int
	done  int
	// lastLog is when the last plain line was written: lines are
	// throttled to one per decile of the expected calls or per 2 s.
	lastLog time.Time
}

func newProgress(e *env, quiet bool) *progress {
	return &progress{w: e.stderr, tty: e.stderrTTY, quiet: quiet}
}

// begin starts a phase of about total steps (0: unknown).
func (p *progress) begin(what string, total int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.what, p.total, p.done = what, total, 0
	if p.quiet {
		return
	}
	if p.tty {
		max := total
		if max <= 0 {
			max = -1 // a spinner
		}
		p.bar = progressbar.NewOptions(max,
			progressbar.OptionSetWriter(p.w),
			progressbar.OptionSetDescription(what),
			progressbar.OptionShowCount(),
			progressbar.OptionSetWidth(30),
			progressbar.OptionSetElapsedTime(true),
			progressbar.OptionSetPredictTime(true),
			progressbar.OptionThrottle(65*time.Millisecond),
			progressbar.OptionClearOnFinish(),
			progressbar.OptionSetRenderBlankState(true),
		)
		return
	}
	if total > 0 {
		fmt.Fprintf(p.w, "clipfold: %s: about %d LLM call(s)\n", what, total)
	}
}

// step records one finished LLM call.
func (p *progress) step(took time.Duration, failed bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.done++
	if p.quiet {
		return
	}
	if p.bar != nil {
		if p.total > 0 && p.done > p.total {
			p.bar.ChangeMax(p.done)
		}
		_ = p.bar.Add(1)
		return
	}
	if p.tty {
		return
	}
	decile := p.total > 0 && p.done*10/p.total != (p.done-1)*10/p.total
	if !failed && p.done > 1 && !decile && time.Since(p.lastLog) < 2*time.Second {
		return
	}
	p.lastLog = time.Now()
	status := "done"
	if failed {
		status = "failed"
	}
	if p.total > 0 {
		fmt.Fprintf(p.w, "clipfold: %s: LLM call %d of ~%d %s in %s\n", p.what, p.done, p.total, status, roundDur(took))
	} else {
		fmt.Fprintf(p.w, "clipfold: %s: LLM call %d %s in %s\n", p.what, p.done, status, roundDur(took))
	}
}

// log writes a plain line (not on a terminal while a bar is shown).
func (p *progress) log(format string, args ...any) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.quiet || p.bar != nil {
		return
	}
	fmt.Fprintln(p.w, "clipfold: "+redact.Text(fmt.Sprintf(format, args...)))
}

// end finishes the phase and clears the bar.
func (p *progress) end() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.bar != nil {
		_ = p.bar.Finish()
		_ = p.bar.Exit()
		p.bar = nil
	}
}

func roundDur(d time.Duration) time.Duration {
	switch {
	case d >= 10*time.Second:
		return d.Round(100 * time.Millisecond)
	case d >= time.Second:
		return d.Round(10 * time.Millisecond)
	case d >= time.Millisecond:
		return d.Round(100 * time.Microsecond)
	}
	return d.Round(time.Microsecond)
}
