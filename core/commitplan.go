package core

import (
	"strconv"
	"time"

	"github.com/tidwall/gjson"
)

// CommitPlan is what a store writes for one Commit: the rows, with their
// times formatted and their JSON exact, and the checks that must pass
// first — hostfuncs/store/SCHEMA.md, "The commit", step by step. Every
// store applies the same plan (the Go stores natively, the other hosts
// through the planCommit export), so they refuse the same commits in the
// same words and write the same rows; a store only runs its SQL with
// them, in one transaction.
type CommitPlan struct {
	ConversationID string
	OperationID    string
	// Now is when the commit is applied, in clipfold's format: removed_at
	// of the messages moved to recall storage, created_at of the blocks
	// written, and of the clip-archive when it has none.
	Now string
	// CallerOwned: history_owner "caller". The store writes RecallWrites,
	// deletes and writes blocks, and touches no active history.
	CallerOwned bool
	// Checks must all pass, in order, before anything is written; the
	// first that fails decides the error (CheckActive and CheckBlock: a
	// conflict; CheckNew: ids already stored).
	Checks []CommitCheck
	// RemoveIDs are remove_message_ids without repeats (first kept);
	// MoveIDs are RemoveIDs then the replaced ids: every row that moves to
	// recall storage, in this order.
	RemoveIDs, MoveIDs []string
	// SearchText is the text to index for each id of MoveIDs the commit
	// gave one for (the first entry of an id wins), in MoveIDs order.
	SearchText []SearchText
	// Replace are the rows that take a replacement in place.
	Replace []StoredReplacement
	// DeleteIDs are archive_deletes without repeats.
	DeleteIDs []string
	// ArchiveWrites are the blocks to write, tier "archival" when unset.
	ArchiveWrites []ArchiveWrite
	// Insert is the clip-archive's row (store-owned), nil when
	// insert_message is null. It goes before every remaining message.
	Insert *StoredMessage
	// RecallWrites are the caller-owned commit's recall rows, one per id
	// (the first entry of an id wins).
	RecallWrites []StoredMessage
}

// CommitCheck is one check of a CommitPlan: every id of IDs must be what
// Must says.
type CommitCheck struct {
	Field string // the commit field that names the ids, as an error says it
	Must  string // CheckActive, CheckBlock or CheckNew
	IDs   []string
}

// What a CommitCheck's ids must be.
const (
	// CheckActive: in the conversation's active history.
	CheckActive = "active"
	// CheckBlock: an archival block.
	CheckBlock = "block"
	// CheckNew: held nowhere in the conversation, active or recalled.
	CheckNew = "new"
)

// StoredMessage is one message row as a store writes it: role as clipfold
// reads it, CreatedAt in clipfold's format or "" when unknown, Raw the
// exact JSON, SearchText the text to index (recall writes only).
type StoredMessage struct {
	ID, Role, Content, CreatedAt string
	Raw                          []byte
	SearchText                   string
}

// StoredReplacement is one active row that takes a replacement in place
// (queries/replace_message.sql): the row of ID gets NewID, Role, Content
// and Raw; its position and time stay.
type StoredReplacement struct {
	ID, NewID, Role, Content string
	Raw                      []byte
}

