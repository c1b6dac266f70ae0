package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/tidwall/gjson"

	"github.com/clipfold/clipfold/hostfuncs/embeddings/embeddingstest"
)

// numberedFile writes a conversation file whose messages are numbered
// msg_0, msg_1, … (as every conversation of such a caller is), about
// topic, and returns its path.
func numberedFile(t *testing.T, dir, name, topic string, n int) string {
	t.Helper()
	msgs := make([]map[string]any, n)
	for i := range msgs {
		role := "user"
		if i%2 == 1 {
			role = "assistant"
		}
		msgs[i] = map[string]any{"id": fmt.Sprintf("msg_%d", i), "role": role,
			"content": fmt.Sprintf("Turn %d: the %s plan, step %d, needs a budget of %d euros and a review by the %s team.", i, topic, i, 100+i, topic)}
	}
	b, err := json.Marshal(msgs)
	require.NoError(t, err)
	p := filepath.Join(dir, name)
	require.NoError(t, os.WriteFile(p, b, 0o644))
	return p
}

// Two conversations numbering their messages alike are both archived;
// recall asks which one when the id is ambiguous and prints the one named.
func TestSameIDsInTwoConversations(t *testing.T) {
	dir := t.TempDir()
	a := numberedFile(t, dir, "alpha.json", "harbour", 40)
	b := numberedFile(t, dir, "beta.json", "orchard", 40)
	ra := ok(t, dir, "compact", a, "--conversation", "alpha", "--json", "--quiet")
	require.Positive(t, gjson.Get(ra.stdout, "messages_compressed").Int())
	rb := ok(t, dir, "compact", b, "--conversation", "beta", "--json", "--quiet")
	require.Positive(t, gjson.Get(rb.stdout, "messages_compressed").Int(), "beta's messages are stored and compacted")
	// Again: nothing new to append, nothing refused.
	ok(t, dir, "compact", b, "--conversation", "beta", "--quiet")

	show := gjson.Parse(ok(t, dir, "show", "beta", "--json").stdout).Array()
	require.NotEmpty(t, show)
	for _, m := range show[1:] {
		require.Contains(t, m.Get("content").String(), "orchard", "beta's active history is beta's")
	}

	r := runCLI(t, dir, nil, "recall", "msg_0")
	require.Equal(t, 1, r.code, r.stdout)
	require.Contains(t, r.stderr, `message id "msg_0" is in recall storage for several conversations (alpha, beta)`)
	require.Contains(t, r.stderr, "--conversation")
	got := ok(t, dir, "recall", "msg_0", "--conversation", "beta").stdout
	require.JSONEq(t, `{"id":"msg_0","role":"user","content":"Turn 0: the orchard plan, step 0, needs a budget of 100 euros and a review by the orchard team."}`, got)
	require.Contains(t, ok(t, dir, "recall", "msg_1", "--conversation", "alpha").stdout, "harbour")
	r = runCLI(t, dir, nil, "recall", "msg_0", "--conversation", "gamma")
	require.Equal(t, 1, r.code)
	require.Contains(t, r.stderr, `recall storage of conversation "gamma"`)

	s := ok(t, dir, "search", "103 euros").stdout
	require.Contains(t, s, "message msg_3 ")
	require.Contains(t, s, "Print one in full: clipfold recall ID --conversation CONVERSATION_ID")
	s = ok(t, dir, "search", "orchard", "--conversation", "beta").stdout
	require.Contains(t, s, "Print one in full: clipfold recall ID\n", "one conversation: the id is enough")
}

// asReader runs the binary as a user who cannot write dir (nobody, when
// the tests run as root, who can write any file), else as this user:
// dir and the database in it are read-only either way.
func asReader(t *testing.T, dir string, env []string, args ...string) result {
	t.Helper()
	cmd := exec.Command(readerBin(t), args...)
	cmd.Dir = dir
	cmd.Env = cleanEnv(append([]string{"HOME=" + dir}, env...))
	if os.Geteuid() == 0 {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	}
	return execCLI(t, cmd)
}

// readerBin is the binary linked (else copied) where any user may run it
// (the test build's directory is private to its owner).
func readerBin(t *testing.T) string {
	t.Helper()
	if os.Geteuid() != 0 {
		return bin
	}
	d, err := os.MkdirTemp("", "clipfold-reader-")
	require.NoError(t, err)
	t.Cleanup(func() { _ = os.RemoveAll(d) })
	require.NoError(t, os.Chmod(d, 0o755))
	p := filepath.Join(d, "clipfold")
	if os.Link(bin, p) == nil {
		return p
	}
	src, err := os.Open(bin)
	require.NoError(t, err)
	defer src.Close()
	dst, err := os.OpenFile(p, os.O_CREATE|os.O_WRONLY, 0o755)
	require.NoError(t, err)
	_, err = io.Copy(dst, src)
	require.NoError(t, err)
	require.NoError(t, dst.Close())
	return p
}

