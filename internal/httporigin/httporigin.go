// Package httporigin holds the one rule dsh's HTTP clients share about where a request
// may go: a credential configured for an endpoint (an API key, an MCP server's headers)
// goes to that endpoint's origin only, and a redirect to another origin is not followed.
package httporigin

import (
	"net/url"
	"strings"
)

// Of is a URL's origin: its scheme and host, lowercased, with the scheme's default port
// made explicit ("https://api.example:443").
func Of(u *url.URL) string {
	host, port := u.Hostname(), u.Port()
	if port == "" {
		switch strings.ToLower(u.Scheme) {
		case "http":
			port = "80"
		case "https":
			port = "443"
		}
	}
	return strings.ToLower(u.Scheme) + "://" + strings.ToLower(host) + ":" + port
}

// Redact is a URL without its query, fragment and user info, for an error message.
func Redact(u *url.URL) string {
	c := *u
	c.RawQuery, c.User, c.Fragment = "", nil, ""
	return c.String()
}
