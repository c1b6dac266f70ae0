// Package docscheck holds the repository to two rules about its own text.
//
// Every reference resolves inside the repository: the contract is
// docs/spec.md, cited by section anchor (docs/spec.md#counting-tokens-and-the-window
// in code, a relative link in Markdown), and every relative Markdown link
// names a tracked file and, for a Markdown target, one of its headings.
//
// The project speaks of itself only: its files name what a decision
// decided, never the tracker issue or the working session it came from.
//
// There is nothing to import: the package is its tests.
package docscheck
