package permrule

import (
	"path"
	"path/filepath"
	"strings"
)

// matchPath matches a path specifier against the file path of a call, as Claude Code
// does: the pattern's root is the filesystem's for `//`, the home directory for `~/`, the
// rules' root for `/` and the working directory otherwise; the file's path relative to
// that root is tested as gitignore tests it (a pattern without a slash matches a name at
// any depth, `*` and `?` stay within a name, `**` spans directories, a pattern matching a
// directory matches what is under it). A pattern without a wildcard, or starting with
// `*`, also matches the path exactly as the call gave it.
func matchPath(spec, file string, env Env) bool {
	abs := file
	if !filepath.IsAbs(abs) {
		abs = filepath.Join(env.Dir, abs)
	}
	abs = filepath.Clean(abs)
	root, pattern, anchored := patternRoot(spec, env)
	if root != "" {
		if rel, err := filepath.Rel(root, abs); err == nil && rel != "." && !strings.HasPrefix(rel, "..") && !filepath.IsAbs(rel) {
			if gitignoreMatch(pattern, filepath.ToSlash(rel), anchored) {
				return true
			}
		}
	}
	s := strings.TrimSpace(spec)
	if strings.HasPrefix(s, "*") || !hasWildcard(s) {
		return wildcard(spec, file, false)
	}
	return false
}

// patternRoot splits a path specifier into the directory it is relative to and the
// gitignore pattern under it; anchored says the pattern is rooted there (it held a
// slash before its end).
func patternRoot(spec string, env Env) (root, pattern string, anchored bool) {
	switch {
	case strings.HasPrefix(spec, "//"):
		root, pattern = "/", spec[2:]
		anchored = true
	case strings.HasPrefix(spec, "~/"):
		if env.Home == "" {
			return "", "", false
		}
		root, pattern = env.Home, spec[2:]
		anchored = true
	case strings.HasPrefix(spec, "/"):
		root = env.Root
		if root == "" {
			root = env.Dir
		}
		pattern, anchored = spec[1:], true
	case strings.HasPrefix(spec, "./"):
		root, pattern, anchored = env.Dir, spec[2:], true
	default:
		root, pattern = env.Dir, spec
		anchored = strings.Contains(strings.TrimSuffix(spec, "/"), "/")
	}
	return root, strings.TrimSuffix(pattern, "/"), anchored
}

// gitignoreMatch tests a slash-separated relative path, or any directory above it,
// against a gitignore pattern.
func gitignoreMatch(pattern, rel string, anchored bool) bool {
	if pattern == "" {
		return false
	}
	pat := strings.Split(pattern, "/")
	if !anchored {
		pat = append([]string{"**"}, pat...)
	}
	parts := strings.Split(rel, "/")
	for n := 1; n <= len(parts); n++ {
		if segMatch(pat, parts[:n]) {
			return true
		}
	}
	return false
}

// segMatch matches path segments against pattern segments; "**" is any number of
// segments (at the end, one or more).
func segMatch(pat, parts []string) bool {
	if len(pat) == 0 {
		return len(parts) == 0
	}
	if pat[0] == "**" {
		if len(pat) == 1 {
			return len(parts) > 0
		}
		for i := 0; i <= len(parts); i++ {
			if segMatch(pat[1:], parts[i:]) {
				return true
			}
		}
		return false
	}
	if len(parts) == 0 {
		return false
	}
	ok, err := path.Match(pat[0], parts[0])
	return err == nil && ok && segMatch(pat[1:], parts[1:])
}

// hasWildcard reports whether a pattern holds an unescaped star (other than a final
// legacy ":*").
func hasWildcard(s string) bool {
	if strings.HasSuffix(s, ":*") {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] == '*' && !escaped(s, i) {
			return true
		}
	}
	return false
}