// PlanCommit checks c — what can be checked without the database — and
// returns what a store writes for it at now. Errors are invalid_input
// naming the commit's field.
func PlanCommit(c *Commit, now time.Time) (CommitPlan, error) {
	if c == nil {
		return CommitPlan{}, Invalid("", "no commit")
	}
	if c.ConversationID == "" {
		return CommitPlan{}, Invalid("conversation_id", "is empty")
	}
	p := CommitPlan{ConversationID: c.ConversationID, OperationID: c.OperationID, Now: FormatTime(now),
		RemoveIDs: uniqueStrings(c.RemoveMessageIDs), DeleteIDs: uniqueStrings(c.ArchiveDeletes),
		CallerOwned: c.HistoryOwner == OwnerCaller}
	for i, w := range c.ArchiveWrites {
		if w.Label == "" {
			return CommitPlan{}, Invalid(indexed("archive_writes", i)+".label", "is empty")
		}
		w.Tier = orDefault(w.Tier, "archival")
		p.ArchiveWrites = append(p.ArchiveWrites, w)
	}
	if p.CallerOwned {
		// Not `return p, planCaller(c, &p)`: Go leaves unspecified whether
		// p is read before or after the call, and TinyGo reads it before
		// (the plan lost its recall writes in the shipped build).
		err := planCaller(c, &p)
		return p, err
	}
	if !c.NoInsert {
		ins, err := planInsert(c, now)
		if err != nil {
			return CommitPlan{}, err
		}
		p.Insert = &ins
	}
	moving := make(map[string]bool, len(p.RemoveIDs)+len(c.ReplaceMessages))
	for _, id := range p.RemoveIDs {
		moving[id] = true
	}
	p.MoveIDs = append([]string(nil), p.RemoveIDs...)
	var replaced []string
	var added []CommitCheck
	if p.Insert != nil {
		added = append(added, CommitCheck{Field: "insert_message", Must: CheckNew, IDs: []string{p.Insert.ID}})
	}
	for i := range c.ReplaceMessages {
		r := &c.ReplaceMessages[i]
		f := indexed("replace_messages", i)
		switch {
		case r.ID == "":
			return CommitPlan{}, Invalid(f+".id", "is empty")
		case r.NewID == "":
			return CommitPlan{}, Invalid(f+".new_id", "is empty")
		case moving[r.ID]:
			return CommitPlan{}, Invalid(f+".id", strconv.Quote(r.ID)+" is removed or replaced twice")
		case r.Role == RoleInvalid:
			return CommitPlan{}, Invalid(f+".role", "must be user, assistant, system or tool")
		case !gjson.ValidBytes(r.Raw):
			return CommitPlan{}, Invalid(f+".message", "is not valid JSON")
		}
		moving[r.ID] = true
		replaced = append(replaced, r.ID)
		p.Replace = append(p.Replace, StoredReplacement{ID: r.ID, NewID: r.NewID, Role: r.Role.String(), Content: r.Content, Raw: r.Raw})
		if r.NewID != r.ID {
			added = append(added, CommitCheck{Field: f + ".new_id", Must: CheckNew, IDs: []string{r.NewID}})
		}
	}
	p.MoveIDs = append(p.MoveIDs, replaced...)
	p.Checks = appendCheck(p.Checks, "remove_message_ids", CheckActive, p.RemoveIDs)
	p.Checks = appendCheck(p.Checks, "replace_messages", CheckActive, replaced)
	p.Checks = appendCheck(p.Checks, "archive_deletes", CheckBlock, p.DeleteIDs)
	p.Checks = append(p.Checks, added...)
	texts := make(map[string]string, len(c.SearchText))
	for _, st := range c.SearchText {
		if _, dup := texts[st.MessageID]; !dup && moving[st.MessageID] {
			texts[st.MessageID] = st.Text
		}
	}
	for _, id := range p.MoveIDs {
		if t, ok := texts[id]; ok {
			p.SearchText = append(p.SearchText, SearchText{MessageID: id, Text: t})
		}
	}
	return p, nil
}

