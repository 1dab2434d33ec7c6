package prompts_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dshkit/dsh/bridges/prompts"
	"github.com/dshkit/dsh/generated/hookmap"
)

func write(t *testing.T, root string, files map[string]string) {
	t.Helper()
	for name, text := range files {
		p := filepath.Join(root, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func paths(files []prompts.File, root string) []string {
	var out []string
	for _, f := range files {
		rel, _ := filepath.Rel(root, f.Path)
		out = append(out, f.Kind+":"+filepath.ToSlash(rel)+"<"+f.LoadReason())
	}
	return out
}

// Claude Code's table: the user's file, then each directory from the root down, each
// file's imports right after it; a cycle is read once, an import outside the workspace
// not at all (with a note), and a blank file not listed.
func TestLoadInstructionsClaudeCode(t *testing.T) {
	root := t.TempDir()
	ws, home := filepath.Join(root, "proj", "ws"), filepath.Join(root, "home")
	write(t, root, map[string]string{
		"home/.claude/CLAUDE.md":    "user rule\n",
		"proj/CLAUDE.md":            "parent rule\n",
		"proj/ws/CLAUDE.md":         "one\n@sub/two.md and `@not/an/import.md`\n```\n@fenced.md\n```\n",
		"proj/ws/sub/two.md":        "two\n@../CLAUDE.md\n@../../secret.md\n",
		"proj/secret.md":            "SECRET\n",
		"proj/ws/fenced.md":         "FENCED\n",
		"proj/ws/not/an/import.md":  "CODE\n",
		"proj/ws/.claude/CLAUDE.md": "dot rule\n",
		"proj/ws/CLAUDE.local.md":   "  \n",
	})
	tab := hookmap.ClaudeCode.Instructions
	got, err := prompts.LoadInstructions(tab, ws, home)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"User:home/.claude/CLAUDE.md<session_start", "Project:proj/CLAUDE.md<session_start",
		"Project:proj/ws/CLAUDE.md<session_start", "Project:proj/ws/sub/two.md<include", "Project:proj/ws/.claude/CLAUDE.md<session_start"}
	if g := paths(got.Files, root); strings.Join(g, " ") != strings.Join(want, " ") {
		t.Errorf("files:\n got %v\nwant %v", g, want)
	}
	if len(got.Notes) != 1 || !strings.Contains(got.Notes[0], `"../../secret.md" not read: it is outside`) {
		t.Errorf("notes: %q", got.Notes)
	}
	text := prompts.Render(tab, got.Files, ws)
	for _, s := range []string{"SECRET", "FENCED", "CODE"} {
		if strings.Contains(text, s) {
			t.Errorf("the text holds %s, which policy does not allow or the engine does not import", s)
		}
	}
	if !strings.HasPrefix(text, "<system-reminder>\nCodebase and user instructions") ||
		!strings.Contains(text, "Contents of "+filepath.Join(ws, "sub", "two.md")+" (project instructions, checked into the codebase):\n\ntwo\n@../CLAUDE.md") {
		t.Errorf("rendered text:\n%s", text)
	}
}

// The import depth bounds a chain; a symbolic link out of the workspace is outside too.
func TestLoadInstructionsDepthAndLinks(t *testing.T) {
	root := t.TempDir()
	ws := filepath.Join(root, "ws")
	files := map[string]string{"ws/CLAUDE.md": "0\n@1.md\n@link.md\n", "outside.md": "OUT\n"}
	for i := 1; i <= 7; i++ {
		files["ws/"+itoa(i)+".md"] = itoa(i) + "\n@" + itoa(i+1) + ".md\n"
	}
	write(t, root, files)
	if err := os.Symlink(filepath.Join(root, "outside.md"), filepath.Join(ws, "link.md")); err != nil {
		t.Fatal(err)
	}
	tab := *hookmap.ClaudeCode.Instructions
	tab.Dirs = "workspace"
	got, err := prompts.LoadInstructions(&tab, ws, "")
	if err != nil {
		t.Fatal(err)
	}
	if n := len(got.Files); n != 1+tab.ImportDepth {
		t.Errorf("read %d files, want the file and %d hops: %v", n, tab.ImportDepth, paths(got.Files, root))
	}
	if strings.Contains(prompts.Render(&tab, got.Files, ws), "OUT") {
		t.Error("a link out of the workspace was read")
	}
}

func itoa(i int) string { return string(rune('0' + i)) }

// Codex's cap: the files together are cut at MaxBytes.
func TestLoadInstructionsCap(t *testing.T) {
	ws := t.TempDir()
	write(t, ws, map[string]string{"AGENTS.md": strings.Repeat("x", 40000)})
	got, err := prompts.LoadInstructions(hookmap.Codex.Instructions, ws, "")
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Files) != 1 || len(got.Files[0].Content) != hookmap.Codex.Instructions.MaxBytes || len(got.Notes) != 1 {
		t.Fatalf("files %d, notes %q", len(got.Files), got.Notes)
	}
	text := prompts.Render(hookmap.Codex.Instructions, got.Files, ws)
	if !strings.HasPrefix(text, "# AGENTS.md instructions for "+ws+"\n\n<INSTRUCTIONS>\nxxx") {
		t.Errorf("rendered: %.80q", text)
	}
}

// A directory named like an instruction file is not read, and says so; a file that
// cannot be read is an error naming it.
func TestLoadInstructionsBadFiles(t *testing.T) {
	ws := t.TempDir()
	if err := os.Mkdir(filepath.Join(ws, "GEMINI.md"), 0o755); err != nil {
		t.Fatal(err)
	}
	got, err := prompts.LoadInstructions(hookmap.Gemini.Instructions, ws, "")
	if err != nil || len(got.Files) != 0 || len(got.Notes) != 1 || !strings.Contains(got.Notes[0], "not a regular file") {
		t.Fatalf("files %v, notes %q, err %v", got.Files, got.Notes, err)
	}
	if os.Geteuid() == 0 {
		return // root reads a file of mode 0
	}
	ws = t.TempDir()
	write(t, ws, map[string]string{"GEMINI.md": "x"})
	if err := os.Chmod(filepath.Join(ws, "GEMINI.md"), 0); err != nil {
		t.Fatal(err)
	}
	if _, err := prompts.LoadInstructions(hookmap.Gemini.Instructions, ws, ""); err == nil || !strings.Contains(err.Error(), "GEMINI.md") {
		t.Fatalf("err %v, want one naming the file", err)
	}
}

func TestSubstitute(t *testing.T) {
	const app = "\n\nARGUMENTS: {args}"
	for _, c := range []struct{ body, args, want string }{
		{"hello $ARGUMENTS", "a b", "hello a b"},
		{"$0 then $1, not $2 nor $1x", `a "b c"`, "a then b c, not $2 nor $1x"},
		{"$ARGUMENTS[1] and $ARGUMENTS[5]", "a b", "b and $ARGUMENTS[5]"},
		{`kept \$ARGUMENTS and \$0`, "a", "kept $ARGUMENTS and $0\n\nARGUMENTS: a"}, // an escape fills nothing
		{"no placeholder", "a b", "no placeholder\n\nARGUMENTS: a b"},
		{"no placeholder", "", "no placeholder"},
		{"value $0 not refilled", "$ARGUMENTS", "value $ARGUMENTS not refilled"},
		{"cost $5 and $", "", "cost $5 and $"},
	} {
		if got := prompts.Substitute(c.body, c.args, app); got != c.want {
			t.Errorf("Substitute(%q, %q) = %q, want %q", c.body, c.args, got, c.want)
		}
	}
}

func TestExpand(t *testing.T) {
	root := t.TempDir()
	ws, home := filepath.Join(root, "ws"), filepath.Join(root, "home")
	write(t, root, map[string]string{
		"ws/.claude/commands/greet.md":      "---\ndescription: greets\nmodel: x\n---\nHi $ARGUMENTS.\n",
		"home/.claude/commands/greet.md":    "user greet\n",
		"home/.claude/commands/tools/hi.md": "Say hi.\n",
		"ws/secret.md":                      "SECRET",
	})
	tab := hookmap.ClaudeCode.Commands
	places := prompts.Places{Workspace: ws, Home: home, Trusted: true}
	x, ok, err := prompts.Expand(tab, "/greet  bob ", places)
	if err != nil || !ok {
		t.Fatal(ok, err)
	}
	want := []string{"<command-message>greet</command-message>\n<command-name>/greet</command-name>\n<command-args>bob</command-args>\n", "Hi bob.\n"}
	if strings.Join(x.Texts, "|") != strings.Join(want, "|") || x.Source != "projectSettings" || x.Frontmatter["model"] != "x" {
		t.Errorf("got %q from %s (%v)", x.Texts, x.Source, x.Frontmatter)
	}
	// Untrusted, the project's command is not read: the user's of the same name is.
	places.Trusted = false
	if x, ok, _ := prompts.Expand(tab, "/greet bob", places); !ok || x.Source != "userSettings" || x.Texts[1] != "user greet\n\n\nARGUMENTS: bob" {
		t.Errorf("untrusted: %v %q", ok, x.Texts)
	}
	x, ok, _ = prompts.Expand(tab, "/tools:hi", places)
	if !ok || x.Texts[0] != "<command-message>tools:hi</command-message>\n<command-name>/tools:hi</command-name>\n" {
		t.Errorf("namespaced: %v %q", ok, x.Texts)
	}
	for _, p := range []string{"/nosuch a", "/../ws/secret", "/..:ws:secret", "/tools/hi", "not a command", "/"} {
		if _, ok, err := prompts.Expand(tab, p, places); ok || err != nil {
			t.Errorf("%q expanded (%v, %v): want it sent as it is", p, ok, err)
		}
	}
}
