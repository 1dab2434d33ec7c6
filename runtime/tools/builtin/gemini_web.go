package builtin

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"html"
	"io"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/dshkit/dsh/runtime/tools"
)

// The limits of Gemini CLI 0.61.0's web_fetch.
const (
	webFetchTimeout   = 10 * time.Second
	webFetchMaxBody   = 10 << 20
	webFetchMaxText   = 250000
	webFetchUserAgent = "Mozilla/5.0 (compatible; Google-Gemini-CLI/1.0; +https://github.com/google-gemini/gemini-cli)"
	webFetchTruncated = "\n\n... [Content truncated due to size limit] ..."
)

// engineWords is an error worded as the engine words it (capitalized, with its
// punctuation), which the model reads.
type engineWords string

func (e engineWords) Error() string { return string(e) }

type geminiWebFetchInput struct {
	Prompt string `json:"prompt"`
}

// webFetcher fetches for web_fetch: blocked says whether a host may not be reached (the
// engine's private-host check), and the client dials only addresses it allows.
type webFetcher struct {
	blocked func(ctx context.Context, host string) bool
	client  *http.Client
}

// newWebFetcher is web_fetch's fetcher: it refuses loopback, private, link-local and
// other non-public hosts, by name before the request and by address at every dial (so a
// name that resolves, or redirects, to such an address is refused too).
func newWebFetcher() webFetcher {
	dialer := &net.Dialer{Timeout: webFetchTimeout, Control: func(_, address string, _ syscall.RawConn) error {
		host, _, err := net.SplitHostPort(address)
		if err != nil {
			return err
		}
		if ip, err := netip.ParseAddr(host); err != nil || privateAddr(ip) {
			return engineWords(fmt.Sprintf("Access to blocked or private host %s is not allowed.", host))
		}
		return nil
	}}
	tr := &http.Transport{DialContext: dialer.DialContext, Proxy: nil, TLSHandshakeTimeout: webFetchTimeout}
	return webFetcher{blocked: blockedHost, client: &http.Client{Transport: tr, Timeout: webFetchTimeout}}
}

// blockedHost is Gemini CLI's isBlockedHost: localhost, 127.0.0.1, *.localhost, *.local,
// *.internal, an address that is not public unicast, or a name that resolves to one (or
// does not resolve).
func blockedHost(ctx context.Context, host string) bool {
	h := strings.ToLower(strings.TrimSuffix(strings.TrimPrefix(host, "["), "]"))
	if h == "localhost" || h == "127.0.0.1" || strings.HasSuffix(h, ".localhost") || strings.HasSuffix(h, ".local") || strings.HasSuffix(h, ".internal") {
		return true
	}
	if ip, err := netip.ParseAddr(h); err == nil {
		return privateAddr(ip)
	}
	addrs, err := net.DefaultResolver.LookupNetIP(ctx, "ip", h)
	if err != nil || len(addrs) == 0 {
		return true
	}
	return slices.ContainsFunc(addrs, privateAddr)
}

// benchmarkNet is 198.18.0.0/15, which Gemini CLI refuses too.
var benchmarkNet = netip.MustParsePrefix("198.18.0.0/15")

// privateAddr reports whether ip is not a public unicast address.
func privateAddr(ip netip.Addr) bool {
	ip = ip.Unmap()
	return !ip.IsGlobalUnicast() || ip.IsPrivate() || benchmarkNet.Contains(ip) ||
		netip.MustParsePrefix("100.64.0.0/10").Contains(ip) || netip.MustParsePrefix("192.0.0.0/24").Contains(ip) ||
		netip.MustParsePrefix("192.0.2.0/24").Contains(ip) || netip.MustParsePrefix("2001:db8::/32").Contains(ip) ||
		netip.MustParsePrefix("240.0.0.0/4").Contains(ip)
}

func geminiWebFetch(Options) tools.Definition {
	f := newWebFetcher()
	return tools.Definition{
		Name:              GeminiWebFetch,
		IsConcurrencySafe: func(json.RawMessage) bool { return true },
		Output:            &tools.Output{Render: renderText(renderGeminiResult)},
		Run: runWith(func(ctx context.Context, in geminiWebFetchInput) (geminiResult, error) {
			return f.run(ctx, in)
		}),
	}
}

