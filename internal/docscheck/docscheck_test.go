package docscheck

import (
	"bytes"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"unicode"
)

// root is the repository root, from this package's directory.
const root = "../.."

// specPath is the contract, from the repository root.
const specPath = "docs/spec.md"

// finding is one broken rule: where, and what.
type finding struct {
	path string
	line int
	msg  string
}

func (f finding) String() string { return fmt.Sprintf("%s:%d: %s", f.path, f.line, f.msg) }

// repo is the repository's text as the checks see it: its tracked files
// and the text of each.
type repo struct {
	files   []string          // slash-separated, from the root, sorted
	tracked map[string]bool   // every file and every directory holding one
	text    map[string]string // text files only
	anchors map[string]map[string]bool
}

// loadRepo reads the tracked files (git ls-files; without git, every file
// under the root but build output and installed dependencies).
func loadRepo(t *testing.T) *repo {
	t.Helper()
	files, err := gitFiles()
	if err != nil {
		t.Logf("git ls-files: %v; walking the tree instead", err)
		files, err = walkFiles()
		if err != nil {
			t.Fatal(err)
		}
	}
	r := &repo{tracked: map[string]bool{}, text: map[string]string{}, anchors: map[string]map[string]bool{}}
	for _, f := range files {
		b, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(f)))
		if err != nil {
			if os.IsNotExist(err) {
				continue // deleted in the work tree, not yet committed
			}
			t.Fatal(err)
		}
		r.files = append(r.files, f)
		for p := f; p != "." && p != "/"; p = path.Dir(p) {
			r.tracked[p] = true
		}
		if isText(b) {
			r.text[f] = string(b)
		}
	}
	slices.Sort(r.files)
	if _, ok := r.text[specPath]; !ok {
		t.Fatalf("%s is not in the repository", specPath)
	}
	return r
}

func gitFiles() ([]string, error) {
	cmd := exec.Command("git", "ls-files", "-z")
	cmd.Dir = root
	out, err := cmd.Output()
	if err != nil {
		return nil, err
	}
	var files []string
	for _, f := range strings.Split(string(out), "\x00") {
		if f != "" {
			files = append(files, f)
		}
	}
	return files, nil
}

// skippedDirs are never sources: build output, installed dependencies.
var skippedDirs = map[string]bool{".git": true, "build": true, "node_modules": true, "target": true, ".venv": true, "__pycache__": true, "dist": true}

func walkFiles() ([]string, error) {
	var files []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && skippedDirs[d.Name()] {
			return filepath.SkipDir
		}
		if d.Type().IsRegular() {
			rel, err := filepath.Rel(root, p)
			if err != nil {
				return err
			}
			files = append(files, filepath.ToSlash(rel))
		}
		return nil
	})
	return files, err
}

// isText: no NUL byte in the first 8 KiB.
func isText(b []byte) bool {
	return !bytes.Contains(b[:min(len(b), 8192)], []byte{0})
}

// ownDir holds these checks, whose examples break the rules on purpose.
const ownDir = "internal/docscheck/"

// exempt reports whether the rules skip a file: these checks' own
// examples, and data rather than the project's own words — what lies
// under a testdata directory (conversations, tokenizer corpora,
// trajectories, fuzz corpora) other than its READMEs, the JSON Schemas and
// the conformance vectors, which the project writes.
func exempt(p string) bool {
	if strings.HasPrefix(p, ownDir) {
		return true
	}
	if !strings.HasPrefix(p, "testdata/") && !strings.Contains(p, "/testdata/") {
		return false
	}
	if strings.HasSuffix(p, ".md") || strings.HasPrefix(p, "testdata/schema/") || strings.HasPrefix(p, "testdata/vectors/") {
		return false
	}
	return true
}

// The contract's old names, a document outside the repository, and
// section numbers, which shift: sections are cited by anchor.
var outsideContract = []*regexp.Regexp{regexp.MustCompile(`SPEC ?§|shared/SPEC|\bSPEC\b|§ ?[0-9]`)}

