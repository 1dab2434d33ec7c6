package builtin

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"
	"unicode"

	"github.com/dshkit/dsh/runtime/tools"
)

// geminiResult is the value of the Gemini style's own tools (glob, grep_search,
// list_directory, web_fetch, write_todos): what the model reads (llmContent) and what
// the engine shows the user (returnDisplay, which its AfterTool hooks get), both as
// Gemini CLI 0.61.0 words them.
type geminiResult struct {
	LLMContent    string `json:"llmContent"`
	ReturnDisplay any    `json:"returnDisplay"`
}

func renderGeminiResult(r geminiResult) string { return r.LLMContent }

// Gemini CLI's tool names beyond the four.
const (
	GeminiGlob       = "glob"
	GeminiGrep       = "grep_search"
	GeminiList       = "list_directory"
	GeminiWebFetch   = "web_fetch"
	GeminiWriteTodos = "write_todos"
)

// geminiIgnoredDirs are the directories Gemini CLI's glob and grep_search never enter
// (its COMMON_IGNORE_PATTERNS).
var geminiIgnoredDirs = map[string]bool{"node_modules": true, ".git": true, "bower_components": true, ".svn": true, ".hg": true}

// geminiNotInWorkspace is Gemini CLI's refusal of a path outside the workspace (its
// validatePathAccess), for the absolute path it resolved.
func geminiNotInWorkspace(abs, workspace string) error {
	return tools.NewError(CodeOutsideWorkspace, fmt.Sprintf("Path not in workspace: Attempted path %q resolves outside the allowed workspace directories: %s", abs, workspace))
}

// geminiDir resolves a search directory (dir_path, relative to the workspace; "" is the
// workspace) to its real absolute path, confined to the workspace.
func geminiDir(workspace, dir string) (string, error) {
	if dir == "" {
		dir = "."
	}
	abs := dir
	if !filepath.IsAbs(abs) {
		abs = filepath.Join(workspace, dir)
	}
	abs = filepath.Clean(abs)
	full, err := resolve(workspace, abs)
	var te *tools.Error
	if errors.As(err, &te) && te.Code == CodeOutsideWorkspace {
		return "", geminiNotInWorkspace(abs, workspace)
	}
	return full, err
}

// inWorkspace reports whether p's real path (symlinks resolved) is inside workspace.
func inWorkspace(workspace, p string) bool {
	real, err := filepath.EvalSymlinks(p)
	return err == nil && (real == workspace || strings.HasPrefix(real, workspace+string(filepath.Separator)))
}

type geminiGlobInput struct {
	Pattern       string `json:"pattern"`
	DirPath       string `json:"dir_path"`
	CaseSensitive bool   `json:"case_sensitive"`
}

func geminiGlob(o Options) tools.Definition {
	return tools.Definition{
		Name:              GeminiGlob,
		IsConcurrencySafe: func(json.RawMessage) bool { return true },
		Output:            &tools.Output{Render: renderText(renderGeminiResult)},
		Run: runWith(func(ctx context.Context, in geminiGlobInput) (geminiResult, error) {
			return runGeminiGlob(ctx, o.Workspace, in, time.Now())
		}),
	}
}