// parseWebPrompt is the engine's parsePrompt: the whitespace-separated words holding
// "://" are URLs; an http(s) one is kept, any other is an error.
func parseWebPrompt(prompt string) (urls []string, errs []string) {
	for _, tok := range strings.Fields(prompt) {
		if !strings.Contains(tok, "://") {
			continue
		}
		u, err := url.Parse(tok)
		switch {
		case err != nil || u.Host == "":
			errs = append(errs, fmt.Sprintf("Malformed URL detected: %q.", tok))
		case u.Scheme != "http" && u.Scheme != "https":
			errs = append(errs, fmt.Sprintf("Unsupported protocol in URL: %q. Only http and https are supported.", tok))
		default:
			urls = append(urls, normalizeWebURL(u))
		}
	}
	return urls, errs
}

// normalizeWebURL is the engine's normalizeUrl: host lower-cased, a trailing slash
// dropped from a longer path, the scheme's default port dropped; an empty path is "/".
func normalizeWebURL(u *url.URL) string {
	c := *u
	c.Scheme = strings.ToLower(c.Scheme)
	c.Host = strings.ToLower(c.Host)
	if (c.Scheme == "http" && c.Port() == "80") || (c.Scheme == "https" && c.Port() == "443") {
		c.Host = c.Hostname()
	}
	if c.Path == "" {
		c.Path = "/"
	} else if len(c.Path) > 1 && strings.HasSuffix(c.Path, "/") {
		c.Path = strings.TrimSuffix(c.Path, "/")
	}
	return c.String()
}

// run is web_fetch. The engine asks its model to fetch the prompt's URLs (Gemini's URL
// context) and falls back to fetching them itself and having the model process the
// pages; dsh does the fetch alone: the model reads each page's text (HTML reduced to
// text) as the engine's fallback gives it to its model, in <source url="…"> elements
// inside <untrusted_context>. Refused hosts are skipped as the engine skips them.
func (f webFetcher) run(ctx context.Context, in geminiWebFetchInput) (geminiResult, error) {
	if strings.TrimSpace(in.Prompt) == "" {
		return geminiResult{}, tools.NewError(CodeBadInput, "The 'prompt' parameter cannot be empty and must contain URL(s) and instructions.")
	}
	urls, errs := parseWebPrompt(in.Prompt)
	if len(errs) > 0 {
		return geminiResult{}, tools.NewError(CodeBadInput, "Error(s) in prompt URLs:\n- "+strings.Join(errs, "\n- "))
	}
	if len(urls) == 0 {
		return geminiResult{}, tools.NewError(CodeBadInput, "The 'prompt' must contain at least one valid URL (starting with http:// or https://).")
	}
	var toFetch, skipped []string
	for _, u := range urls {
		if slices.Contains(toFetch, u) || slices.Contains(skipped, "[Blocked Host] "+u) {
			continue
		}
		pu, _ := url.Parse(u)
		if f.blocked(ctx, pu.Hostname()) {
			skipped = append(skipped, "[Blocked Host] "+u)
			continue
		}
		toFetch = append(toFetch, u)
	}
	if len(toFetch) == 0 {
		return geminiResult{}, tools.NewError(CodeWebFetchSkipped, "All requested URLs were skipped: "+strings.Join(skipped, ", "))
	}
	type got struct{ url, text, err string }
	var pages []got
	var failures []string
	ok := 0
	for _, u := range toFetch {
		text, err := f.fetch(ctx, u)
		if err != nil {
			pages = append(pages, got{url: u, err: err.Error()})
			failures = append(failures, u+": "+err.Error())
			continue
		}
		pages = append(pages, got{url: u, text: text})
		ok++
	}
	if ok == 0 {
		return geminiResult{}, tools.NewError(CodeWebFetchFailed, "All fallback fetch attempts failed: "+strings.Join(failures, ", "))
	}
	// The engine shares its 250,000 characters among the pages, the shortest first.
	order := make([]int, 0, len(pages))
	for i, p := range pages {
		if p.err == "" {
			order = append(order, i)
		}
	}
	slices.SortStableFunc(order, func(a, b int) int { return len(pages[a].text) - len(pages[b].text) })
	budget, left := webFetchMaxText, len(order)
	for _, i := range order {
		share := budget / left
		if len(pages[i].text) > share {
			pages[i].text = truncateKeep(pages[i].text, share)
		}
		budget -= len(pages[i].text)
		left--
	}
	var b strings.Builder
	for i, p := range pages {
		if i > 0 {
			b.WriteString("\n")
		}
		if p.err != "" {
			fmt.Fprintf(&b, "<source url=\"%s\">\nError: %s\n</source>", sanitizeXML(p.url), sanitizeXML(p.err))
			continue
		}
		fmt.Fprintf(&b, "<source url=\"%s\">\n%s\n</source>", sanitizeXML(p.url), sanitizeXML(p.text))
	}
	out := b.String()
	if len(skipped) > 0 {
		out = "[Warning] The following URLs were skipped:\n" + strings.Join(skipped, "\n") + "\n\n" + out
	}
	return geminiResult{LLMContent: wrapUntrusted(out), ReturnDisplay: fmt.Sprintf("Content for %d URL(s) processed using fallback fetch.", len(toFetch))}, nil
}