// The history of the project's own writing: tracker issues and working
// sessions. A decision is named by what it decided.
var ownHistory = []*regexp.Regexp{
	regexp.MustCompile(`(?i)\bissues? #?[0-9]+`),
	// A working session is "session" in lower case; an SDK's Session
	// object ("this Session") is named by its class.
	regexp.MustCompile(`\b(?i:this|that|next|previous|last|earlier|later|same|first|second|third|fourth|fifth|sixth|seventh|eighth|ninth|tenth) session\b`),
	regexp.MustCompile(`\bmid-session\b|\b(?i:session) start\b`),
	regexp.MustCompile(`(?i)\bthe (?:probe|lead)\b`),
}

// forbidden reports each line of text that matches one of res.
func forbidden(p, text string, res []*regexp.Regexp, why string) []finding {
	var out []finding
	for i, line := range strings.Split(text, "\n") {
		for _, re := range res {
			for _, m := range re.FindAllString(line, -1) {
				out = append(out, finding{p, i + 1, fmt.Sprintf("%q: %s", m, why)})
			}
		}
	}
	return out
}

// specRef is a reference to a section of the contract anywhere: from the
// root in code (docs/spec.md#…), or relative in Markdown (../docs/spec.md#…).
var specRef = regexp.MustCompile(`docs/spec\.md#([\p{L}\p{N}_-]*)`)

// specRefs reports each docs/spec.md#anchor of text whose anchor the
// contract lacks.
func specRefs(p, text string, anchors map[string]bool) []finding {
	var out []finding
	for i, line := range strings.Split(text, "\n") {
		for _, m := range specRef.FindAllStringSubmatch(line, -1) {
			if !anchors[m[1]] {
				out = append(out, finding{p, i + 1, fmt.Sprintf("%s: %s has no section #%s", m[0], specPath, m[1])})
			}
		}
	}
	return out
}

