package hookproto

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"
)

// HTTPHandlerType is the handler type of an http hook: it posts the hook's input JSON to a
// URL and reads the response body as a command's stdout. A dialect runs it when its table
// lists it (hookmap.Bridge.Handlers).
const HTTPHandlerType = "http"

// The settings keys that restrict http hooks (Claude Code's): the URL patterns they may
// post to, and the variables their headers may read. Each is honoured when the file sets
// it; several files' lists add up.
const (
	// AllowedHTTPHookURLsKey lists the URL patterns ('*' a wildcard) http hooks may post
	// to; set and empty, none.
	AllowedHTTPHookURLsKey = "allowedHttpHookUrls"
	// HTTPHookAllowedEnvVarsKey narrows every http hook's allowedEnvVars to the names it
	// lists.
	HTTPHookAllowedEnvVarsKey = "httpHookAllowedEnvVars"
)

// HTTPHandler is what an http handler posts where (Handler.HTTP).
type HTTPHandler struct {
	// URL is where the hook's input is posted (http or https).
	URL string
	// Headers are the request's extra headers, name to value as configured; a value's
	// $VAR and ${VAR} read the environment for the names AllowedEnvVars lists.
	Headers map[string]string
	// AllowedEnvVars are the variables the header values may read; any other $VAR reads
	// as empty.
	AllowedEnvVars []string
}

// HTTPRequest is an http hook's request ([Command].HTTP): Run posts Command.Stdin to URL,
// without its trailing newline (as Claude Code posts the bare JSON), instead of starting a
// process.
type HTTPRequest struct {
	// URL is where the input is posted.
	URL string
	// Header holds the request's headers, their variables already read
	// ([InterpolateHeader]); Content-Type application/json is set unless it sets one.
	Header http.Header
	// Client sends the request; nil means a new [NewHTTPClient]. Run never follows a
	// redirect, whatever the client's CheckRedirect says.
	Client *http.Client
	// AllowedURLs, when non-nil, are the URL patterns the request may go to
	// ([HTTPURLAllowed]); empty, none. Nil allows every URL.
	AllowedURLs []string
}

// Errors an http hook's run ends with (Result.Err, wrapped in an *[HTTPError]); test them
// with errors.Is. Each decides nothing: the hook is a non-blocking error.
var (
	// ErrHTTPStatus: the server answered with a status other than 2xx, a redirect
	// included (never followed).
	ErrHTTPStatus = errors.New("status not 2xx")
	// ErrHTTPBlocked: the URL matches no pattern of allowedHttpHookUrls, or its host is
	// an address http hooks may not reach ([HookAddressAllowed]).
	ErrHTTPBlocked = errors.New("HTTP hook blocked")
	// ErrHTTPBody: the 2xx answer's body is not a JSON object.
	ErrHTTPBody = errors.New("HTTP hook must return JSON")
	// ErrHTTPRequest: the request could not be made or its answer read (a refused
	// connection, a bad URL, a connection cut).
	ErrHTTPRequest = errors.New("HTTP hook error")
)

// HTTPError is how an http hook's request failed: its message is Claude Code's for the
// same failure.
type HTTPError struct {
	// URL is the hook's URL.
	URL string
	// Status is the answer's status code; 0 when none came.
	Status int
	// Kind is one of ErrHTTPStatus, ErrHTTPBlocked, ErrHTTPBody and ErrHTTPRequest.
	Kind error
	// Detail says more: the cause of a request error; for a body that is not JSON, the
	// whole message, which quotes its start.
	Detail string
}

// Error is the diagnostic, e.g. "HTTP 500 from http://127.0.0.1:8080/hook".
func (e *HTTPError) Error() string {
	switch e.Kind {
	case ErrHTTPStatus:
		msg := fmt.Sprintf("HTTP %d from %s", e.Status, e.URL)
		if e.Status >= 300 && e.Status < 400 {
			msg += " (a redirect: not followed)"
		}
		return msg
	case ErrHTTPBlocked:
		if e.Detail != "" {
			return "HTTP hook blocked: " + e.Detail // an address it may not reach
		}
		return "HTTP hook blocked: " + e.URL + " does not match any pattern in " + AllowedHTTPHookURLsKey
	case ErrHTTPBody:
		return e.Detail
	}
	return e.Kind.Error() + ": " + e.Detail
}

