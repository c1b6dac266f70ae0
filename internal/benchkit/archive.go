package benchkit

import (
	"strings"

	"github.com/clipfold/clipfold/core"
)

// IsArchive reports whether m is a clip-archive message
// (docs/spec.md#message-shapes): a system message starting with
// "[Context Summary", or the user turn the plug-in writes when the kept
// messages start without one (core.IsArchiveTurnText).
func IsArchive(m *Message) bool {
	switch m.Role {
	case "system":
		return strings.HasPrefix(m.Text, core.ClipArchivePrefix)
	case "user":
		return len(m.ToolCalls) == 0 && core.IsArchiveTurnText(m.Text)
	}
	return false
}