// runGeminiGlob is glob: the workspace files (not directories; dot files too; never
// under node_modules, .git, bower_components, .svn or .hg) whose path under the search
// directory matches the pattern (*, ?, [...], {a,b}, ** across directories; case-blind
// unless case_sensitive), newest first among those modified in the last day, then the
// others by path, as absolute paths. A pattern that names an existing path is taken
// literally, as the engine does. Files whose real path leaves the workspace are left out.
func runGeminiGlob(ctx context.Context, workspace string, in geminiGlobInput, now time.Time) (geminiResult, error) {
	dir, err := geminiDir(workspace, in.DirPath)
	if err != nil {
		return geminiResult{}, err
	}
	if fi, err := os.Stat(dir); err != nil {
		return geminiResult{}, tools.NewError(CodeNotFound, "Search path does not exist "+dir)
	} else if !fi.IsDir() {
		return geminiResult{}, tools.NewError(CodeBadInput, "Search path is not a directory: "+dir)
	}
	if strings.TrimSpace(in.Pattern) == "" {
		return geminiResult{}, tools.NewError(CodeBadInput, "The 'pattern' parameter cannot be empty.")
	}
	literal := false
	if _, err := os.Lstat(filepath.Join(dir, in.Pattern)); err == nil {
		literal = true
	}
	pats := expandBraces(filepath.ToSlash(in.Pattern))
	for i, p := range pats {
		if _, err := path.Match(strings.ReplaceAll(p, "**", "*"), ""); err != nil {
			return geminiResult{}, tools.NewError(CodeBadInput, fmt.Sprintf("Error during glob search operation: bad pattern %q: %v", in.Pattern, err))
		}
		if !in.CaseSensitive {
			pats[i] = strings.ToLower(p)
		}
	}
	type hit struct {
		path  string
		mtime time.Time
	}
	var hits []hit
	err = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if ctxErr := ctx.Err(); ctxErr != nil {
			return ctxErr
		}
		if d.IsDir() {
			if p != dir && geminiIgnoredDirs[d.Name()] {
				return filepath.SkipDir
			}
			return nil
		}
		rel, _ := filepath.Rel(dir, p)
		rel = filepath.ToSlash(rel)
		ok := false
		if literal {
			ok = rel == path.Clean(filepath.ToSlash(in.Pattern))
		} else {
			name := rel
			if !in.CaseSensitive {
				name = strings.ToLower(rel)
			}
			ok = slices.ContainsFunc(pats, func(pat string) bool { return globMatch(pat, name) })
		}
		if !ok || !inWorkspace(workspace, p) {
			return nil
		}
		fi, err := os.Stat(p)
		if err != nil || fi.IsDir() {
			return nil
		}
		hits = append(hits, hit{p, fi.ModTime()})
		return nil
	})
	if err != nil {
		return geminiResult{}, err
	}
	if len(hits) == 0 {
		return geminiResult{LLMContent: fmt.Sprintf("No files found matching pattern %q within %s", in.Pattern, dir), ReturnDisplay: "No files found"}, nil
	}
	day := 24 * time.Hour
	slices.SortStableFunc(hits, func(a, b hit) int {
		ar, br := now.Sub(a.mtime) < day, now.Sub(b.mtime) < day
		switch {
		case ar && br:
			return b.mtime.Compare(a.mtime)
		case ar:
			return -1
		case br:
			return 1
		}
		return strings.Compare(a.path, b.path)
	})
	paths := make([]string, len(hits))
	for i, h := range hits {
		paths[i] = h.path
	}
	return geminiResult{
		LLMContent: fmt.Sprintf("Found %d file(s) matching %q within %s, sorted by modification time (newest first):\n%s",
			len(hits), in.Pattern, dir, strings.Join(paths, "\n")),
		ReturnDisplay: fmt.Sprintf("Found %d matching file(s)", len(hits)),
	}, nil
}

// expandBraces expands the first {a,b} group of a glob pattern, recursively.
func expandBraces(p string) []string {
	open := strings.IndexByte(p, '{')
	if open < 0 {
		return []string{p}
	}
	depth := 0
	for i := open; i < len(p); i++ {
		switch p[i] {
		case '{':
			depth++
		case '}':
			depth--
			if depth == 0 {
				var out []string
				for _, alt := range splitTop(p[open+1 : i]) {
					out = append(out, expandBraces(p[:open]+alt+p[i+1:])...)
				}
				return out
			}
		}
	}
	return []string{p}
}

// splitTop splits s at the commas outside braces.
func splitTop(s string) []string {
	var out []string
	depth, last := 0, 0
	for i := range len(s) {
		switch s[i] {
		case '{':
			depth++
		case '}':
			depth--
		case ',':
			if depth == 0 {
				out = append(out, s[last:i])
				last = i + 1
			}
		}
	}
	return append(out, s[last:])
}

