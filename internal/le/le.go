//go:build !(ppc64 || s390x || mips || mips64)

// Package le reads eight bytes of memory as a little-endian number in one
// load, on any machine. The plug-in's scanners (core's keyword automaton,
// api's member-name match) take a text's bytes out of one load by shifts
// and compare loads with constants written for that order; on the
// little-endian machines clipfold runs on (wasm, amd64, arm64, …) Load64
// is a plain load, and be.go swaps the bytes on a big-endian one.
// make check-bigendian runs core's and api's tests on s390x under qemu.
package le

import "unsafe"

// Load64 reads the eight bytes at p, the first byte the lowest.
func Load64(p unsafe.Pointer) uint64 { return *(*uint64)(p) }
