package doclinks

import (
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"testing/fstest"
)

// repoRoot is the repository root, two levels above this package.
func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Fatalf("repository root not found at %s: %v", root, err)
	}
	return root
}

// TestRepository is the check itself: every link of README.md and docs/ resolves, and
// every design citation in the repository names a section that exists in docs/design.
func TestRepository(t *testing.T) {
	problems, err := Check(os.DirFS(repoRoot(t)))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Error(p)
	}
}

// TestDesignIsSelfContained: the design documents describe the behaviour in the
// repository's own words and cite nothing outside it.
func TestDesignIsSelfContained(t *testing.T) {
	fsys := os.DirFS(repoRoot(t))
	names, err := fs.Glob(fsys, DesignDir+"/*.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range CitedNames {
		if !slices.Contains(names, DesignDir+"/"+n+".md") {
			t.Errorf("%s/%s.md is missing", DesignDir, n)
		}
	}
	for _, n := range names {
		b, err := fs.ReadFile(fsys, n)
		if err != nil {
			t.Fatal(err)
		}
		for _, bad := range []string{"../shared", "/work/shared"} {
			if strings.Contains(string(b), bad) {
				t.Errorf("%s cites %s", n, bad)
			}
		}
	}
}

// tree is a small repository whose references are partly made up.
var tree = fstest.MapFS{
	"go.mod": {Data: []byte("module example.com/x\n")},
	"README.md": {Data: []byte(strings.Join([]string{
		"# X",
		"See [the design](docs/design/SEMANTICS.md) and [pre-execute](docs/design/SEMANTICS.md#41-toolspre-execute).",
		"[missing file](docs/nope.md)",                            // line 3: bad
		"[missing anchor](docs/design/SEMANTICS.md#99-nothing)",   // line 4: bad
		"[outside](../shared/design/SEMANTICS.md)",                // line 5: bad
		"[web](https://example.com/x.md) [self](#x) [dir](docs/)", // fine
		"```",
		"[in code](not/checked.md)",
		"```",
		"`[inline](not/checked.md)` [ref]: docs/also-missing.md", // line 10: bad, a reference definition only at line start
		"[ref2]: docs/also-missing.md",                           // line 11: bad
	}, "\n"))},
	"docs/design/SEMANTICS.md": {Data: []byte(strings.Join([]string{
		"# Semantics",
		"## Part A: dsh decisions",
		"### A.7 Halt is a decision",
		"### A.8 Reject has a reason",
		"## Part B",
		"### §0 Shared vocabulary",
		"### §4.1 tools/pre-execute",
		"#### §4.2 Stage A",
		"[back](#a7-halt-is-a-decision) [bad](#a9-nothing)", // line 9: bad
	}, "\n"))},
	"docs/design/HOOK-PROTOCOLS.md": {Data: []byte(strings.Join([]string{
		"# Hooks",
		"### Bridge decision 1: baseline",
		"### Bridge decision 2: Codex",
		"## §4 Scenarios",
		"### §2.3 stdin",
		"### §2.4 matchers",
	}, "\n"))},
	"pkg/x.go": {Data: []byte(strings.Join([]string{
		"package x",
		"// Good: (docs/design/SEMANTICS.md#41-toolspre-execute), docs/design/SEMANTICS.md#a7-halt-is-a-decision,",
		"// docs/design/HOOK-PROTOCOLS.md#bridge-decision-2-codex (18-28) and docs/design/HOOK-PROTOCOLS.md.",
		`var doc = "a listener (docs/design/SEMANTICS.md#42-stage-a) and\ndocs/design/SEMANTICS.md#0-shared-vocabulary"`,
		"// Made up: docs/design/SEMANTICS.md#49-nothing here,", // line 5
		"// and docs/design/NOTES.md,",                                         // line 6: no such document
		"// and docs/design/REWRITE-COMPACTION.md#17-approval.",                // line 7: no such document
		"// Old form: SEMANTICS.md B §4.1, HOOK-PROTOCOLS.md, decision 2;",     // line 8: two bare citations
		"// a section in text: docs/design/SEMANTICS.md §4.2, §4.9 (made up).", // line 9
		"// Not citations: README.md, mySEMANTICS.md, docs/SEMANTICS.md §9.",   // fine
	}, "\n"))},
	"spec/x.cue": {Data: []byte(strings.Join([]string{
		"// see SEMANTICS.md §5.2", // line 1: bare
		"package x",
		`good: refs: ["SEMANTICS B4.1", "SEMANTICS A8", "SEMANTICS B0", "HOOK-PROTOCOLS decision 2", "HOOK-PROTOCOLS §2.3"]`,
		`bad: refs: ["SEMANTICS B6.47", "HOOK-PROTOCOLS 2.3-7", "SEMANTICS C3", "REWRITE-COMPACTION 1.1"]`, // line 4
	}, "\n"))},
}