// globMatch matches a slash-separated name against a pattern whose "**" segments match
// any number of directories (path.Match for the other segments).
func globMatch(pattern, name string) bool {
	return matchSegs(strings.Split(pattern, "/"), strings.Split(name, "/"))
}

func matchSegs(pat, name []string) bool {
	for len(pat) > 0 {
		if pat[0] == "**" {
			for i := 0; i <= len(name); i++ {
				if matchSegs(pat[1:], name[i:]) {
					return true
				}
			}
			return false
		}
		if len(name) == 0 {
			return false
		}
		if ok, _ := path.Match(strings.ReplaceAll(pat[0], "**", "*"), name[0]); !ok {
			return false
		}
		pat, name = pat[1:], name[1:]
	}
	return len(name) == 0
}

type geminiGrepInput struct {
	Pattern           string `json:"pattern"`
	DirPath           string `json:"dir_path"`
	IncludePattern    string `json:"include_pattern"`
	ExcludePattern    string `json:"exclude_pattern"`
	NamesOnly         bool   `json:"names_only"`
	MaxMatchesPerFile int    `json:"max_matches_per_file"`
	TotalMaxMatches   int    `json:"total_max_matches"`
}

// geminiGrepMatch is one line grep_search found (or shows around one it found).
type geminiGrepMatch struct {
	FilePath     string `json:"filePath"`
	AbsolutePath string `json:"absolutePath"`
	LineNumber   int    `json:"lineNumber"`
	Line         string `json:"line"`
	context      bool
}

// geminiGrepDisplay is grep_search's returnDisplay.
type geminiGrepDisplay struct {
	Summary string            `json:"summary"`
	Matches []geminiGrepMatch `json:"matches"`
}

func geminiGrep(o Options) tools.Definition {
	return tools.Definition{
		Name:              GeminiGrep,
		IsConcurrencySafe: func(json.RawMessage) bool { return true },
		Output:            &tools.Output{Render: renderText(renderGeminiResult)},
		Run: runWith(func(ctx context.Context, in geminiGrepInput) (geminiResult, error) {
			return runGeminiGrep(ctx, o, in)
		}),
	}
}

// runGeminiGrep is grep_search as Gemini CLI 0.61.0 runs it without ripgrep (system
// grep -r -n -H -E -I -i): the lines of the workspace's text files (binary files and the
// ignored directories skipped; include_pattern a glob on the file's base name, as grep's
// --include) matching the pattern case-blind, less those matching exclude_pattern, at
// most total_max_matches (default 100) and max_matches_per_file; files in path order.
// The pattern is a Go (RE2) regular expression; the engine's grep takes POSIX ERE and
// checks it as a JavaScript one first.
func runGeminiGrep(ctx context.Context, o Options, in geminiGrepInput) (geminiResult, error) {
	re, err := regexp.Compile("(?i)" + in.Pattern)
	if err != nil {
		return geminiResult{}, tools.NewError(CodeBadInput, fmt.Sprintf("Invalid regular expression pattern provided: %s. Error: %v", in.Pattern, err))
	}
	var exclude *regexp.Regexp
	if in.ExcludePattern != "" {
		if exclude, err = regexp.Compile("(?i)" + in.ExcludePattern); err != nil {
			return geminiResult{}, tools.NewError(CodeBadInput, fmt.Sprintf("Invalid exclude regular expression pattern provided: %s. Error: %v", in.ExcludePattern, err))
		}
	}
	if in.IncludePattern != "" {
		if _, err := path.Match(in.IncludePattern, ""); err != nil {
			return geminiResult{}, tools.NewError(CodeBadInput, fmt.Sprintf("Invalid include_pattern %q: %v", in.IncludePattern, err))
		}
	}
	limit := in.TotalMaxMatches
	if limit <= 0 {
		limit = 100
	}
	dir, err := geminiDir(o.Workspace, in.DirPath)
	if err != nil {
		return geminiResult{}, err
	}
	if in.DirPath != "" {
		fi, err := os.Stat(dir)
		if err != nil {
			return geminiResult{}, tools.NewError(CodeNotFound, "Path does not exist: "+dir)
		}
		if !fi.IsDir() {
			return geminiResult{}, tools.NewError(CodeBadInput, "Path is not a directory: "+dir)
		}
	}
	var files []string
	err = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if ctxErr := ctx.Err(); ctxErr != nil {
			return ctxErr
		}
		if d.IsDir() {
			if p != dir && geminiIgnoredDirs[d.Name()] {
				return filepath.SkipDir
			}
			return nil
		}
		if !d.Type().IsRegular() {
			return nil
		}
		if in.IncludePattern != "" {
			if ok, _ := path.Match(in.IncludePattern, d.Name()); !ok {
				return nil
			}
		}
		files = append(files, p)
		return nil
	})
	if err != nil {
		return geminiResult{}, err
	}
	var matches []geminiGrepMatch
	for _, f := range files {
		if len(matches) >= limit {
			break
		}
		got, err := grepFile(o, dir, f, re, exclude, in.MaxMatchesPerFile, limit-len(matches))
		if err != nil {
			return geminiResult{}, err
		}
		matches = append(matches, got...)
	}
	where := "in the workspace directory"
	if in.DirPath != "" {
		where = fmt.Sprintf("in path %q", in.DirPath)
	}
	return formatGeminiGrep(o, matches, in, where, limit), nil
}