// truncateKeep cuts s to n bytes (on a rune boundary), the engine's truncation note
// included.
func truncateKeep(s string, n int) string {
	keep := max(n-len(webFetchTruncated), 0)
	for keep > 0 && keep < len(s) && !utf8Start(s[keep]) {
		keep--
	}
	return s[:keep] + webFetchTruncated
}

func utf8Start(c byte) bool { return c&0xC0 != 0x80 }

// fetch GETs one URL (a GitHub blob page as its raw file) and returns its text.
func (f webFetcher) fetch(ctx context.Context, u string) (string, error) {
	u = githubRaw(u)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return "", err
	}
	req.Header.Set("User-Agent", webFetchUserAgent)
	resp, err := f.client.Do(req)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return "", err
	}
	defer resp.Body.Close()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return "", engineWords(fmt.Sprintf("Request failed with status code %d %s", resp.StatusCode, http.StatusText(resp.StatusCode)))
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, webFetchMaxBody+1))
	if err != nil {
		return "", err
	}
	if len(body) > webFetchMaxBody {
		return "", engineWords(fmt.Sprintf("Response exceeded the size limit of %d bytes", webFetchMaxBody))
	}
	ct := strings.ToLower(resp.Header.Get("Content-Type"))
	if ct == "" || strings.Contains(ct, "text/html") {
		return htmlText(text(body)), nil
	}
	return text(body), nil
}

// githubRaw is the engine's convertGithubUrlToRaw.
func githubRaw(u string) string {
	pu, err := url.Parse(u)
	if err != nil || pu.Host != "github.com" || !strings.Contains(pu.Path, "/blob/") {
		return u
	}
	pu.Host = "raw.githubusercontent.com"
	pu.Path = githubBlobRE.ReplaceAllString(pu.Path, "/$1/")
	return pu.String()
}

var githubBlobRE = regexp.MustCompile(`^/([^/]+/[^/]+)/blob/`)

var (
	htmlDropRE  = regexp.MustCompile(`(?is)<(script|style|head|noscript)\b.*?</(script|style|head|noscript)\s*>|<img\b[^>]*>|<!--.*?-->`)
	htmlBlockRE = regexp.MustCompile(`(?i)</?(p|div|br|h[1-6]|li|ul|ol|tr|table|section|article|header|footer|pre|blockquote|hr)\b[^>]*>`)
	htmlTagRE   = regexp.MustCompile(`<[^>]*>`)
	blankRunRE  = regexp.MustCompile(`\n{3,}`)
	spaceRunRE  = regexp.MustCompile(`[ \t]+`)
)