// Unwrap returns the kind.
func (e *HTTPError) Unwrap() error { return e.Kind }

// NewHTTPClient returns the client http hooks are sent with when the caller gives none: a
// transport of its own that follows no redirect, takes its proxies from the environment
// (as Claude Code does; a request to 127.0.0.1 or localhost never uses one), and, as Claude
// Code, connects to no address that is not public, loopback aside ([HookAddressAllowed]):
// a hook URL whose host resolves to 10.0.0.5 or 169.254.169.254 is refused, one at
// 127.0.0.1 or ::1 is not. A proxy is refused only at a link-local or cloud metadata
// address.
func NewHTTPClient() *http.Client {
	t := http.DefaultTransport.(*http.Transport).Clone()
	g := &dialGuard{dialer: &net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}}
	t.Proxy = func(r *http.Request) (*url.URL, error) {
		u, err := http.ProxyFromEnvironment(r)
		if u != nil {
			g.proxies.Store(canonicalAddr(u), true)
		}
		return u, err
	}
	t.DialContext = g.dial
	return &http.Client{Transport: t, CheckRedirect: noRedirect}
}

// dialGuard dials only the addresses an http hook may reach: every address a host
// resolves to must be allowed, and the connection goes to one of those checked, never to
// a second resolution.
type dialGuard struct {
	dialer  *net.Dialer
	proxies sync.Map // "host:port" of the proxies the transport chose: the proxy rule
}

func (g *dialGuard) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, err
	}
	_, proxy := g.proxies.Load(addr)
	ips, err := net.DefaultResolver.LookupNetIP(ctx, "ip", host)
	if err != nil {
		return nil, err
	}
	for _, ip := range ips {
		if err := HookAddressAllowed(ip, proxy); err != nil {
			if _, perr := netip.ParseAddr(host); perr != nil { // a name, not an address
				return nil, &addressError{msg: host + " resolves to " + err.Error()}
			}
			return nil, &addressError{msg: err.Error()}
		}
	}
	var errs []error
	for _, ip := range ips {
		conn, err := g.dialer.DialContext(ctx, network, net.JoinHostPort(ip.String(), port))
		if err == nil {
			return conn, nil
		}
		errs = append(errs, err)
	}
	return nil, errors.Join(errs...)
}

// addressError is a dial the guard refused.
type addressError struct{ msg string }

func (e *addressError) Error() string { return e.msg }

// canonicalAddr is u's "host:port", the port the scheme's default when u names none.
func canonicalAddr(u *url.URL) string {
	p := u.Port()
	if p == "" {
		p = map[string]string{"http": "80", "https": "443", "socks5": "1080", "socks5h": "1080"}[u.Scheme]
	}
	return net.JoinHostPort(u.Hostname(), p)
}

// metadataAddrs are the cloud metadata services' addresses Claude Code refuses besides
// the link-local range (Alibaba, Azure, Oracle, AWS's IPv6 ones).
var metadataAddrs = []netip.Addr{
	netip.MustParseAddr("100.100.100.200"), netip.MustParseAddr("168.63.129.16"), netip.MustParseAddr("192.0.0.192"),
	netip.MustParseAddr("fd00:ec2::254"), netip.MustParseAddr("fd00:ec2::23"), netip.MustParseAddr("fd20:ce::254"),
	netip.MustParseAddr("fd00:c1::a9fe:a9fe"), netip.MustParseAddr("fd00:a9fe:a9fe::1"),
}

// privateRanges are the ranges Claude Code 2.1.328 calls not public: "this network",
// RFC 1918, carrier-grade NAT, link-local and IPv6 unique-local.
var privateRanges = []netip.Prefix{
	netip.MustParsePrefix("0.0.0.0/8"), netip.MustParsePrefix("10.0.0.0/8"), netip.MustParsePrefix("100.64.0.0/10"),
	netip.MustParsePrefix("169.254.0.0/16"), netip.MustParsePrefix("172.16.0.0/12"), netip.MustParsePrefix("192.168.0.0/16"),
	netip.MustParsePrefix("fc00::/7"), netip.MustParsePrefix("fe80::/10"),
}

