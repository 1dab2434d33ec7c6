package builtin

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"syscall"
	"time"

	"github.com/dshkit/dsh/runtime/tools"
)

// CodeFetchRefused is the failure of a WebFetch whose URL dsh does not fetch: not http or
// https, a host without a dot, or an address that is loopback, private, link-local or
// otherwise not public (checked on the address connected to, so a name that resolves
// there is refused too).
const CodeFetchRefused = "FETCH_REFUSED"

// CodeFetchStatus is the failure of a WebFetch answered with an HTTP status of 400 or
// more: "Request failed with status code N", as Claude Code words it.
const CodeFetchStatus = "FETCH_STATUS"

// webFetchMaxBytes caps the bytes of a page WebFetch reads, and webFetchMaxChars the
// characters of its text one result shows (the offset input reads on).
const (
	webFetchMaxBytes = 10 << 20
	webFetchMaxChars = 100000
)

// webFetchResult is WebFetch's value, Claude Code's output shape: the page's size, the
// HTTP status, the text the model reads, the time taken and the URL.
type webFetchResult struct {
	Bytes      int    `json:"bytes"`
	Code       int    `json:"code"`
	CodeText   string `json:"codeText"`
	Result     string `json:"result"`
	DurationMs int64  `json:"durationMs"`
	URL        string `json:"url"`
}

type webFetchInput struct {
	URL    string `json:"url"`
	Prompt string `json:"prompt"`
	Offset int    `json:"offset"`
}

// noDotHost is Claude Code 2.1.328's refusal of localhost and other dotless hosts.
const noDotHost = "WebFetch cannot fetch localhost or other hostnames without a dot. To reach a local server, use Bash with curl instead."

func claudeWebFetch(o Options) tools.Definition {
	client := o.HTTPClient
	if client == nil {
		client = publicClient()
	}
	return tools.Definition{
		Name:              "WebFetch",
		Description:       "Fetches a URL and returns its text.",
		InputSchema:       json.RawMessage(`{"type": "object", "properties": {"url": {"type": "string"}, "prompt": {"type": "string"}, "offset": {"type": "integer", "minimum": 0}}, "required": ["url", "prompt"]}`),
		IsConcurrencySafe: func(json.RawMessage) bool { return true },
		Output:            &tools.Output{Render: renderText(func(r webFetchResult) string { return r.Result })},
		Run: runWith(func(ctx context.Context, in webFetchInput) (webFetchResult, error) {
			return webFetch(ctx, client, in)
		}),
	}
}

func webFetch(ctx context.Context, client *http.Client, in webFetchInput) (webFetchResult, error) {
	start := time.Now()
	u, err := url.Parse(in.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return webFetchResult{}, tools.NewError(CodeBadInput, fmt.Sprintf("url %q: want an absolute http or https URL", in.URL))
	}
	if host := u.Hostname(); !strings.Contains(host, ".") && !strings.Contains(host, ":") {
		return webFetchResult{}, tools.NewError(CodeFetchRefused, noDotHost)
	}
	if u.Scheme == "http" {
		// As Claude Code: "HTTP URLs will be automatically upgraded to HTTPS".
		u.Scheme = "https"
	}
	if in.Offset < 0 {
		return webFetchResult{}, tools.NewError(CodeBadInput, "offset is negative")
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return webFetchResult{}, tools.NewError(CodeBadInput, err.Error())
	}
	req.Header.Set("Accept", "text/markdown, text/html, text/plain;q=0.9, */*;q=0.8")
	resp, err := client.Do(req)
	if err != nil {
		var refused *refusedAddr
		if errors.As(err, &refused) {
			return webFetchResult{}, tools.NewError(CodeFetchRefused, refused.Error())
		}
		return webFetchResult{}, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, webFetchMaxBytes+1))
	if err != nil {
		return webFetchResult{}, err
	}
	if len(body) > webFetchMaxBytes {
		return webFetchResult{}, tools.NewError(CodeFileTooLarge, fmt.Sprintf("the page at %s is larger than %d bytes", in.URL, webFetchMaxBytes))
	}
	if resp.StatusCode >= 400 {
		return webFetchResult{}, tools.NewError(CodeFetchStatus, fmt.Sprintf("Request failed with status code %d", resp.StatusCode))
	}
	page := text(body)
	if ct := resp.Header.Get("Content-Type"); strings.Contains(ct, "html") || (ct == "" && strings.Contains(strings.ToLower(page[:min(len(page), 512)]), "<html")) {
		page = htmlText(page)
	}
	return webFetchResult{Bytes: len(body), Code: resp.StatusCode, CodeText: http.StatusText(resp.StatusCode),
		Result: window(page, in.Offset), DurationMs: time.Since(start).Milliseconds(), URL: in.URL}, nil
}

