// A program with the control flow jumpthread rewrites: loops, switches,
// goroutines that block and resume, stack growth, panics. Its output must
// not change when its module is threaded.
package main

import (
	"errors"
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"
)

func collatz(n int) int {
	steps := 0
	for n != 1 {
		switch {
		case n%2 == 0:
			n /= 2
		default:
			n = 3*n + 1
		}
		steps++
	}
	return steps
}

// deep recurses far enough to grow the goroutine stack several times
// (Go's Wasm unwinds and rewinds every frame to do it).
func deep(n int) int {
	var pad [64]byte
	pad[n%64] = byte(n)
	if n == 0 {
		return int(pad[0])
	}
	return deep(n-1) + int(pad[n%64]&1)
}

func classify(s string) string {
	switch {
	case s == "":
		return "empty"
	case strings.HasPrefix(s, "-"):
		return "flag"
	case strings.ContainsAny(s, "0123456789"):
		if _, err := strconv.Atoi(s); err == nil {
			return "int"
		}
		return "mixed"
	}
	return "word"
}

func safeDiv(a, b int) (q int, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("recovered: %v", r)
		}
	}()
	return a / b, nil
}

func main() {
	var b strings.Builder
	total := 0
	for i := 1; i < 3000; i++ {
		total += collatz(i)
	}
	fmt.Fprintln(&b, "collatz", total)
	fmt.Fprintln(&b, "deep", deep(20000))

	words := strings.Fields("the deploy failed because 42 the config -v had x9 a typo 7 ")
	counts := map[string]int{}
	for _, w := range words {
		counts[classify(w)]++
	}
	keys := make([]string, 0, len(counts))
	for k := range counts {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		fmt.Fprintln(&b, k, counts[k])
	}

	// Goroutines park on channels: their frames unwind and resume.
	in, out := make(chan int), make(chan int)
	done := make(chan struct{})
	for w := 0; w < 4; w++ {
		go func() {
			for v := range in {
				out <- v * v
			}
			done <- struct{}{}
		}()
	}
	go func() {
		for i := 0; i < 500; i++ {
			in <- i
		}
		close(in)
	}()
	sum, finished := 0, 0
	for finished < 4 {
		select {
		case v := <-out:
			sum += v
		case <-done:
			finished++
		}
	}
	fmt.Fprintln(&b, "squares", sum)

	if _, err := safeDiv(1, 0); err != nil {
		fmt.Fprintln(&b, err)
	}
	var target *strconv.NumError
	_, err := strconv.ParseInt("12x", 10, 64)
	fmt.Fprintln(&b, "numerror", errors.As(err, &target))

	xs := make([]int, 0, 2000)
	for i := 0; i < 2000; i++ {
		xs = append(xs, (i*7919)%2003)
	}
	sort.Ints(xs)
	fmt.Fprintln(&b, "sorted", xs[0], xs[1000], xs[1999])
	os.Stdout.WriteString(b.String())
}
