package harness

// StagedCalls is how many of i's calls were staged (stage.go).
func StagedCalls(i *Instance) int {
	if i.st == nil {
		return 0
	}
	return i.st.calls
}

// DirectHostArgs is whether i's staged calls pass host-function inputs in
// place (Options.Host).
func DirectHostArgs(i *Instance) bool { return i.st != nil && i.st.direct }

// Replaced is how many times i was replaced for its memory (MaxMemory).
func Replaced(i *Instance) int { return i.replaced }

// MemorySize is i's plug-in memory in bytes (0 without the module handle).
func MemorySize(i *Instance) uint32 {
	if i.st == nil {
		return 0
	}
	return i.st.mem.Size()
}
