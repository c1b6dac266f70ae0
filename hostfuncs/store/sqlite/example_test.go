package sqlite_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"time"

	"github.com/clipfold/clipfold"
	"github.com/clipfold/clipfold/hostfuncs/store"
	"github.com/clipfold/clipfold/hostfuncs/store/sqlite"
)

// Keep a conversation's archive in a SQLite file: compact into it, then,
// in another run (here: after closing it), open the file read-only and
// search what was compacted.
func Example() {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "clipfold-example-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "archive.db")

	st, err := sqlite.Open(path) // created, with its schema, on first use
	if err != nil {
		log.Fatal(err)
	}
	c, err := clipfold.Open(ctx, clipfold.Options{Store: st, Config: map[string]any{"keep_recent": 4}})
	if err != nil {
		log.Fatal(err)
	}
	res, err := c.Compress(ctx, "trip", tripHistory(), nil)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%d messages compacted into the archive, %d remain active\n", res.MessagesCompressed, len(res.History))
	_ = c.Close()
	_ = st.Close() // a store passed in Options is the caller's to close

	ro, err := sqlite.OpenReadOnly(path) // never writes: readable by a user who cannot write the file
	if err != nil {
		log.Fatal(err)
	}
	defer ro.Close()
	hits, err := ro.Search(ctx, "where do we pick up the rental car?", store.SearchOptions{ConversationID: "trip", Limit: 1})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%s %s: %s\n", hits[0].Kind, hits[0].ID, hits[0].OwnText())
	// Output:
	// 16 messages compacted into the archive, 5 remain active
	// message m04: The rental car pickup is at Reno airport, confirmation RX-4471.
}

// tripHistory is a conversation of 20 turns; a few state facts.
func tripHistory() []json.RawMessage {
	start := time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)
	facts := map[int]string{
		2: "We booked the cabin at Lake Tahoe for June 12 to June 19.",
		4: "The rental car pickup is at Reno airport, confirmation RX-4471.",
		6: "Maya is allergic to peanuts, so no trail mix with nuts.",
	}
	var out []json.RawMessage
	for i := 0; i < 20; i++ {
		role, text := "user", fmt.Sprintf("Turn %d: what else should we plan for the trip?", i)
		if i%2 == 1 {
			role, text = "assistant", fmt.Sprintf("Noted for turn %d. Let's also think about hiking gear and groceries.", i)
		}
		if f, ok := facts[i]; ok {
			text = f
		}
		b, _ := json.Marshal(map[string]any{"id": fmt.Sprintf("m%02d", i), "role": role, "content": text,
			"created_at": start.Add(time.Duration(i) * time.Minute).Format(time.RFC3339)})
		out = append(out, b)
	}
	return out
}
