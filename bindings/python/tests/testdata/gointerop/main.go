// Command gointerop opens a clipfold SQLite database with the Go store, to
// prove that the Python store (bindings/python) and the Go store read and
// write the same files. It lives under testdata so `go ./...` skips it;
// the Python tests run it with `go run`.
//
//	gointerop read DB CONVERSATION PREFIX [RECALL_ID…]   prints JSON
//	gointerop write DB CONVERSATION                      appends g1..g3, commits g1,g2 away
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"time"

	"github.com/clipfold/clipfold/core"
	"github.com/clipfold/clipfold/hostfuncs/store"
	"github.com/clipfold/clipfold/hostfuncs/store/sqlite"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "gointerop:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	if len(args) < 3 {
		return fmt.Errorf("usage: gointerop read|write DB CONVERSATION …")
	}
	ctx := context.Background()
	s, err := sqlite.Open(args[1])
	if err != nil {
		return err
	}
	defer s.Close()
	conv := args[2]
	switch args[0] {
	case "read":
		msgs, err := s.ActiveMessages(ctx, conv)
		if err != nil {
			return err
		}
		out := map[string]any{}
		var raws []json.RawMessage
		for _, m := range msgs {
			raws = append(raws, m.Raw)
		}
		out["active"] = raws
		blocks, err := s.ListBlocks(ctx, "archival", args[3])
		if err != nil {
			return err
		}
		var bl []map[string]string
		for _, b := range blocks {
			bl = append(bl, map[string]string{"id": b.ID, "label": b.Label, "content": b.Content})
		}
		out["blocks"] = bl
		rec := map[string]json.RawMessage{}
		for _, id := range args[4:] {
			m, err := s.Recall(ctx, conv, id)
			if err != nil {
				return err
			}
			rec[id] = m.Raw
		}
		out["recall"] = rec
		hits, err := s.Search(ctx, "tokenizer", store.SearchOptions{ConversationID: conv})
		if err != nil {
			return err
		}
		out["search_hits"] = len(hits)
		return json.NewEncoder(os.Stdout).Encode(out)
	case "write":
		t := time.Date(2026, 2, 28, 12, 0, 0, 0, time.UTC)
		var msgs []store.Message
		for i := 1; i <= 3; i++ {
			msgs = append(msgs, store.Message{ID: fmt.Sprintf("g%d", i), Role: "user",
				Content: fmt.Sprintf("go message %d about the tokenizer", i), CreatedAt: t.Add(time.Duration(i) * time.Second)})
		}
		if err := s.AppendMessages(ctx, conv, msgs); err != nil {
			return err
		}
		return s.Commit(ctx, &core.Commit{ConversationID: conv, OperationID: "op_go",
			ArchiveWrites:    []core.ArchiveWrite{{Label: "compaction-batch-" + conv + "-2026-02-28T12:00:02.000Z", Content: "go summary of the tokenizer", Tier: "archival", Reason: "test"}},
			RemoveMessageIDs: []string{"g1", "g2"},
			Insert:           core.InsertMessage{ID: "gclip", ConversationID: conv, Role: core.RoleSystem, Content: "[Context Summary — 2 messages compressed]", CreatedAt: t}})
	}
	return fmt.Errorf("unknown command %q", args[0])
}
