// Package convdata checks the conversations committed under
// testdata/conversations (the sample conversations, with their facts) and
// testdata/fidelity (the fidelity benchmark's conversations, with their
// questions). The files are the source of truth: they were written once
// and are edited as data. Its tests hold every file to the rules the two
// READMEs state (the message shape, the facts stated early, the fidelity
// questions paraphrased with answers that occur once, see RATIONALE.md),
// and show on altered copies that each rule catches what it is for.
// There is nothing to import: the package is its tests.
package convdata