// TestMadeUpReferences shows the checker failing on every kind of made-up reference over
// a small in-memory tree, and on nothing else.
func TestMadeUpReferences(t *testing.T) {
	problems, err := Check(tree)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, p := range problems {
		got = append(got, p.String())
	}
	want := []string{
		"README.md:3: docs/nope.md: no file docs/nope.md",
		"README.md:4: docs/design/SEMANTICS.md#99-nothing: no heading with anchor #99-nothing in docs/design/SEMANTICS.md",
		"README.md:5: ../shared/design/SEMANTICS.md: leaves the repository",
		"README.md:11: docs/also-missing.md: no file docs/also-missing.md",
		"docs/design/SEMANTICS.md:9: #a9-nothing: no heading with anchor #a9-nothing in docs/design/SEMANTICS.md",
		"pkg/x.go:5: docs/design/SEMANTICS.md#49-nothing: no heading with anchor #49-nothing in docs/design/SEMANTICS.md",
		"pkg/x.go:6: docs/design/NOTES.md: no design document docs/design/NOTES.md",
		"pkg/x.go:7: docs/design/REWRITE-COMPACTION.md#17-approval: no design document docs/design/REWRITE-COMPACTION.md",
		"pkg/x.go:8: SEMANTICS.md: bare design citation; write docs/design/SEMANTICS.md#<anchor> (in Markdown, a relative link)",
		"pkg/x.go:8: HOOK-PROTOCOLS.md: bare design citation; write docs/design/HOOK-PROTOCOLS.md#<anchor> (in Markdown, a relative link)",
		"pkg/x.go:9: docs/design/SEMANTICS.md §4.2: a section named in text; write docs/design/SEMANTICS.md#42-stage-a",
		"pkg/x.go:9: docs/design/SEMANTICS.md §4.9: no section §4.9 in docs/design/SEMANTICS.md",
		"spec/x.cue:1: SEMANTICS.md: bare design citation; write docs/design/SEMANTICS.md#<anchor> (in Markdown, a relative link)",
		"spec/x.cue:4: SEMANTICS B6.47: no section §6.47 in docs/design/SEMANTICS.md",
		"spec/x.cue:4: HOOK-PROTOCOLS 2.3-7: no section §2.3.7 in docs/design/HOOK-PROTOCOLS.md",
		"spec/x.cue:4: SEMANTICS C3: not a section reference (A<n>, B<n.n>, §<n.n>, <n.n>-<scenario>, decision <n>)",
		"spec/x.cue:4: REWRITE-COMPACTION 1.1: no design document docs/design/REWRITE-COMPACTION.md",
	}
	if !slices.Equal(got, want) {
		t.Errorf("problems:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func TestSlug(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"§4.1 tools/pre-execute", "41-toolspre-execute"},
		{"`agent/error`", "agenterror"},
		{"Payload `AgentErrorPayload`", "payload-agenterrorpayload"},
		{"A.7 Halt is a decision", "a7-halt-is-a-decision"},
		{"Bridge decision 2: Codex follows the real engine", "bridge-decision-2-codex-follows-the-real-engine"},
		{"What [ACP](https://x) is", "what-acp-is"},
		{"Über snake_case **bold**", "über-snake_case-bold"},
	} {
		if got := Slug(c.in); got != c.want {
			t.Errorf("Slug(%q) = %q, want %q", c.in, got, c.want)
		}
	}
	a := Anchors([]byte("# T\n## Same\n```\n## not a heading\n```\n## Same\n<a id=\"Custom\"></a>\n"))
	for _, want := range []string{"t", "same", "same-1", "custom"} {
		if !a[want] {
			t.Errorf("anchor %q missing from %v", want, a)
		}
	}
	if a["not-a-heading"] {
		t.Error("a heading inside fenced code got an anchor")
	}
}

func TestSectionRefs(t *testing.T) {
	for _, c := range []struct {
		tail string
		want []string
	}{
		{" B §4.1).", []string{"§4.1"}},
		{" Part A items 8, 10).", []string{"A.8", "A.10"}},
		{" §1, Part A 1-4, 13):", []string{"§1", "A.1", "A.2", "A.3", "A.4", "A.13"}},
		{" B §2.10, §4.2, §4.6, §4.7, §4", []string{"§2.10", "§4.2", "§4.6", "§4.7", "§4"}},
		{" §1.1-1.4; see", []string{"§1.1", "§1.4"}},
		{" §2.3; scenarios §2.4-11, 13 a", []string{"§2.3", "§2.4"}},
		{", dsh bridge decisions 1, 2 and 4).", []string{"decision 1", "decision 2", "decision 4"}},
		{" Part B §6 scenarios 1-60 (Part", []string{"§6"}},
		{" §4 (18-28) under the dsh", []string{"§4"}},
		{" B §4.5 step 1; B §0's", []string{"§4.5", "§0"}},
		{" is the research it follows §9", nil},
		{": frozen §3", nil},
	} {
		if got := sectionRefs(c.tail); !slices.Equal(got, c.want) {
			t.Errorf("sectionRefs(%q) = %q, want %q", c.tail, got, c.want)
		}
	}
}

// TestLayoutListsEveryPackage checks the README's layout table against the tree.
func TestLayoutListsEveryPackage(t *testing.T) {
	probs, err := CheckLayout(os.DirFS(repoRoot(t)))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range probs {
		t.Error(p)
	}
}

// TestLayoutCheck checks CheckLayout on a made-up tree: a package missing from the table,
// a row for a path that is gone, and a dir/* row covering the packages below it.
func TestLayoutCheck(t *testing.T) {
	fsys := fstest.MapFS{
		"README.md":         {Data: []byte("# x\n\n## Layout\n\n| path | what |\n| --- | --- |\n| `a`, `gone` | a |\n| `c/*` | c |\n\n## Other\n\n| `b` | not the table |\n")},
		"a/a.go":            {Data: []byte("package a")},
		"b/b.go":            {Data: []byte("package b")},
		"c/d/d.go":          {Data: []byte("package d")},
		"c/e/f/f.go":        {Data: []byte("package f")},
		"a/testdata/x/x.go": {Data: []byte("package x")},
	}
	probs, err := CheckLayout(fsys)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, p := range probs {
		got = append(got, p.Ref)
	}
	if want := []string{"b", "gone"}; !slices.Equal(got, want) {
		t.Errorf("problems for %v, want %v: %v", got, want, probs)
	}
}