// HookAddressAllowed says whether an http hook may connect to ip, as Claude Code 2.1.328
// decides (nil when it may): loopback (127.0.0.0/8, ::1) and public addresses are
// allowed; "this network" (0.0.0.0/8), the private ranges (10/8, 172.16/12, 192.168/16),
// carrier-grade NAT (100.64/10), link-local (169.254/16, fe80::/10), unique-local
// (fc00::/7), :: and the cloud metadata addresses are not. The address of a proxy
// (proxy true) is refused only when it is link-local or a metadata address. An IPv4
// address mapped into IPv6 is judged as IPv4.
func HookAddressAllowed(ip netip.Addr, proxy bool) error {
	ip = ip.Unmap()
	switch {
	case ip.IsLoopback():
		return nil
	case ip.IsLinkLocalUnicast() || slices.Contains(metadataAddrs, ip):
		return fmt.Errorf("%s is a link-local, cloud metadata or reserved address", ip)
	case proxy:
		return nil
	case ip.IsUnspecified() || slices.ContainsFunc(privateRanges, func(p netip.Prefix) bool { return p.Contains(ip) }):
		return fmt.Errorf("%s is not a public address", ip)
	}
	return nil
}

func noRedirect(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }

// runHTTP posts c.Stdin to c.HTTP.URL: a 2xx answer whose body is empty or a JSON object
// is exit 0 with the body as stdout (capped as stdout is, read no further than the cap
// when what lies past it is more than white space); any other answer, a refused
// connection or a URL allowedHttpHookUrls does not allow is Err (an *HTTPError); the
// timeout is TimedOut, ctx ending first Cancelled.
func runHTTP(ctx context.Context, c Command) (res Result) {
	start := time.Now()
	defer func() { res.Duration = time.Since(start) }()
	hr := c.HTTP
	fail := func(kind error, status int, detail string) Result {
		res.Err = &HTTPError{URL: hr.URL, Status: status, Kind: kind, Detail: detail}
		return res
	}
	if ctx.Err() != nil {
		res.Cancelled = true
		return res
	}
	if hr.AllowedURLs != nil && !HTTPURLAllowed(hr.URL, hr.AllowedURLs) {
		return fail(ErrHTTPBlocked, 0, "")
	}
	rctx := ctx
	if c.Timeout > 0 {
		var cancel context.CancelFunc
		rctx, cancel = context.WithTimeout(ctx, c.Timeout)
		defer cancel()
	}
	// The body is the bare JSON: Claude Code posts no trailing newline where a command's
	// stdin has one (measured).
	body := bytes.TrimSuffix(c.Stdin, []byte("\n"))
	req, err := http.NewRequestWithContext(rctx, http.MethodPost, hr.URL, bytes.NewReader(body))
	if err != nil {
		return fail(ErrHTTPRequest, 0, err.Error())
	}
	for k, vs := range hr.Header {
		req.Header[k] = vs
	}
	if req.Header.Get("Content-Type") == "" {
		req.Header.Set("Content-Type", "application/json")
	}
	client := NewHTTPClient()
	if hr.Client != nil {
		cl := *hr.Client // never follow a redirect, whatever the caller's client does
		cl.CheckRedirect = noRedirect
		client = &cl
	}
	resp, err := client.Do(req)
	if ae := (*addressError)(nil); errors.As(err, &ae) {
		return fail(ErrHTTPBlocked, 0, ae.msg+". Loopback (127.0.0.1, ::1) is allowed for local dev.")
	}
	// ended says whether the run ended by its timeout or ctx rather than by err (Err then
	// says the request was abandoned).
	ended := func() bool {
		switch {
		case ctx.Err() != nil:
			res.Cancelled = true
			res.Err = &HTTPError{URL: hr.URL, Kind: ErrHTTPRequest, Detail: "cancelled; the request was abandoned"}
		case rctx.Err() != nil:
			res.TimedOut = true
			res.Err = &HTTPError{URL: hr.URL, Kind: ErrHTTPRequest, Detail: fmt.Sprintf("timed out after %v; the request was abandoned", c.Timeout)}
		default:
			return false
		}
		return true
	}
	if err != nil {
		if ended() {
			return res
		}
		return fail(ErrHTTPRequest, 0, requestError(err))
	}
	defer resp.Body.Close()
	res.HTTPStatus = resp.StatusCode
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return fail(ErrHTTPStatus, resp.StatusCode, "")
	}
	answer := &capBuffer{max: orDefault(c.MaxStdout, DefaultOutputCap)}
	if err := readCapped(answer, resp.Body); err != nil {
		if ended() {
			return res
		}
		return fail(ErrHTTPRequest, resp.StatusCode, "reading the answer: "+requestError(err))
	}
	res.Stdout, res.StdoutOverCap, res.StdoutLost = answer.buf.Bytes(), answer.over, answer.lost
	text := strings.TrimSpace(string(res.Stdout))
	switch {
	case text == "":
	case !strings.HasPrefix(text, "{"):
		if cut, ok := cutRunes(text, 200); ok {
			text = cut + "…"
		}
		return fail(ErrHTTPBody, resp.StatusCode, "HTTP hook must return JSON, but got non-JSON response body: "+text)
	case !res.StdoutLost && !json.Valid([]byte(text)):
		var v any
		err := json.Unmarshal([]byte(text), &v)
		return fail(ErrHTTPBody, resp.StatusCode, "HTTP hook must return valid JSON, but parsing failed: "+err.Error())
	}
	zero := 0
	res.ExitCode = &zero
	return res
}