// files lists dir's files with their contents.
func files(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		require.NoError(t, err)
		out[e.Name()] = string(b)
	}
	return out
}

func fileNames(m map[string]string) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// A read-only archive can be read: search, show and recall work on a
// database file of mode 0444 in a directory of mode 0555, run by a user
// who can write neither, and change nothing there.
func TestReadOnlyArchive(t *testing.T) {
	work := t.TempDir()
	file := conversationFile(t, "support-chat")
	ok(t, work, "compact", file, "--db", "archive.db", "--quiet")
	hits := gjson.Parse(ok(t, work, "search", "refund", "--db", "archive.db", "--json", "--limit", "100").stdout).Get("hits").Array()
	require.NotEmpty(t, hits)
	var msgID, blockID string
	for _, h := range hits {
		switch kind := h.Get("kind").String(); {
		case kind == "message" && msgID == "":
			msgID = h.Get("id").String()
		case kind == "batch" && blockID == "":
			blockID = h.Get("id").String()
		}
	}
	require.NotEmpty(t, msgID)
	require.NotEmpty(t, blockID)

	// A directory of its own, any user may enter (t.TempDir's parent is
	// private to its owner).
	dir, err := os.MkdirTemp("", "clipfold-read-only-")
	require.NoError(t, err)
	t.Cleanup(func() { _ = os.Chmod(dir, 0o755); _ = os.RemoveAll(dir) })
	require.NoError(t, os.Rename(filepath.Join(work, "archive.db"), filepath.Join(dir, "archive.db")))
	require.NoError(t, os.Chmod(filepath.Join(dir, "archive.db"), 0o444))
	require.NoError(t, os.Chmod(dir, 0o555))
	before := files(t, dir)
	require.Equal(t, []string{"archive.db"}, fileNames(before))

	r := asReader(t, dir, nil, "search", "refund", "--db", "archive.db")
	require.Equal(t, 0, r.code, "stdout:\n%s\nstderr:\n%s", clip(r.stdout), r.stderr)
	require.Contains(t, r.stdout, msgID)
	r = asReader(t, dir, nil, "search", "refund", "--db", "archive.db", "--conversation", "conv-support-cust-208841", "--json")
	require.Equal(t, 0, r.code, r.stderr)
	require.NotEmpty(t, gjson.Get(r.stdout, "hits").Array())
	r = asReader(t, dir, nil, "show", "conv-support-cust-208841", "--db", "archive.db")
	require.Equal(t, 0, r.code, r.stderr)
	require.Contains(t, r.stdout, "[Context Summary — ")
	r = asReader(t, dir, nil, "recall", msgID, "--db", "archive.db")
	require.Equal(t, 0, r.code, r.stderr)
	require.Equal(t, msgID, gjson.Get(r.stdout, "id").String())
	r = asReader(t, dir, nil, "recall", blockID, "--db", "archive.db")
	require.Equal(t, 0, r.code, r.stderr)
	require.Contains(t, r.stdout, "batch "+blockID)
	r = asReader(t, dir, []string{"CLIPFOLD_DB=archive.db"}, "recall", msgID, "--conversation", "conv-support-cust-208841")
	require.Equal(t, 0, r.code, r.stderr)

	// With embeddings, search stores the vectors it computes when it can;
	// here it cannot: it ranks by the vectors stored (none) and says so.
	srv := embeddingstest.NewServer(t)
	r = asReader(t, dir, nil, "search", "refund", "--db", "archive.db", "--embeddings-provider", "openai",
		"--embeddings-model", "synonyms-v1", "--embeddings-base-url", srv.URL)
	require.Equal(t, 0, r.code, r.stderr)
	require.Contains(t, r.stdout, msgID)
	require.Contains(t, r.stderr, "open read-only")
	require.Equal(t, [][]string{{"refund"}}, srv.Requests(), "only the query is embedded")

	require.Equal(t, before, files(t, dir), "reading wrote nothing and left nothing")

	// Writing is what needs write access, and it says so.
	r = asReader(t, dir, nil, "compact", file, "--db", "archive.db", "--quiet")
	require.NotEqual(t, 0, r.code)
	require.True(t, strings.Contains(r.stderr, "readonly") || strings.Contains(r.stderr, "read-only"), r.stderr)
	require.Equal(t, before, files(t, dir))
}