// grepFile returns the matching lines of one file (nil for a binary file, as grep -I).
func grepFile(o Options, dir, file string, re, exclude *regexp.Regexp, perFile, limit int) ([]geminiGrepMatch, error) {
	wf, err := openInWorkspace(o.Workspace, file, os.O_RDONLY, 0)
	if err != nil {
		return nil, nil // outside the workspace through a link, or gone
	}
	defer wf.f.Close()
	br := bufio.NewReader(wf.f)
	if head, _ := br.Peek(8000); bytes.IndexByte(head, 0) >= 0 {
		return nil, nil
	}
	rel, _ := filepath.Rel(dir, file)
	var out []geminiGrepMatch
	sc := bufio.NewScanner(br)
	sc.Buffer(make([]byte, 64*1024), 16*1024*1024)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if !re.MatchString(line) || (exclude != nil && exclude.MatchString(line)) {
			continue
		}
		out = append(out, geminiGrepMatch{FilePath: filepath.ToSlash(rel), AbsolutePath: file, LineNumber: n, Line: text([]byte(line))})
		if len(out) >= limit || (perFile > 0 && len(out) >= perFile) {
			break
		}
	}
	if err := sc.Err(); errors.Is(err, bufio.ErrTooLong) {
		return out, nil // a line over 16 MiB ends the file's search, as a read error ends grep's
	} else if err != nil {
		return nil, fmt.Errorf("grep_search: %s: %w", file, err)
	}
	return out, nil
}

