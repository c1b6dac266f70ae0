package harness

// StagedCalls is how many of i's calls were staged (stage.go).
func StagedCalls(i *Instance) int {
	if i.st == nil {
		return 0
	}
	return i.st.calls
}