// readCapped copies r into b, and stops once b has lost text past its cap (what follows
// cannot change what the body comes to); white space past the cap is read and dropped.
func readCapped(b *capBuffer, r io.Reader) error {
	buf := make([]byte, 32<<10)
	for !b.lost {
		n, err := r.Read(buf)
		_, _ = b.Write(buf[:n])
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// requestError is the cause of a failed request without Go's "Post \"URL\": " prefix.
func requestError(err error) string {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err.Error()
	}
	return err.Error()
}

// envRefRE matches the variables a header value reads: $NAME and ${NAME}, NAME in upper
// case (Claude Code's pattern: "$home" stays as written).
var envRefRE = regexp.MustCompile(`\$\{([A-Z_][A-Z0-9_]*)\}|\$([A-Z_][A-Z0-9_]*)`)

// InterpolateHeader is a header value as Claude Code sends it: each $NAME or ${NAME}
// (upper-case names) replaced by the variable's value from env (KEY=value pairs, the last
// one winning) when allowed lists it, and by nothing otherwise; then CR, LF and NUL
// removed. It returns the names it left empty because allowed does not list them.
func InterpolateHeader(value string, allowed []string, env []string) (string, []string) {
	var refused []string
	out := envRefRE.ReplaceAllStringFunc(value, func(m string) string {
		sub := envRefRE.FindStringSubmatch(m)
		name := sub[1] + sub[2]
		for _, a := range allowed {
			if a == name {
				return lookupEnv(env, name)
			}
		}
		refused = append(refused, name)
		return ""
	})
	return strings.Map(func(r rune) rune {
		if r == '\r' || r == '\n' || r == 0 {
			return -1
		}
		return r
	}, out), refused
}

// lookupEnv is name's value in env (KEY=value pairs, the last one winning); "" when unset.
func lookupEnv(env []string, name string) string {
	for i := len(env) - 1; i >= 0; i-- {
		if k, v, ok := strings.Cut(env[i], "="); ok && k == name {
			return v
		}
	}
	return ""
}

// HTTPURLAllowed reports whether rawURL matches one of patterns as Claude Code matches
// allowedHttpHookUrls: "*" matches every URL; otherwise the scheme must be the pattern's,
// the host matches the pattern's ('*' matching any run of characters, dots included), the
// port must be the pattern's (any port when its host has a '*' and it names none, or when
// it is "*"), and a pattern with a path matches the URL's path and query ('*' matching
// anything, '/' included), while one without a path (or with only "/" and no trailing
// slash written) matches every path. Schemes and hosts compare in lower case; a default
// port counts as none. A pattern that is no URL matches the URL's text segment by segment
// ('/' separated, '*' within a segment).
func HTTPURLAllowed(rawURL string, patterns []string) bool {
	u, err := url.Parse(rawURL)
	if err != nil || u.Scheme == "" || u.Host == "" {
		return false
	}
	for _, p := range patterns {
		if urlPatternMatch(u, p) {
			return true
		}
	}
	return false
}

// wildcard stands for '*' while a pattern is parsed as a URL.
const wildcard = "zzdshwildcardzz"

// wildPortRE finds a wildcard port in a pattern whose '*' became wildcard.
var wildPortRE = regexp.MustCompile(`:` + wildcard + `(?:[/?#]|$)`)

func urlPatternMatch(u *url.URL, pattern string) bool {
	if pattern == "*" {
		return true
	}
	text := strings.ReplaceAll(pattern, "*", wildcard)
	anyPort := false
	pu, err := url.Parse(text)
	if err != nil {
		// A wildcard port ("http://127.0.0.1:*/hook") is no port to a URL parser: as
		// Claude Code, read it as port 0 standing for any.
		if loc := wildPortRE.FindStringIndex(text); loc != nil {
			alt := text[:loc[0]] + ":0" + text[loc[0]+len(":"+wildcard):]
			if pu, err = url.Parse(alt); err == nil {
				anyPort = true
			}
		}
	}
	if err != nil || pu.Scheme == "" || pu.Host == "" {
		return segmentGlob(pattern, u.Scheme+"://"+u.Host+u.EscapedPath()+query(u), '/')
	}
	if pu.Scheme != wildcard && !strings.EqualFold(pu.Scheme, u.Scheme) {
		return false
	}
	host := strings.TrimSuffix(strings.ToLower(u.Hostname()), ".")
	phost := strings.ReplaceAll(strings.TrimSuffix(strings.ToLower(pu.Hostname()), "."), wildcard, "*")
	if !glob(phost, host) {
		return false
	}
	if pu.Port() == "" && strings.Contains(pu.Hostname(), wildcard) {
		anyPort = true
	}
	if !anyPort && port(pu) != port(u) {
		return false
	}
	ppath := pu.EscapedPath() + query(pu)
	if (ppath == "" || ppath == "/") && !strings.HasSuffix(text, "/") {
		return true
	}
	if ppath == "" {
		ppath = "/"
	}
	upath := u.EscapedPath()
	if upath == "" {
		upath = "/"
	}
	return glob(strings.ReplaceAll(ppath, wildcard, "*"), upath+query(u))
}

// port is u's port, "" for the scheme's default.
func port(u *url.URL) string {
	p := u.Port()
	if d, ok := map[string]string{"http": "80", "https": "443", "ws": "80", "wss": "443", "ftp": "21"}[strings.ToLower(u.Scheme)]; ok && p == d {
		return ""
	}
	return p
}

func query(u *url.URL) string {
	if u.RawQuery == "" {
		return ""
	}
	return "?" + u.RawQuery
}

// glob reports whether s matches pattern, '*' matching any run of characters.
func glob(pattern, s string) bool {
	parts := strings.Split(pattern, "*")
	if len(parts) == 1 {
		return pattern == s
	}
	if !strings.HasPrefix(s, parts[0]) {
		return false
	}
	s = s[len(parts[0]):]
	last := parts[len(parts)-1]
	for _, p := range parts[1 : len(parts)-1] {
		i := strings.Index(s, p)
		if i < 0 {
			return false
		}
		s = s[i+len(p):]
	}
	return strings.HasSuffix(s, last)
}

// segmentGlob matches s against pattern segment by segment, sep separating segments and
// '*' matching within one.
func segmentGlob(pattern, s string, sep byte) bool {
	ps, ss := strings.Split(pattern, string(sep)), strings.Split(s, string(sep))
	if len(ps) != len(ss) {
		return false
	}
	for i := range ps {
		if !glob(ps[i], ss[i]) {
			return false
		}
	}
	return true
}

// validHeaderName reports whether name is an HTTP header field name (an RFC 9110 token).
func validHeaderName(name string) bool {
	if name == "" {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0) {
			return false
		}
	}
	return true
}
