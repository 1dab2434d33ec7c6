// Package doclinks checks the references that hold the repository's documentation
// together, so that a newcomer with only the clone can follow every one of them:
//
//   - every relative Markdown link in README.md and docs/**/*.md names a file or directory
//     of the repository and, when it has a #fragment into a Markdown file, a heading of that
//     file (GitHub's anchor rules, [Anchors]);
//   - every citation of a design document in a .go, .cue, .md or .tmpl file is a path into
//     docs/design naming a file there and, with an #anchor, a heading of that file.
//
// A citation is a path from the repository root with an anchor, readable in a comment and
// followed by hand or by an editor: docs/design/SEMANTICS.md#41-data-types (in Markdown, a
// relative link to the same). A design heading carries its label first: "§4.1 Data types"
// (a numbered section, Part B of the semantics), "A.7 Halt is a decision" (a Part A item),
// "Bridge decision 2 ..." (a bridge decision of the hook protocols), so the anchor starts
// with the label. Two forms are refused, so that no reference leads nowhere in a clone: a
// bare file name (the design documents' names without the docs/design/ path, the form the
// code once used), and a section named in text after a path ("§4.2" after
// docs/design/SEMANTICS.md) instead of an anchor. The conformance scenarios' quoted short
// references ("SEMANTICS B6.47", "REWRITE-COMPACTION 2.4-9", see [shortLabel]) are
// identifiers of scenarios, not file references; they are checked against the design's
// labels. Only tests use this package.
package doclinks

import (
	"bytes"
	"fmt"
	"io/fs"
	"net/url"
	"path"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"unicode"
)

// DesignDir is the directory of the design documents, relative to the repository root.
const DesignDir = "docs/design"

// CitedNames are the design documents; one of these names with its .md suffix but
// without its docs/design/ path is a refused citation, while the README is not one. A path whose directory ends in design/ is a
// citation whatever the name.
var CitedNames = []string{
	"ARCHITECTURE", "SEMANTICS", "HOOK-PROTOCOLS", "REWRITE-COMPACTION", "ACP",
	"GEMINI-HOOKS", "CUE-NOTES",
}

// ownDir is this package, whose doc and fixtures write refused and made-up references on
// purpose; CheckCitations does not read it.
const ownDir = "internal/doclinks/"

// Problem is one reference that does not resolve.
type Problem struct {
	File string // slash path of the file holding the reference
	Line int    // 1-based line of the reference
	Ref  string // the reference as written
	Msg  string // what is wrong
}

// String formats the problem as file:line: reference: message.
func (p Problem) String() string {
	return fmt.Sprintf("%s:%d: %s: %s", p.File, p.Line, p.Ref, p.Msg)
}

// Check runs both checks over the repository tree fsys (rooted at the repository root)
// and returns the problems sorted by file and line.
func Check(fsys fs.FS) ([]Problem, error) {
	links, err := CheckLinks(fsys)
	if err != nil {
		return nil, err
	}
	cites, err := CheckCitations(fsys)
	if err != nil {
		return nil, err
	}
	all := append(links, cites...)
	sort.SliceStable(all, func(i, j int) bool {
		if all[i].File != all[j].File {
			return all[i].File < all[j].File
		}
		return all[i].Line < all[j].Line
	})
	return all, nil
}

// skipDir reports whether a directory is outside what the checks read: hidden
// directories, dependency and cache trees.
func skipDir(name string) bool {
	return name != "." && (strings.HasPrefix(name, ".") || name == "node_modules" || name == "testdata")
}

// walk calls fn for every file of fsys whose name ends in one of exts.
func walk(fsys fs.FS, root string, exts []string, fn func(p string) error) error {
	return fs.WalkDir(fsys, root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if p != root && skipDir(d.Name()) {
				return fs.SkipDir
			}
			return nil
		}
		for _, e := range exts {
			if strings.HasSuffix(p, e) {
				return fn(p)
			}
		}
		return nil
	})
}