// formatGeminiGrep words grep_search's result as the engine's formatGrepResults: with one
// to three matches (and not names_only) the lines around them are shown too (50 around
// one, 15 around each of two or three), marked "-" instead of ":".
func formatGeminiGrep(o Options, all []geminiGrepMatch, in geminiGrepInput, where string, limit int) geminiResult {
	filter := ""
	if in.IncludePattern != "" {
		filter = fmt.Sprintf(" (filter: %q)", in.IncludePattern)
	}
	if len(all) == 0 {
		return geminiResult{LLMContent: fmt.Sprintf("No matches found for pattern %q %s%s.", in.Pattern, where, filter),
			ReturnDisplay: geminiGrepDisplay{Summary: "No matches found", Matches: []geminiGrepMatch{}}}
	}
	var order []string
	byFile := map[string][]geminiGrepMatch{}
	for _, m := range all {
		if byFile[m.FilePath] == nil {
			order = append(order, m.FilePath)
		}
		byFile[m.FilePath] = append(byFile[m.FilePath], m)
	}
	n := len(all)
	term := "matches"
	if n == 1 {
		term = "match"
	}
	if n <= 3 && !in.NamesOnly {
		around := 15
		if n == 1 {
			around = 50
		}
		for _, f := range order {
			byFile[f] = withContext(o, byFile[f], around)
		}
	}
	truncated := n >= limit
	if in.NamesOnly {
		names := slices.Sorted(slices.Values(order))
		head := fmt.Sprintf("Found %d files with matches for pattern %q %s%s", len(names), in.Pattern, where, filter)
		summary := fmt.Sprintf("Found %d files", len(names))
		if truncated {
			head += fmt.Sprintf(" (results limited to %d matches for performance)", limit)
			summary += " (limited)"
		}
		return geminiResult{LLMContent: strings.TrimSpace(head + ":\n" + strings.Join(names, "\n")),
			ReturnDisplay: geminiGrepDisplay{Summary: summary, Matches: []geminiGrepMatch{}}}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Found %d %s for pattern %q %s%s", n, term, in.Pattern, where, filter)
	if truncated {
		fmt.Fprintf(&b, " (results limited to %d matches for performance)", limit)
	}
	b.WriteString(":\n---\n")
	for _, f := range order {
		b.WriteString("File: " + f + "\n")
		for _, m := range byFile[f] {
			sep := ":"
			if m.context {
				sep = "-"
			}
			line := strings.TrimRightFunc(m.Line, unicode.IsSpace)
			if r := []rune(line); len(r) > 2000 {
				line = string(r[:2000]) + "... [truncated]"
			}
			fmt.Fprintf(&b, "L%d%s %s\n", m.LineNumber, sep, line)
		}
		b.WriteString("---\n")
	}
	summary := fmt.Sprintf("Found %d %s", n, term)
	if truncated {
		summary += " (limited)"
	}
	return geminiResult{LLMContent: strings.TrimSpace(b.String()), ReturnDisplay: geminiGrepDisplay{Summary: summary, Matches: all}}
}

// withContext adds the lines around a file's matches (the file split at "\n" or "\r\n",
// as the engine splits it, so a final newline ends an empty last line).
func withContext(o Options, ms []geminiGrepMatch, around int) []geminiGrepMatch {
	wf, err := openInWorkspace(o.Workspace, ms[0].AbsolutePath, os.O_RDONLY, 0)
	if err != nil {
		return ms
	}
	defer wf.f.Close()
	data, err := io.ReadAll(io.LimitReader(wf.f, int64(o.ReadMaxBytes)*64))
	if err != nil {
		return ms
	}
	lines := strings.Split(strings.ReplaceAll(text(data), "\r\n", "\n"), "\n")
	matched := map[int]bool{}
	for _, m := range ms {
		matched[m.LineNumber] = true
	}
	seen := map[int]bool{}
	var out []geminiGrepMatch
	for _, m := range ms {
		for i := max(0, m.LineNumber-1-around); i < min(len(lines), m.LineNumber+around); i++ {
			if seen[i+1] {
				continue
			}
			seen[i+1] = true
			out = append(out, geminiGrepMatch{FilePath: m.FilePath, AbsolutePath: m.AbsolutePath, LineNumber: i + 1, Line: lines[i], context: !matched[i+1]})
		}
	}
	slices.SortFunc(out, func(a, b geminiGrepMatch) int { return a.LineNumber - b.LineNumber })
	return out
}

type geminiListInput struct {
	DirPath string   `json:"dir_path"`
	Ignore  []string `json:"ignore"`
}

// geminiListDisplay is list_directory's returnDisplay.
type geminiListDisplay struct {
	Summary string   `json:"summary"`
	Files   []string `json:"files"`
}

func geminiList(o Options) tools.Definition {
	return tools.Definition{
		Name:              GeminiList,
		IsConcurrencySafe: func(json.RawMessage) bool { return true },
		Output:            &tools.Output{Render: renderText(renderGeminiResult)},
		Run: runWith(func(_ context.Context, in geminiListInput) (geminiResult, error) {
			return runGeminiList(o.Workspace, in)
		}),
	}
}

// runGeminiList is list_directory: the directory's entries (those whose real path stays
// in the workspace, less the names matching an ignore glob), directories first as
// "[DIR] name", then files as "name (N bytes)", each group by name as JavaScript's
// localeCompare orders them.
func runGeminiList(workspace string, in geminiListInput) (geminiResult, error) {
	dir, err := geminiDir(workspace, in.DirPath)
	if err != nil {
		return geminiResult{}, err
	}
	fi, err := os.Stat(dir)
	if err != nil {
		msg := fmt.Sprintf("Error listing directory: %v", err)
		if errors.Is(err, fs.ErrNotExist) {
			msg = fmt.Sprintf("Error listing directory: ENOENT: no such file or directory, stat '%s'", dir)
		}
		return geminiResult{}, tools.NewError(CodeNotFound, msg)
	}
	if !fi.IsDir() {
		return geminiResult{}, tools.NewError(CodeNotRegular, "Error: Path is not a directory: "+dir)
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		return geminiResult{}, tools.NewError(CodeBadInput, fmt.Sprintf("Error listing directory: %v", err))
	}
	if len(ents) == 0 {
		return geminiResult{LLMContent: fmt.Sprintf("Directory %s is empty.", dir), ReturnDisplay: "Directory is empty."}, nil
	}
	type entry struct {
		name string
		dir  bool
		size int64
	}
	var list []entry
	for _, e := range ents {
		p := filepath.Join(dir, e.Name())
		if !inWorkspace(workspace, p) || slices.ContainsFunc(in.Ignore, func(g string) bool { return lsIgnored(g, e.Name()) }) {
			continue
		}
		st, err := os.Stat(p)
		if err != nil {
			continue
		}
		en := entry{name: e.Name(), dir: st.IsDir()}
		if !en.dir {
			en.size = st.Size()
		}
		list = append(list, en)
	}
	slices.SortFunc(list, func(a, b entry) int {
		if a.dir != b.dir {
			if a.dir {
				return -1
			}
			return 1
		}
		return localeCompare(a.name, b.name)
	})
	lines := make([]string, len(list))
	files := make([]string, len(list))
	for i, e := range list {
		if e.dir {
			lines[i], files[i] = "[DIR] "+e.name, "[DIR] "+e.name
		} else {
			lines[i], files[i] = fmt.Sprintf("%s (%d bytes)", e.name, e.size), e.name
		}
	}
	return geminiResult{
		LLMContent:    fmt.Sprintf("Directory listing for %s:\n%s", dir, strings.Join(lines, "\n")),
		ReturnDisplay: geminiListDisplay{Summary: fmt.Sprintf("Found %d item(s).", len(list)), Files: files},
	}, nil
}

// lsIgnored is list_directory's ignore test: the glob's * and ? (no other magic)
// against the whole name.
func lsIgnored(glob, name string) bool {
	var b strings.Builder
	b.WriteString("^")
	for _, r := range glob {
		switch r {
		case '*':
			b.WriteString(".*")
		case '?':
			b.WriteString(".")
		default:
			b.WriteString(regexp.QuoteMeta(string(r)))
		}
	}
	b.WriteString("$")
	re, err := regexp.Compile(b.String())
	return err == nil && re.MatchString(name)
}

// localeCompare approximates JavaScript's String.prototype.localeCompare (ICU root
// collation): punctuation and symbols before digits before letters, letters compared
// case-blind first, and lower case before upper case on a tie.
func localeCompare(a, b string) int {
	class := func(r rune) int {
		switch {
		case unicode.IsLetter(r):
			return 2
		case unicode.IsDigit(r):
			return 1
		}
		return 0
	}
	ra, rb := []rune(a), []rune(b)
	for i := 0; i < len(ra) && i < len(rb); i++ {
		x, y := ra[i], rb[i]
		if cx, cy := class(x), class(y); cx != cy {
			return cx - cy
		}
		if lx, ly := unicode.ToLower(x), unicode.ToLower(y); lx != ly {
			return int(lx) - int(ly)
		}
	}
	if len(ra) != len(rb) {
		return len(ra) - len(rb)
	}
	for i := range ra {
		if ra[i] != rb[i] {
			if unicode.IsLower(ra[i]) {
				return -1
			}
			return 1
		}
	}
	return 0
}
