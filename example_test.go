package clipfold_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log"
	"time"

	"github.com/clipfold/clipfold"
	"github.com/clipfold/clipfold/hostfuncs/store"
)

// A conversation of 40 turns about planning a trip.
func exampleHistory() []json.RawMessage {
	start := time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)
	facts := []string{
		"We booked the cabin at Lake Tahoe for June 12 to June 19.",
		"The rental car pickup is at Reno airport, confirmation RX-4471.",
		"Maya is allergic to peanuts, so no trail mix with nuts.",
		"Budget for the whole trip is 2,400 dollars.",
	}
	var out []json.RawMessage
	for i := 0; i < 40; i++ {
		role, text := "user", fmt.Sprintf("Turn %d: what else should we plan for the trip?", i)
		if i%2 == 1 {
			role, text = "assistant", fmt.Sprintf("Noted for turn %d. Let's also think about hiking gear and groceries.", i)
		}
		if i < len(facts)*2 && i%2 == 0 {
			text = facts[i/2]
		}
		b, _ := json.Marshal(map[string]any{"id": fmt.Sprintf("m%02d", i), "role": role, "content": text,
			"created_at": start.Add(time.Duration(i) * time.Minute).Format(time.RFC3339)})
		out = append(out, b)
	}
	return out
}

// Compact a history offline (in-memory SQLite, extractive summarizer),
// then find an archived fact by asking for it in plain words.
func Example() {
	ctx := context.Background()
	c, err := clipfold.Open(ctx, clipfold.Options{Config: map[string]any{"keep_recent": 6}})
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()

	res, err := c.Compress(ctx, "trip", exampleHistory(), nil)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("compressed %d messages into %d batch(es); %d messages remain\n",
		res.MessagesCompressed, res.BatchesCreated, len(res.History))

	hits, err := c.Search(ctx, "where do we pick up the car?", store.SearchOptions{ConversationID: "trip", Limit: 3})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("best hit: %s %s: %s\n", hits[0].Kind, hits[0].ID, hits[0].OwnText())
	// Output:
	// compressed 34 messages into 2 batch(es); 7 messages remain
	// best hit: message m02: The rental car pickup is at Reno airport, confirmation RX-4471.
}

// Ask whether a history is due for compaction before each model call.
func ExampleCompactor_ShouldCompact() {
	ctx := context.Background()
	c, err := clipfold.Open(ctx, clipfold.Options{Config: map[string]any{"model_max_tokens": 600}})
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	due, err := c.ShouldCompact(ctx, exampleHistory(), nil)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("due=%v: ~%d tokens, limit %d\n", due.Due, due.Tokens, due.Limit)
	// Output:
	// due=true: ~906 tokens, limit 480
}

// Bad input is refused with an error code (docs/spec.md#errors-and-limits) and
// the offending field.
func ExampleCallError() {
	ctx := context.Background()
	c, err := clipfold.Open(ctx, clipfold.Options{})
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	_, err = c.Score(ctx, []json.RawMessage{json.RawMessage(`{"role":"robot","content":"hi"}`)})
	fmt.Println(err)
	// Output:
	// score: invalid_input: messages[0].role: must be one of user, assistant, system, tool, got "robot"
}

// Before each model call of an agent loop: the system prompt and the
// tools counted once (OverheadTokens), and after each model call the
// provider's usage, which wins over the estimate of the messages it
// counted.
func ExampleCompactor_OverheadTokens() {
	ctx := context.Background()
	c, err := clipfold.Open(ctx, clipfold.Options{Config: map[string]any{"model_max_tokens": 1000}})
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	system := "You plan family trips. Answer briefly."
	tools := []map[string]any{{"name": "book_cabin", "description": "Books a cabin for a date range.",
		"input_schema": map[string]any{"type": "object", "properties": map[string]any{
			"from": map[string]any{"type": "string"}, "to": map[string]any{"type": "string"}}}}}
	overhead, err := c.OverheadTokens(ctx, system, tools)
	if err != nil {
		log.Fatal(err)
	}
	history := exampleHistory()[:9] // ends with a user message: the model is called next
	due, err := c.ShouldCompact(ctx, history, &clipfold.ShouldCompactOptions{
		Config: map[string]any{"overhead_tokens": overhead}})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("first call: due=%v, the system prompt and tools counted: %v\n", due.Due, overhead > 0 && due.Tokens > overhead)

	// The provider answered, reporting 930 input tokens for those 9
	// messages; the answer and the next user message follow.
	history = exampleHistory()[:11]
	due, err = c.ShouldCompact(ctx, history, &clipfold.ShouldCompactOptions{
		Usage: &clipfold.Usage{InputTokens: 930, Messages: 9}})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("next call: due=%v, the provider's count holds: %v\n", due.Due, due.Tokens > 930)
	// Output:
	// first call: due=false, the system prompt and tools counted: true
	// next call: due=true, the provider's count holds: true
}