// anchorCache reads each Markdown file's anchors once.
type anchorCache struct {
	fsys fs.FS
	m    map[string]map[string]bool
}

func (c *anchorCache) anchors(p string) (map[string]bool, error) {
	if a, ok := c.m[p]; ok {
		return a, nil
	}
	b, err := fs.ReadFile(c.fsys, p)
	if err != nil {
		return nil, err
	}
	a := Anchors(b)
	c.m[p] = a
	return a, nil
}

// linkRE matches an inline Markdown link or image: [text](target "title").
var linkRE = regexp.MustCompile(`!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)`)

// refDefRE matches a reference-style link definition: [label]: target, alone on its line
// but for an optional quoted title.
var refDefRE = regexp.MustCompile(`(?m)^ {0,3}\[[^\]]+\]:[ \t]*<?([^\s>]+)>?(?:[ \t]+(?:"[^"]*"|'[^']*'|\([^)]*\)))?[ \t]*$`)

// schemeRE matches a target with a URL scheme (https:, mailto:), which is not checked.
var schemeRE = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9+.-]*:`)

// linkChecked reports whether CheckLinks reads the file at slash path p.
func linkChecked(p string) bool {
	return p == "README.md" || (strings.HasPrefix(p, "docs/") && strings.HasSuffix(p, ".md"))
}

// blankLinks blanks a Markdown file's links, text and target, which CheckLinks checks,
// so that a link to a design document is not checked twice and its text may name the
// file.
func blankLinks(s string) string {
	b := []byte(s)
	code := blankCode(s)
	for _, m := range linkRE.FindAllStringSubmatchIndex(code, -1) {
		blank(b[m[0]:m[1]])
	}
	for _, m := range refDefRE.FindAllStringSubmatchIndex(code, -1) {
		blank(b[m[2]:m[3]])
	}
	return string(b)
}

// CheckLinks checks every relative link of README.md and docs/**/*.md.
func CheckLinks(fsys fs.FS) ([]Problem, error) {
	var files []string
	if _, err := fs.Stat(fsys, "README.md"); err == nil {
		files = append(files, "README.md")
	}
	if _, err := fs.Stat(fsys, "docs"); err == nil {
		if err := walk(fsys, "docs", []string{".md"}, func(p string) error {
			if !linkChecked(p) {
				return nil
			}
			files = append(files, p)
			return nil
		}); err != nil {
			return nil, err
		}
	}
	cache := &anchorCache{fsys: fsys, m: map[string]map[string]bool{}}
	var out []Problem
	for _, f := range files {
		b, err := fs.ReadFile(fsys, f)
		if err != nil {
			return nil, err
		}
		text := blankCode(string(b))
		var targets [][]int
		for _, m := range linkRE.FindAllStringSubmatchIndex(text, -1) {
			targets = append(targets, m[2:4])
		}
		for _, m := range refDefRE.FindAllStringSubmatchIndex(text, -1) {
			targets = append(targets, m[2:4])
		}
		for _, t := range targets {
			target := text[t[0]:t[1]]
			line := 1 + strings.Count(text[:t[0]], "\n")
			if msg := resolveLink(fsys, cache, f, target); msg != "" {
				out = append(out, Problem{File: f, Line: line, Ref: target, Msg: msg})
			}
		}
	}
	return out, nil
}

// resolveLink returns what is wrong with the link target written in file from, or "".
func resolveLink(fsys fs.FS, cache *anchorCache, from, target string) string {
	if schemeRE.MatchString(target) || strings.HasPrefix(target, "//") {
		return ""
	}
	p, frag, _ := strings.Cut(target, "#")
	if up, err := url.PathUnescape(p); err == nil {
		p = up
	}
	dest := from
	if p != "" {
		if strings.HasPrefix(p, "/") {
			return "absolute path; use a path relative to this file"
		}
		dest = path.Join(path.Dir(from), p)
		if dest == ".." || strings.HasPrefix(dest, "../") {
			return "leaves the repository"
		}
	}
	st, err := fs.Stat(fsys, dest)
	if err != nil {
		return fmt.Sprintf("no file %s", dest)
	}
	if frag == "" || st.IsDir() || !strings.HasSuffix(dest, ".md") {
		return ""
	}
	a, err := cache.anchors(dest)
	if err != nil {
		return err.Error()
	}
	if f, err := url.PathUnescape(frag); err == nil {
		frag = f
	}
	if !a[strings.ToLower(frag)] {
		return fmt.Sprintf("no heading with anchor #%s in %s", frag, dest)
	}
	return ""
}

// blankCode replaces fenced code blocks and inline code spans by spaces, keeping every
// newline, so that offsets and line numbers stay those of the original text.
func blankCode(s string) string {
	b := []byte(s)
	lines := bytes.SplitAfter(b, []byte("\n"))
	var fence string
	off := 0
	for _, l := range lines {
		t := strings.TrimLeft(string(l), " ")
		switch {
		case fence != "":
			if strings.HasPrefix(t, fence) {
				fence = ""
			}
			blank(b[off : off+len(l)])
		case strings.HasPrefix(t, "```") || strings.HasPrefix(t, "~~~"):
			fence = t[:3]
			blank(b[off : off+len(l)])
		}
		off += len(l)
	}
	// Inline code: a run of backticks up to the same run, on one line.
	for i := 0; i < len(b); i++ {
		if b[i] != '`' {
			continue
		}
		j := i
		for j < len(b) && b[j] == '`' {
			j++
		}
		run := string(b[i:j])
		end := strings.Index(string(b[j:]), run)
		if end < 0 || strings.Contains(string(b[j:j+end]), "\n\n") {
			i = j - 1
			continue
		}
		blank(b[i : j+end+len(run)])
		i = j + end + len(run) - 1
	}
	return string(b)
}