var (
	fence      = regexp.MustCompile("^\\s{0,3}(```+|~~~+)")
	atxHeading = regexp.MustCompile(`^\s{0,3}#{1,6}\s+(.*?)(?:\s+#+)?\s*$`)
	htmlAnchor = regexp.MustCompile(`<a\s+(?:id|name)="([^"]+)"`)
	inlineLink = regexp.MustCompile(`\[([^\]]*)\]\([^)]*\)`)
	htmlTag    = regexp.MustCompile(`<[^>]+>`)
	codeSpan   = regexp.MustCompile("`+[^`]*`+")
	mdLink     = regexp.MustCompile(`\]\(\s*<?([^)\s>]+)>?(?:\s+(?:"[^"]*"|'[^']*'|\([^)]*\)))?\s*\)`)
	mdRefDef   = regexp.MustCompile(`^\s{0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s|$)`)
	urlScheme  = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9+.-]*:`)
	lineAnchor = regexp.MustCompile(`^L[0-9]+(?:-L[0-9]+)?$`)
)

// slug is GitHub's anchor for a heading: its text as rendered (links by
// their text, no markup), lower-cased, punctuation dropped, each space a
// hyphen.
func slug(heading string) string {
	s := inlineLink.ReplaceAllString(heading, "$1")
	s = htmlTag.ReplaceAllString(s, "")
	var b strings.Builder
	for _, r := range strings.ToLower(s) {
		switch {
		case r == ' ':
			b.WriteByte('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsNumber(r) || unicode.IsMark(r):
			b.WriteRune(r)
		}
	}
	return b.String()
}

// proseLines is text with fenced code blocks blanked (line numbers kept):
// their headings and links are not the document's.
func proseLines(text string) []string {
	lines := strings.Split(text, "\n")
	inFence := ""
	for i, l := range lines {
		m := fence.FindStringSubmatch(l)
		switch {
		case inFence == "" && m != nil:
			inFence = m[1][:1]
			lines[i] = ""
		case inFence != "":
			if m != nil && m[1][:1] == inFence {
				inFence = ""
			}
			lines[i] = ""
		}
	}
	return lines
}

// anchorsOf lists the anchors of a Markdown text: each heading's slug
// (a repeated one gets -1, -2, … as on GitHub) and each <a id>.
func anchorsOf(text string) map[string]bool {
	out := map[string]bool{}
	seen := map[string]int{}
	for _, l := range proseLines(text) {
		for _, m := range htmlAnchor.FindAllStringSubmatch(l, -1) {
			out[m[1]] = true
		}
		m := atxHeading.FindStringSubmatch(l)
		if m == nil {
			continue
		}
		s := slug(m[1])
		if n := seen[s]; n > 0 {
			out[fmt.Sprintf("%s-%d", s, n)] = true
		} else {
			out[s] = true
		}
		seen[s]++
	}
	return out
}

func (r *repo) anchorsFor(p string) map[string]bool {
	if a, ok := r.anchors[p]; ok {
		return a
	}
	a := anchorsOf(r.text[p])
	r.anchors[p] = a
	return a
}

// mdLinks reports each relative link of a Markdown file that does not
// resolve: its target is not tracked, or is Markdown without the anchor.
func (r *repo) mdLinks(p string) []finding {
	var out []finding
	for i, l := range proseLines(r.text[p]) {
		l = codeSpan.ReplaceAllString(l, "")
		var targets []string
		for _, m := range mdLink.FindAllStringSubmatch(l, -1) {
			targets = append(targets, m[1])
		}
		if m := mdRefDef.FindStringSubmatch(l); m != nil {
			targets = append(targets, m[1])
		}
		for _, target := range targets {
			if msg := r.resolve(p, target); msg != "" {
				out = append(out, finding{p, i + 1, fmt.Sprintf("link %s: %s", target, msg)})
			}
		}
	}
	return out
}

// resolve says why target, a link in the Markdown file from, does not
// resolve, or "" when it does.
func (r *repo) resolve(from, target string) string {
	if urlScheme.MatchString(target) || strings.HasPrefix(target, "//") {
		return ""
	}
	file, anchor, _ := strings.Cut(target, "#")
	dest := from
	if file != "" {
		if strings.HasPrefix(file, "/") {
			dest = path.Clean(strings.TrimPrefix(file, "/"))
		} else {
			dest = path.Join(path.Dir(from), file)
		}
		if dest == ".." || strings.HasPrefix(dest, "../") {
			return "outside the repository"
		}
		if dest != "." && !r.tracked[dest] {
			return dest + " is not in the repository"
		}
	}
	if anchor == "" || lineAnchor.MatchString(anchor) || !strings.HasSuffix(dest, ".md") {
		return ""
	}
	if _, ok := r.text[dest]; !ok || !r.anchorsFor(dest)[anchor] {
		return fmt.Sprintf("%s has no section #%s", dest, anchor)
	}
	return ""
}

func report(t *testing.T, what string, fs []finding) {
	t.Helper()
	const most = 2000
	for i, f := range fs {
		if i == most {
			t.Errorf("… and %d more", len(fs)-most)
			break
		}
		t.Error(f)
	}
	if len(fs) > 0 {
		t.Logf("%d %s", len(fs), what)
	}
}

// TestReferencesResolve: the contract is cited inside the repository, by
// section anchors that exist, and every relative Markdown link resolves.
func TestReferencesResolve(t *testing.T) {
	r := loadRepo(t)
	specAnchors := r.anchorsFor(specPath)
	var fs []finding
	for _, p := range r.files {
		text, ok := r.text[p]
		if !ok || exempt(p) {
			continue
		}
		fs = append(fs, forbidden(p, text, outsideContract, "the contract is docs/spec.md, cited by section anchor")...)
		fs = append(fs, specRefs(p, text, specAnchors)...)
		if strings.HasSuffix(p, ".md") {
			fs = append(fs, r.mdLinks(p)...)
		}
	}
	report(t, "references that do not resolve inside the repository", fs)
}

// TestSpeaksOfItself: no tracker issue numbers, no working sessions.
func TestSpeaksOfItself(t *testing.T) {
	r := loadRepo(t)
	var fs []finding
	for _, p := range r.files {
		if text, ok := r.text[p]; ok && !exempt(p) {
			fs = append(fs, forbidden(p, text, ownHistory, "name what was decided (RATIONALE.md), not the history of the writing")...)
		}
	}
	report(t, "mentions of the project's own history", fs)
}

// TestRulesCatch shows each rule on small texts: what it refuses, and
// what it lets through.
func TestRulesCatch(t *testing.T) {
	for heading, want := range map[string]string{
		"Counting tokens and the window":                 "counting-tokens-and-the-window",
		"llm_complete":                                   "llm_complete",
		"buildClipArchive":                               "buildcliparchive",
		"The commit (`compaction_commit`), step by step": "the-commit-compaction_commit-step-by-step",
		"Re-summarization":                               "re-summarization",
		"What [the spec](docs/spec.md) says — in short":  "what-the-spec-says--in-short",
		"Où l'on compte":                                 "où-lon-compte",
	} {
		if got := slug(heading); got != want {
			t.Errorf("slug(%q) = %q, want %q", heading, got, want)
		}
	}

	spec := "# Title\n\n## Wire types\n\n### Message\n\n```\n## Not a heading\n```\n\n<a id=\"clip-format\"></a>\n### Message\n"
	anchors := anchorsOf(spec)
	for _, a := range []string{"title", "wire-types", "message", "message-1", "clip-format"} {
		if !anchors[a] {
			t.Errorf("anchor %q missing from %v", a, anchors)
		}
	}
	if anchors["not-a-heading"] {
		t.Error("a heading inside a code block counted")
	}

	count := func(fs []finding) int { return len(fs) }
	for text, want := range map[string]int{
		`// Batch is one archived summary (SPEC §2).`:           1,
		`see [SPEC](../shared/SPEC.md)`:                         2,
		`// the SPEC's defaults`:                                1,
		`docs/benchmarks.md §5, beside`:                         1,
		`// Batch is one summary (docs/spec.md#batch).`:         0,
		`const SPEC_EXPORTS = ['score']`:                        0,
		`// specification, spec.md, "the spec's Message shape"`: 0,
	} {
		if got := count(forbidden("x.go", text, outsideContract, "")); got != want {
			t.Errorf("%q: %d findings, want %d", text, got, want)
		}
	}
	for text, want := range map[string]int{
		`## Where the rest of the time goes (issue 20)`:      1,
		`after Issue #16's summarizer`:                       1,
		`(docs/benchmarks-history.md, fifth session)`:        1,
		`the build from before this session's changes`:       1,
		`session start 6d848dc, mid-session 29.7 ms`:         2,
		`the lead asked; the probe found`:                    2,
		`the runner hands this Session its RunContext`:       0,
		`This session's slow machine`:                        1,
		`the breaker lets one probe compaction through`:      0,
		`a conversation session of LoCoMo; 21 sessions`:      0,
		`the issue tracker; see issues for the design notes`: 0,
	} {
		if got := count(forbidden("x.md", text, ownHistory, "")); got != want {
			t.Errorf("%q: %d findings, want %d", text, got, want)
		}
	}

	for text, want := range map[string]int{
		"see docs/spec.md#wire-types and docs/spec.md#message.": 0,
		"see docs/spec.md#clip-format":                          0,
		"see docs/spec.md#wire-type, [x](../docs/spec.md#nope)": 2,
		"(docs/spec.md#) is no section":                         1,
	} {
		if got := count(specRefs("x.go", text, anchors)); got != want {
			t.Errorf("%q: %d findings, want %d", text, got, want)
		}
	}

	r := &repo{
		tracked: map[string]bool{"docs": true, "docs/spec.md": true, "README.md": true, "core": true, "core/tokens.go": true},
		text:    map[string]string{"docs/spec.md": spec},
		anchors: map[string]map[string]bool{},
	}
	for link, want := range map[string]string{
		"docs/spec.md#wire-types":       "",
		"docs/spec.md#message-1":        "",
		"core/tokens.go#L22":            "",
		"core/":                         "",
		"https://extism.org/docs#x":     "",
		"docs/spec.md#counting":         "docs/spec.md has no section #counting",
		"../shared/SPEC.md":             "outside the repository",
		"docs/missing.md":               "docs/missing.md is not in the repository",
		"/docs/spec.md#message":         "",
		"docs/../core/tokens.go":        "",
		"bindings/node/README.md#intro": "bindings/node/README.md is not in the repository",
		"#wire-types":                   "README.md has no section #wire-types",
	} {
		if got := r.resolve("README.md", link); got != want {
			t.Errorf("resolve(README.md, %q) = %q, want %q", link, got, want)
		}
	}
	r.text["docs/a.md"] = "# A\n\nSee [the spec](spec.md#message), [`x`](spec.md#nope), `[code](nowhere.md)`,\n" +
		"[ref]: ../missing.md\n\n```\n[in a block](nowhere.md)\n```\n"
	r.tracked["docs/a.md"] = true
	got := r.mdLinks("docs/a.md")
	if len(got) != 2 || got[0].line != 3 || got[1].line != 4 {
		t.Errorf("mdLinks(docs/a.md) = %v, want the #nope link on line 3 and the missing file on line 4", got)
	}
}