// window is the text of page from the character offset on, at most webFetchMaxChars of
// it, with a note of where to read on when more follows.
func window(page string, offset int) string {
	runes := []rune(page)
	if offset >= len(runes) {
		return fmt.Sprintf("(offset %d is past the end of the page text, %d characters)", offset, len(runes))
	}
	end := min(len(runes), offset+webFetchMaxChars)
	out := string(runes[offset:end])
	if end < len(runes) {
		out += fmt.Sprintf("\n\n[Showing characters %d to %d of %d; call WebFetch again with offset %d to read on.]", offset, end, len(runes), end)
	}
	return out
}

// refusedAddr is the dial error for an address WebFetch does not connect to.
type refusedAddr struct{ addr netip.Addr }

func (e *refusedAddr) Error() string {
	return fmt.Sprintf("WebFetch does not connect to %s: not a public address (loopback, private, link-local or reserved)", e.addr)
}

// publicClient is WebFetch's default client: no proxy, and a dialer that refuses, at
// connect time, every address that is not public, so that neither a literal nor a name
// that resolves to one reaches the machine's or its network's services.
func publicClient() *http.Client {
	d := &net.Dialer{Timeout: 30 * time.Second, Control: func(_, address string, _ syscall.RawConn) error {
		ap, err := netip.ParseAddrPort(address)
		if err != nil {
			return err
		}
		if a := ap.Addr().Unmap(); !publicAddr(a) {
			return &refusedAddr{a}
		}
		return nil
	}}
	return &http.Client{Timeout: 2 * time.Minute, Transport: &http.Transport{DialContext: d.DialContext, TLSHandshakeTimeout: 30 * time.Second}}
}

// publicAddr says whether a is an address on the public internet.
func publicAddr(a netip.Addr) bool {
	if !a.IsValid() || a.IsLoopback() || a.IsPrivate() || a.IsLinkLocalUnicast() || a.IsLinkLocalMulticast() ||
		a.IsMulticast() || a.IsUnspecified() || a.IsInterfaceLocalMulticast() {
		return false
	}
	for _, p := range reservedPrefixes {
		if p.Contains(a) {
			return false
		}
	}
	return true
}

// reservedPrefixes are the further ranges that are not public: shared address space
// (carrier-grade NAT), "this network", the benchmarking and documentation ranges.
var reservedPrefixes = []netip.Prefix{
	netip.MustParsePrefix("0.0.0.0/8"),
	netip.MustParsePrefix("100.64.0.0/10"),
	netip.MustParsePrefix("192.0.0.0/24"),
	netip.MustParsePrefix("192.0.2.0/24"),
	netip.MustParsePrefix("198.18.0.0/15"),
	netip.MustParsePrefix("198.51.100.0/24"),
	netip.MustParsePrefix("203.0.113.0/24"),
	netip.MustParsePrefix("240.0.0.0/4"),
	netip.MustParsePrefix("2001:db8::/32"),
	netip.MustParsePrefix("64:ff9b::/96"),
}