func blank(b []byte) {
	for i := range b {
		if b[i] != '\n' {
			b[i] = ' '
		}
	}
}

// headingRE matches an ATX heading.
var headingRE = regexp.MustCompile(`^ {0,3}(#{1,6})[ \t]+(.*?)[ \t#]*$`)

// htmlAnchorRE matches an explicit HTML anchor: <a id="x"> or <a name="x">.
var htmlAnchorRE = regexp.MustCompile(`<a\s+(?:id|name)="([^"]+)"`)

// Anchors returns the anchors GitHub gives the headings of a Markdown document (and its
// explicit <a id> anchors): the heading's text without markup, lower-cased, with every
// character that is not a letter, digit, mark, connector, hyphen or space removed and
// spaces turned into hyphens; a repeated anchor gets -1, -2, ... in document order.
func Anchors(md []byte) map[string]bool {
	out := map[string]bool{}
	seen := map[string]int{}
	for _, h := range headings(string(md)) {
		s := Slug(h.text)
		if n, ok := seen[s]; ok {
			seen[s] = n + 1
			s = fmt.Sprintf("%s-%d", s, n+1)
		} else {
			seen[s] = 0
		}
		out[s] = true
	}
	for _, m := range htmlAnchorRE.FindAllStringSubmatch(string(md), -1) {
		out[strings.ToLower(m[1])] = true
	}
	return out
}

type heading struct {
	text string
	line int
}

// headings returns the ATX headings of a Markdown document outside fenced code.
func headings(md string) []heading {
	var out []heading
	fence := ""
	for i, l := range strings.Split(md, "\n") {
		t := strings.TrimLeft(l, " ")
		if fence != "" {
			if strings.HasPrefix(t, fence) {
				fence = ""
			}
			continue
		}
		if strings.HasPrefix(t, "```") || strings.HasPrefix(t, "~~~") {
			fence = t[:3]
			continue
		}
		if m := headingRE.FindStringSubmatch(l); m != nil {
			out = append(out, heading{text: m[2], line: i + 1})
		}
	}
	return out
}

