package core

// ActiveIndexWindow is how many messages a host re-indexes the active
// history over after appending (SCHEMA.md, "messages"): with a messages
// appended to a history of n, the search texts of the last a + 1 (the
// appended ones, and the one before them, whose context now names the
// first of them) computed by MessageSearchTextAt over the last
// a + ActiveIndexWindow messages equal those computed over the whole
// history, since a message's context looks back searchContextScan
// messages.
const ActiveIndexWindow = searchContextScan + 1

// ActiveIndexRange says, for a history of n messages of which the last
// appended were just appended, from which message a host decodes the
// history (decodeFrom) and from which it takes the search texts
// (indexFrom), both indices into the history.
func ActiveIndexRange(n, appended int) (decodeFrom, indexFrom int) {
	if appended > n {
		appended = n
	}
	indexFrom = max(0, n-appended-1)
	decodeFrom = max(0, n-appended-ActiveIndexWindow)
	return decodeFrom, indexFrom
}