// planCaller fills a caller-owned commit's plan: only archive_deletes are
// checked, and the recall writes are written once per id.
func planCaller(c *Commit, p *CommitPlan) error {
	if len(p.RemoveIDs) > 0 {
		return Invalid("remove_message_ids", "must be empty with history_owner caller (the store holds no active history of a caller-owned conversation)")
	}
	if len(c.ReplaceMessages) > 0 {
		return Invalid("replace_messages", "must be empty with history_owner caller (the originals are recall_writes)")
	}
	p.Checks = appendCheck(nil, "archive_deletes", CheckBlock, p.DeleteIDs)
	seen := make(map[string]bool, len(c.RecallWrites))
	for i := range c.RecallWrites {
		w := &c.RecallWrites[i]
		f := indexed("recall_writes", i)
		switch {
		case w.ID == "":
			return Invalid(f+".id", "is empty")
		case w.Role == RoleInvalid:
			return Invalid(f+".role", "must be user, assistant, system or tool")
		case !gjson.ValidBytes(w.Raw):
			return Invalid(f+".message", "is not valid JSON")
		}
		if seen[w.ID] {
			continue
		}
		seen[w.ID] = true
		p.RecallWrites = append(p.RecallWrites, StoredMessage{ID: w.ID, Role: w.Role.String(), Content: w.Content,
			CreatedAt: storedTime(w.CreatedAt), Raw: w.Raw, SearchText: w.SearchText})
	}
	return nil
}

// planInsert is the clip-archive's row: the conversation the commit's,
// the role system unless set, created_at the insert's (or now), and Raw
// the commit's insert_raw, or, without one, the message written as
// {"id","conversation_id","role","content","created_at"}.
func planInsert(c *Commit, now time.Time) (StoredMessage, error) {
	in := &c.Insert
	if in.ID == "" {
		return StoredMessage{}, Invalid("insert_message.id", "is empty")
	}
	if in.ConversationID != "" && in.ConversationID != c.ConversationID {
		return StoredMessage{}, Invalid("insert_message.conversation_id",
			strconv.Quote(in.ConversationID)+" differs from conversation_id "+strconv.Quote(c.ConversationID))
	}
	role := RoleSystem
	if in.Role != RoleInvalid {
		role = in.Role
	}
	created := in.CreatedAt
	if created.IsZero() {
		created = now
	}
	m := StoredMessage{ID: in.ID, Role: role.String(), Content: in.Content, CreatedAt: FormatTime(created)}
	if len(c.InsertRaw) > 0 {
		// The clip-archive as the plug-in returned it, in the history's
		// shape: the active history gives back what the caller got.
		if !gjson.ValidBytes(c.InsertRaw) {
			return StoredMessage{}, Invalid("insert_raw", "is not valid JSON")
		}
		m.Raw = c.InsertRaw
		return m, nil
	}
	m.Raw = AppendStoredMessageJSON(nil, c.ConversationID, &m)
	return m, nil
}

// AppendStoredMessageJSON writes the JSON a store keeps for a message it
// makes itself (a clip-archive committed without insert_raw, a message
// given without its JSON): {"id","conversation_id","role","content",
// "created_at"} in this order, created_at left out when "".
func AppendStoredMessageJSON(b []byte, conversationID string, m *StoredMessage) []byte {
	w := jsonWriter{b: b}
	w.raw(`{"id":`)
	w.str(m.ID)
	w.raw(`,"conversation_id":`)
	w.str(conversationID)
	w.raw(`,"role":`)
	w.str(m.Role)
	w.raw(`,"content":`)
	w.str(m.Content)
	if m.CreatedAt != "" {
		w.raw(`,"created_at":`)
		w.str(m.CreatedAt)
	}
	w.raw("}")
	return w.b
}

// storedTime is how a store keeps an instant: clipfold's format, or "" for
// the zero time (unknown).
func storedTime(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return FormatTime(t)
}

func appendCheck(checks []CommitCheck, field, must string, ids []string) []CommitCheck {
	if len(ids) == 0 {
		return checks
	}
	return append(checks, CommitCheck{Field: field, Must: must, IDs: ids})
}

// uniqueStrings returns ss without repeats, first occurrence kept, so a
// commit naming an id twice is not mistaken for a missing id.
func uniqueStrings(ss []string) []string {
	seen := make(map[string]bool, len(ss))
	out := make([]string, 0, len(ss))
	for _, s := range ss {
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}

func indexed(field string, i int) string { return field + "[" + strconv.Itoa(i) + "]" }