// inlineLinkRE matches a link inside heading text, whose visible text is the anchor's.
var inlineLinkRE = regexp.MustCompile(`!?\[([^\]]*)\]\([^)]*\)`)

// Slug is GitHub's anchor for a heading's Markdown text.
func Slug(text string) string {
	text = inlineLinkRE.ReplaceAllString(text, "$1")
	text = strings.NewReplacer("`", "", "**", "", "<code>", "", "</code>", "").Replace(text)
	var b strings.Builder
	for _, r := range strings.ToLower(text) {
		switch {
		case r == ' ':
			b.WriteByte('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.IsMark(r):
			b.WriteRune(r)
		}
	}
	return b.String()
}

// designDoc is one design document: its labelled sections and its anchors.
type designDoc struct {
	labels  map[string]string // "§4.1", "A.7", "decision 2" → the heading's anchor
	anchors map[string]bool
}

// labelRE reads a design heading's label: §N[.N...], A.N, or Bridge decision N.
var labelRE = regexp.MustCompile(`^(?:(§\d+(?:\.\d+)*)|A\.(\d+)|Bridge decision (\d+))\b`)

func readDesign(fsys fs.FS, name string) (*designDoc, error) {
	b, err := fs.ReadFile(fsys, path.Join(DesignDir, name+".md"))
	if err != nil {
		return nil, err
	}
	d := &designDoc{labels: map[string]string{}, anchors: Anchors(b)}
	seen := map[string]int{}
	for _, h := range headings(string(b)) {
		// The anchor as Anchors gives it, repeats numbered in document order.
		a := Slug(h.text)
		if n, ok := seen[a]; ok {
			seen[a] = n + 1
			a = fmt.Sprintf("%s-%d", a, n+1)
		} else {
			seen[a] = 0
		}
		m := labelRE.FindStringSubmatch(h.text)
		label := ""
		switch {
		case m == nil:
			continue
		case m[1] != "":
			label = m[1]
		case m[2] != "":
			label = "A." + m[2]
		default:
			label = "decision " + m[3]
		}
		if _, dup := d.labels[label]; !dup {
			d.labels[label] = a
		}
	}
	return d, nil
}

// citeRE finds a design-document citation: an optional path ending in design/, a name,
// .md, and an optional #fragment.
var citeRE = regexp.MustCompile(`((?:[\w.-]+/)*)([A-Za-z][\w-]*)\.md(#[\w-]+)?`)

// The section-reference grammar after a cited name, each anchored at the current position.
var (
	sepRE      = regexp.MustCompile(`^(?:\s*(?:,|;|\band\b)\s*|\s+)`)
	partARE    = regexp.MustCompile(`^Part\s+A(?:\s+items?)?\s*((?:\d+(?:-\d+)?)(?:(?:\s*,\s*|\s+and\s+)\d+(?:-\d+)?)*)`)
	sectionRE  = regexp.MustCompile(`^(?:(?:Part\s+)?B\s*)?§\s?(\d+(?:\.\d+)*)(?:-(\d+(?:\.\d+)*))?`)
	decisionRE = regexp.MustCompile(`^(?:dsh\s+)?(?:bridge\s+)?decisions?\s+((?:\d+)(?:(?:\s*,\s*|\s+and\s+)\d+)*)`)
	skipRE     = regexp.MustCompile(`^(?:Part\s+[AB]\b|(?:steps?|scenarios?|items?)\b|\(\d+(?:-\d+)?\)|\d+(?:-\d+)?\b)`)
	numRE      = regexp.MustCompile(`\d+(?:-\d+)?`)
)

// sectionRefs reads the section references at the start of tail and returns the labels
// they name, as readDesign records them.
func sectionRefs(tail string) []string {
	var labels []string
	pos := 0
	for pos < len(tail) {
		rest := tail[pos:]
		if m := sepRE.FindString(rest); m != "" {
			pos += len(m)
			rest = tail[pos:]
		}
		if m := partARE.FindStringSubmatch(rest); m != nil {
			for _, n := range expand(m[1]) {
				labels = append(labels, "A."+n)
			}
			pos += len(m[0])
			continue
		}
		if m := sectionRE.FindStringSubmatch(rest); m != nil {
			labels = append(labels, "§"+m[1])
			if m[2] != "" && strings.Count(m[2], ".") == strings.Count(m[1], ".") {
				labels = append(labels, "§"+m[2])
			}
			pos += len(m[0])
			continue
		}
		if m := decisionRE.FindStringSubmatch(rest); m != nil {
			for _, n := range expand(m[1]) {
				labels = append(labels, "decision "+n)
			}
			pos += len(m[0])
			continue
		}
		if m := skipRE.FindString(rest); m != "" {
			pos += len(m)
			continue
		}
		break
	}
	return labels
}

// expand turns "8, 10" or "1-4, 13" or "1, 2 and 4" into the numbers it names.
func expand(list string) []string {
	var out []string
	for _, r := range numRE.FindAllString(list, -1) {
		lo, hi, ok := strings.Cut(r, "-")
		if !ok {
			out = append(out, lo)
			continue
		}
		a, _ := strconv.Atoi(lo)
		b, _ := strconv.Atoi(hi)
		for i := a; i <= b && i-a < 200; i++ {
			out = append(out, strconv.Itoa(i))
		}
	}
	return out
}

// commentLeadRE matches what continues a comment or doc on its next line.
var commentLeadRE = regexp.MustCompile(`^\s*(?://+|\*+|#+)?\s*`)

// flatten joins a file's lines into one text, dropping comment leaders and writing the
// escapes \n and \" of string literals as a space, so a citation broken over two lines of
// a comment or a doc string reads as one. starts[i] is where line i+1 begins in it.
func flatten(src string) (text string, starts []int) {
	var b strings.Builder
	for _, l := range strings.Split(src, "\n") {
		starts = append(starts, b.Len())
		l = commentLeadRE.ReplaceAllString(l, "")
		l = strings.NewReplacer(`\n`, " ", `\"`, " ").Replace(l)
		b.WriteString(l)
		b.WriteByte(' ')
	}
	return b.String(), starts
}

// CheckCitations checks every citation of a design document in the .go, .cue, .md and
// .tmpl files of fsys.
func CheckCitations(fsys fs.FS) ([]Problem, error) {
	cited := map[string]bool{}
	for _, n := range CitedNames {
		cited[n] = true
	}
	docs := map[string]*designDoc{}
	missing := map[string]bool{}
	doc := func(name string) *designDoc {
		if d, ok := docs[name]; ok || missing[name] {
			return d
		}
		d, err := readDesign(fsys, name)
		if err != nil {
			missing[name] = true
			return nil
		}
		docs[name] = d
		return d
	}
	var out []Problem
	err := walk(fsys, ".", []string{".go", ".cue", ".md", ".tmpl"}, func(p string) error {
		if strings.HasPrefix(p, ownDir) {
			return nil
		}
		b, err := fs.ReadFile(fsys, p)
		if err != nil {
			return err
		}
		if !bytes.Contains(b, []byte(".md")) {
			return nil
		}
		src := string(b)
		if linkChecked(p) {
			src = blankLinks(src)
		}
		text, starts := flatten(src)
		for _, m := range citeRE.FindAllStringSubmatchIndex(text, -1) {
			dir, name := text[m[2]:m[3]], text[m[4]:m[5]]
			inDesign := strings.HasSuffix(dir, "design/")
			if !inDesign && (dir != "" || !cited[name]) {
				continue
			}
			line := sort.SearchInts(starts, m[0]+1)
			ref := strings.TrimSpace(text[m[0]:m[1]])
			if !inDesign {
				out = append(out, Problem{File: p, Line: line, Ref: ref, Msg: fmt.Sprintf("bare design citation; write %s/%s.md#<anchor> (in Markdown, a relative link)", DesignDir, name)})
				continue
			}
			d := doc(name)
			if d == nil {
				out = append(out, Problem{File: p, Line: line, Ref: ref, Msg: fmt.Sprintf("no design document %s/%s.md", DesignDir, name)})
				continue
			}
			if m[6] >= 0 {
				frag := strings.ToLower(text[m[6]+1 : m[7]])
				if !d.anchors[frag] {
					out = append(out, Problem{File: p, Line: line, Ref: ref, Msg: fmt.Sprintf("no heading with anchor #%s in %s/%s.md", frag, DesignDir, name)})
				}
			}
			tail := text[m[1]:]
			if len(tail) > 200 {
				tail = tail[:200]
			}
			for _, l := range sectionRefs(tail) {
				msg := fmt.Sprintf("no section %s in %s/%s.md", l, DesignDir, name)
				if a, ok := d.labels[l]; ok {
					msg = fmt.Sprintf("a section named in text; write %s/%s.md#%s", DesignDir, name, a)
				}
				out = append(out, Problem{File: p, Line: line, Ref: ref + " " + l, Msg: msg})
			}
		}
		for _, m := range shortRefRE.FindAllStringSubmatchIndex(text, -1) {
			name, ref := text[m[2]:m[3]], text[m[4]:m[5]]
			line := sort.SearchInts(starts, m[0]+1)
			d := doc(name)
			if d == nil {
				out = append(out, Problem{File: p, Line: line, Ref: name + " " + ref, Msg: fmt.Sprintf("no design document %s/%s.md", DesignDir, name)})
				continue
			}
			l, ok := shortLabel(name, ref)
			switch {
			case !ok:
				out = append(out, Problem{File: p, Line: line, Ref: name + " " + ref, Msg: "not a section reference (A<n>, B<n.n>, §<n.n>, <n.n>-<scenario>, decision <n>)"})
			case d.labels[l] == "":
				out = append(out, Problem{File: p, Line: line, Ref: name + " " + ref, Msg: fmt.Sprintf("no section %s in %s/%s.md", l, DesignDir, name)})
			}
		}
		return nil
	})
	return out, err
}

// shortRefRE finds the quoted short references the conformance scenarios cite in their
// refs: "SEMANTICS B6.47", "SEMANTICS A8", "HOOK-PROTOCOLS §4.12", "HOOK-PROTOCOLS
// decision 2", "REWRITE-COMPACTION 1.9.20", "REWRITE-COMPACTION 2.4-9".
var shortRefRE = regexp.MustCompile(`"(` + strings.Join(CitedNames, "|") + `) ([^"\n]+)"`)

var (
	shortARE   = regexp.MustCompile(`^A(\d+)$`)
	shortBRE   = regexp.MustCompile(`^B(\d+(?:\.\d+)*)$`)
	shortSecRE = regexp.MustCompile(`^§?(\d+(?:\.\d+)*)(?:-(\d+))?$`)
	shortDecRE = regexp.MustCompile(`^decision (\d+)$`)
)

// shortLabel returns the label a short reference names: "A8" is A.8 and "B6.47" is §6.47
// (SEMANTICS.md); "decision 2" is a bridge decision; "2.4-9" is scenario 9 of §2.4, §2.4.9.
func shortLabel(name, ref string) (string, bool) {
	if name == "SEMANTICS" {
		if m := shortARE.FindStringSubmatch(ref); m != nil {
			return "A." + m[1], true
		}
		if m := shortBRE.FindStringSubmatch(ref); m != nil {
			return "§" + m[1], true
		}
	}
	if m := shortDecRE.FindStringSubmatch(ref); m != nil {
		return "decision " + m[1], true
	}
	if m := shortSecRE.FindStringSubmatch(ref); m != nil {
		if m[2] != "" {
			return "§" + m[1] + "." + m[2], true
		}
		return "§" + m[1], true
	}
	return "", false
}