// htmlText reduces an HTML page to its text (the engine uses html-to-text; this keeps
// the words and the block breaks, not its exact layout).
func htmlText(s string) string {
	s = htmlDropRE.ReplaceAllString(s, "")
	s = htmlBlockRE.ReplaceAllString(s, "\n")
	s = htmlTagRE.ReplaceAllString(s, "")
	s = html.UnescapeString(s)
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = strings.TrimSpace(spaceRunRE.ReplaceAllString(l, " "))
	}
	return strings.ToValidUTF8(strings.TrimSpace(blankRunRE.ReplaceAllString(strings.Join(lines, "\n"), "\n\n")), "\uFFFD")
}

// sanitizeXML is the engine's sanitizeXml.
func sanitizeXML(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&quot;", "'", "&apos;").Replace(s)
}

// wrapUntrusted is the engine's wrapUntrusted.
func wrapUntrusted(s string) string {
	return "<untrusted_context>\n" + strings.ReplaceAll(s, "</untrusted_context>", "&lt;/untrusted_context&gt;") + "\n</untrusted_context>"
}

// geminiTodo is one item of write_todos.
type geminiTodo struct {
	Description string `json:"description"`
	Status      string `json:"status"`
}

type geminiTodosInput struct {
	Todos *[]json.RawMessage `json:"todos"`
}

// geminiTodosDisplay is write_todos's returnDisplay.
type geminiTodosDisplay struct {
	Todos []geminiTodo `json:"todos"`
}

// geminiTodoStatuses are the statuses write_todos accepts.
var geminiTodoStatuses = []string{"pending", "in_progress", "completed", "cancelled", "blocked"}

func geminiWriteTodos(Options) tools.Definition {
	return tools.Definition{
		Name:   GeminiWriteTodos,
		Output: &tools.Output{Render: renderText(renderGeminiResult)},
		Run:    runWith(runGeminiWriteTodos),
	}
}

// runGeminiWriteTodos is write_todos: it checks the list as the engine does and
// returns it numbered, "N. [status] description"; it keeps nothing.
func runGeminiWriteTodos(_ context.Context, in geminiTodosInput) (geminiResult, error) {
	if in.Todos == nil {
		return geminiResult{}, tools.NewError(CodeBadInput, "`todos` parameter must be an array")
	}
	todos := make([]geminiTodo, 0, len(*in.Todos))
	inProgress := 0
	for _, raw := range *in.Todos {
		var fields map[string]json.RawMessage
		if json.Unmarshal(raw, &fields) != nil || fields == nil {
			return geminiResult{}, tools.NewError(CodeBadInput, "Each todo item must be an object")
		}
		var t geminiTodo
		if json.Unmarshal(fields["description"], &t.Description) != nil || strings.TrimSpace(t.Description) == "" {
			return geminiResult{}, tools.NewError(CodeBadInput, "Each todo must have a non-empty description string")
		}
		if json.Unmarshal(fields["status"], &t.Status) != nil || !slices.Contains(geminiTodoStatuses, t.Status) {
			return geminiResult{}, tools.NewError(CodeBadInput, "Each todo must have a valid status ("+strings.Join(geminiTodoStatuses, ", ")+")")
		}
		if t.Status == "in_progress" {
			inProgress++
		}
		todos = append(todos, t)
	}
	if inProgress > 1 {
		return geminiResult{}, tools.NewError(CodeBadInput, `Invalid parameters: Only one task can be "in_progress" at a time.`)
	}
	if len(todos) == 0 {
		return geminiResult{LLMContent: "Successfully cleared the todo list.", ReturnDisplay: geminiTodosDisplay{Todos: todos}}, nil
	}
	lines := make([]string, len(todos))
	for i, t := range todos {
		lines[i] = fmt.Sprintf("%d. [%s] %s", i+1, t.Status, t.Description)
	}
	return geminiResult{LLMContent: "Successfully updated the todo list. The current list is now:\n" + strings.Join(lines, "\n"),
		ReturnDisplay: geminiTodosDisplay{Todos: todos}}, nil
}
