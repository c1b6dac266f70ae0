package harness_test

// Performance measurements behind docs/benchmarks.md (regenerate with
// `go run ./tools/benchreport`). The existing BenchmarkSplit, BenchmarkScore
// and BenchmarkCompressOverhead (bench_test.go) give the headline numbers;
// the benchmarks here explain them:
//
//	BenchmarkPerfTransfer   the cost of moving bytes in and out of an Extism
//	                        plug-in (a trivial plug-in built like clipfold)
//	                        next to clipfold's cheapest exports on the same sizes
//	BenchmarkPerfSplitKeep  split with nothing to sort (keep_recent ≥ n) vs
//	                        everything to sort (keep_recent 0)
//	BenchmarkPerfFirstCall  fresh instance + first split; peak linear memory
//	BenchmarkPerfPool       N goroutines × pooled instances, N = 1, 2, 4
//
// and TestPerfNoMemoryGrowth fails if an instance's memory grows over
// 1,000 calls after warm-up.

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/clipfold/clipfold/api"
	"github.com/clipfold/clipfold/core"
	"github.com/clipfold/clipfold/hostfuncs"
	"github.com/clipfold/clipfold/internal/wasmhost"
	"github.com/stretchr/testify/require"
)

// BenchmarkPerfTransfer: sizes are the inputs of BenchmarkSplit at 1k, 10k
// and 100k messages. go-pdk's Input() costs one input_load_u64 host call
// per 8 bytes, Output() one store_u64 per 8 bytes; "sink", "echo" and
// "emit" measure exactly that, with no JSON work. clipfold's "version"
// (which validates the ignored input) and "estimateTokens" (which counts
// the code points of "text") are the cheapest real exports on those sizes;
// their native rows are the same api functions without Wasm.
func BenchmarkPerfTransfer(b *testing.B) {
	ctx := context.Background()
	echo, err := newRuntime(b, wasmhost.Options{Wasm: echoPlugin(b)}).NewInstance(ctx)
	require.NoError(b, err)
	clip := newInstance(b)
	env := api.DefaultEnv()
	b.Run("echo-nop", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			if _, err := echo.Call(ctx, "nop", nil); err != nil {
				b.Fatal(err)
			}
		}
	})
	for _, n := range benchSizes {
		size := len(benchHistory(n))
		run := func(name string, in []byte, f func([]byte) error) {
			b.Run(fmt.Sprintf("%s/n=%d", name, n), func(b *testing.B) {
				b.SetBytes(int64(size))
				for i := 0; i < b.N; i++ {
					if err := f(in); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
		call := func(inst *wasmhost.Instance, export string) func([]byte) error {
			return func(in []byte) error { _, err := inst.Call(ctx, export, in); return err }
		}
		native := func(h func(*api.Env, []byte) ([]byte, error)) func([]byte) error {
			return func(in []byte) error { _, err := h(env, in); return err }
		}
		run("echo-sink", padded(size), call(echo, "sink"))
		run("echo-echo", padded(size), call(echo, "echo"))
		run("echo-emit", []byte(strconv.Itoa(size)), call(echo, "emit"))
		run("version-pad-wasm", padded(size), call(clip, "version"))
		run("version-pad-native", padded(size), native((*api.Env).VersionInfo))
		run("estimateTokens-wasm", textInput(size), call(clip, "estimateTokens"))
		run("estimateTokens-native", textInput(size), native((*api.Env).EstimateTokens))
	}
}

// BenchmarkPerfSplitKeep varies split's work at equal output size: with
// keep_recent ≥ n everything is kept in order (no sort); with 0
// everything is compressed (scored, sorted).
func BenchmarkPerfSplitKeep(b *testing.B) {
	ctx := context.Background()
	inst := newInstance(b)
	env := api.DefaultEnv()
	n := 10_000
	base := benchHistory(n)
	for _, k := range []int{0, n} {
		in := withKeepRecent(base, k)
		b.Run(fmt.Sprintf("native/keep=%d", k), func(b *testing.B) {
			b.SetBytes(int64(len(in)))
			for i := 0; i < b.N; i++ {
				if _, err := env.Split(in); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(fmt.Sprintf("wasm/keep=%d", k), func(b *testing.B) {
			b.SetBytes(int64(len(in)))
			for i := 0; i < b.N; i++ {
				if _, err := inst.Call(ctx, "split", in); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkPerfFirstCall times a fresh instance's first split and reports
// the instance's linear memory: the plug-in module's ("linear-MB", after
// the first call, and "steady-MB", after 20 more) and the Extism kernel's
// ("kernel-MB", which holds the input and the output), and
// "peak/input" = (plug-in + kernel memory) / input size.
func BenchmarkPerfFirstCall(b *testing.B) {
	ctx := context.Background()
	rt, probe := newProbedRuntime(b, wasmhost.Options{}, "split")
	for _, n := range []int{1_000, 10_000} {
		in := benchHistory(n)
		b.Run(fmt.Sprintf("split/n=%d", n), func(b *testing.B) {
			var first, steady, kernel uint32
			for i := 0; i < b.N; i++ {
				inst, err := rt.NewInstance(ctx)
				require.NoError(b, err)
				if _, err := inst.Call(ctx, "split", in); err != nil {
					b.Fatal(err)
				}
				b.StopTimer()
				first, kernel = probe.sizes()
				for j := 0; j < 20; j++ {
					_, err := inst.Call(ctx, "split", in)
					require.NoError(b, err)
				}
				steady, _ = probe.sizes()
				_ = inst.Close(ctx)
				b.StartTimer()
			}
			mb := func(x uint32) float64 { return float64(x) / (1 << 20) }
			b.ReportMetric(float64(len(in))/(1<<20), "input-MB")
			b.ReportMetric(mb(first), "linear-MB")
			b.ReportMetric(mb(steady), "steady-MB")
			b.ReportMetric(mb(kernel), "kernel-MB")
			b.ReportMetric(float64(uint64(first)+uint64(kernel))/float64(len(in)), "peak/input")
			b.ReportMetric(float64(first)/float64(len(in)), "linear/input")
		})
	}
}

// TestPerfNoMemoryGrowth makes 1,000 calls (split, score, estimateTokens,
// compress dry runs) on one instance and fails if the plug-in's or the
// Extism kernel's memory grows after the first 200 by more than one
// growth step of Go's heap (slack for the collector's pacing; a leak of
// 1.3 KB or more per call would still exceed it over 800 calls).
func TestPerfNoMemoryGrowth(t *testing.T) {
	if testing.Short() {
		t.Skip("1,000 calls through the .wasm")
	}
	ctx := context.Background()
	hist := conversation("leak", 100)
	host := &hostfuncs.Host{LLM: quickLLM{}, Store: newMemStore(hist)}
	// MaxMemory -1: no instance is ever replaced, so growth cannot hide.
	rt, probe := newProbedRuntime(t, wasmhost.Options{HostFunctions: hostfuncs.Bind(host), MaxMemory: -1},
		"split", "score", "estimateTokens", "compress")
	inst, err := rt.NewInstance(ctx)
	require.NoError(t, err)
	defer inst.Close(ctx)
	msgs := benchHistory(100)
	comp := compressInput(t, "leak", hist, map[string]any{"dry_run": true})
	calls := []struct {
		export string
		in     []byte
	}{{"split", msgs}, {"score", msgs}, {"estimateTokens", textInput(20_000)}, {"compress", comp}}
	const total, warm = 1000, 200
	const slack = 1 << 20
	var warmMain, warmKernel uint32
	start := time.Now()
	for i := 1; i <= total; i++ {
		c := calls[i%len(calls)]
		_, err := inst.Call(ctx, c.export, c.in)
		require.NoError(t, err, "call %d (%s)", i, c.export)
		if i == warm {
			warmMain, warmKernel = probe.sizes()
		}
		if i > warm && i%100 == 0 {
			m, k := probe.sizes()
			require.LessOrEqualf(t, m, warmMain+slack, "plug-in memory grew from %d to %d bytes by call %d", warmMain, m, i)
			require.LessOrEqualf(t, k, warmKernel+slack, "kernel memory grew from %d to %d bytes by call %d", warmKernel, k, i)
		}
	}
	m, k := probe.sizes()
	t.Logf("after %d calls (%v): plug-in memory %.1f MiB (%.1f after %d), kernel %.1f MiB",
		total, time.Since(start).Round(time.Millisecond), float64(m)/(1<<20), float64(warmMain)/(1<<20), warm, float64(k)/(1<<20))

	// Larger inputs: the plug-in's heap grows for the first calls (about
	// a dozen with 1,000 messages; under TinyGo a 10k split's heap doubles
	// once, near the 26th call: RATIONALE "TinyGo collects on demand") and
	// then must stay put. 1,000 calls of a 10k split are
	// BenchmarkPerfMemory's.
	for _, c := range []struct{ n, total, warm int }{{1000, 120, 60}, {10_000, 90, 50}} {
		big := benchHistory(c.n)
		inst2, err := rt.NewInstance(ctx)
		require.NoError(t, err)
		for i := 1; i <= c.total; i++ {
			_, err := inst2.Call(ctx, "split", big)
			require.NoError(t, err, "split of %d messages, call %d", c.n, i)
			if i == c.warm {
				warmMain, warmKernel = probe.sizes()
			}
			if i > c.warm {
				m, k := probe.sizes()
				require.LessOrEqualf(t, m, warmMain+slack, "plug-in memory grew from %d to %d bytes by call %d (%d messages)", warmMain, m, i, c.n)
				require.LessOrEqualf(t, k, warmKernel+slack, "kernel memory grew from %d to %d bytes by call %d (%d messages)", warmKernel, k, i, c.n)
			}
		}
		_ = inst2.Close(ctx)
		t.Logf("split of %d messages (%d bytes), %d calls: plug-in memory %.1f MiB, kernel %.1f MiB",
			c.n, len(big), c.total, float64(warmMain)/(1<<20), float64(warmKernel)/(1<<20))
	}
}

// BenchmarkPerfMemory makes 1,000 calls of a 10k-message split on one
// instance that is never replaced (MaxMemory -1) and reports the plug-in's
// linear memory after the 50th call ("warm-MiB"), after the last
// ("final-MiB") and the difference ("growth-MiB", the target: 0); ns/op is
// one call. Run it with -benchtime 1x.
func BenchmarkPerfMemory(b *testing.B) {
	ctx := context.Background()
	rt, probe := newProbedRuntime(b, wasmhost.Options{MaxMemory: -1}, "split")
	in := benchHistory(10_000)
	const total, warm = 1000, 50
	var warmMem, final uint32
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		inst, err := rt.NewInstance(ctx)
		require.NoError(b, err)
		b.StartTimer()
		for j := 1; j <= total; j++ {
			if _, err := inst.Call(ctx, "split", in); err != nil {
				b.Fatal(err)
			}
			if j == warm {
				warmMem, _ = probe.sizes()
			}
		}
		b.StopTimer()
		final, _ = probe.sizes()
		_ = inst.Close(ctx)
		b.StartTimer()
	}
	mib := func(x uint32) float64 { return float64(x) / (1 << 20) }
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*total), "ns/op")
	b.ReportMetric(mib(warmMem), "warm-MiB")
	b.ReportMetric(mib(final), "final-MiB")
	b.ReportMetric(mib(final)-mib(warmMem), "growth-MiB")
}

// quickLLM answers at once with a short fixed summary and keeps nothing,
// so long benchmarks do not accumulate requests.
type quickLLM struct{}

func (quickLLM) Complete(_ context.Context, req *core.ModelRequest) (core.ModelResponse, error) {
	return core.ModelResponse{Content: []core.ContentBlock{{Type: "text",
		Text: fmt.Sprintf("[test summary of %d messages]", len(req.Messages)-1)}}, StopReason: "end_turn"}, nil
}

// BenchmarkPerfPool runs N conversations at once on N goroutines, through
// a wasmhost.Pool of N instances of one Runtime (wasm) or natively:
// split of 10,000 messages and compress (dry run) of 2,000. "convs/s" is
// the throughput; ns/op is the time of one round of N.
func BenchmarkPerfPool(b *testing.B) {
	ctx := context.Background()
	host := &hostfuncs.Host{LLM: quickLLM{}, Store: newMemStore(nil)}
	rt := newRuntime(b, wasmhost.Options{Host: host})
	const maxN = 4
	splitIn := make([][]byte, maxN)
	compIn := make([][]byte, maxN)
	for g := 0; g < maxN; g++ {
		splitIn[g] = benchHistory(10_000)
		conv := fmt.Sprintf("pool%d", g)
		compIn[g] = compressInput(b, conv, conversation(conv, 2000), map[string]any{"dry_run": true,
			"config": map[string]any{"chunk_size": 20, "keep_recent": 20}})
	}
	round := func(n int, f func(g int) error) error {
		var wg sync.WaitGroup
		errs := make([]error, n)
		for g := 0; g < n; g++ {
			wg.Add(1)
			go func(g int) { defer wg.Done(); errs[g] = f(g) }(g)
		}
		wg.Wait()
		for _, err := range errs {
			if err != nil {
				return err
			}
		}
		return nil
	}
	for _, work := range []string{"split10k", "compress2k"} {
		for _, n := range []int{1, 2, 4} {
			ins := splitIn
			export := "split"
			if work == "compress2k" {
				ins, export = compIn, "compress"
			}
			b.Run(fmt.Sprintf("%s/wasm/N=%d", work, n), func(b *testing.B) {
				pool := wasmhost.NewPool(rt, n)
				defer pool.Close(ctx)
				f := func(g int) error { _, err := pool.Call(ctx, export, ins[g]); return err }
				require.NoError(b, round(n, f)) // make the instances
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					if err := round(n, f); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(n*b.N)/b.Elapsed().Seconds(), "convs/s")
			})
			b.Run(fmt.Sprintf("%s/native/N=%d", work, n), func(b *testing.B) {
				envs := make([]*api.Env, n)
				for g := range envs {
					envs[g] = api.DefaultEnv()
				}
				f := func(g int) error {
					var err error
					if export == "split" {
						_, err = envs[g].Split(ins[g])
					} else {
						_, err = envs[g].Compress(ins[g], host, api.SystemClock{})
					}
					return err
				}
				for i := 0; i < b.N; i++ {
					if err := round(n, f); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(n*b.N)/b.Elapsed().Seconds(), "convs/s")
			})
		}
	}
}
