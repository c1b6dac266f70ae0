// Package benchkit is what the benchmarks of tools/ (fidelity,
// trajectories) share: running the clipfold command and reading its
// output, the plug-in's token estimate and naive truncation, reading the
// benchmark's database, the BM25 baseline, and native messages.
package benchkit
