package policy

// Node URL rules. WALLETGATE_RPC lists node URLs; each must be http, https,
// ws or wss with a host. A URL may carry an API key in its user info, path,
// query or fragment, so nothing but scheme://host[:port] (RedactURL) ever goes
// into an error, and url.Parse's own errors, which quote the whole URL, are
// never passed on.

import (
	"fmt"
	"net/url"
	"strings"
)

// parseRPCList parses WALLETGATE_RPC. Error values show each URL only as
// RedactURL gives it.
func parseRPCList(value string) ([]string, *ConfigError) {
	const expected = "comma-separated node URLs, each http, https, ws or wss with a host, like https://node.example:8545 (with several chains, one entry per chain, a chain's fallbacks separated by |)"
	items := strings.Split(strings.ReplaceAll(value, "|", ","), ",")
	redacted := make([]string, len(items))
	for i, item := range items {
		redacted[i] = RedactURL(trimSpaceTab(item))
	}
	shown := strings.Join(redacted, ",")
	if len(items) > MaxRPCURLs {
		return nil, configError(EnvRPC, shown, fmt.Sprintf("%s (at most %d URLs; got %d)", expected, MaxRPCURLs, len(items)))
	}
	urls := make([]string, 0, len(items))
	for i, raw := range items {
		item := trimSpaceTab(raw)
		if item == "" {
			return nil, configError(EnvRPC, shown, fmt.Sprintf("%s (item %d is empty)", expected, i+1))
		}
		if problem := checkRPCURL(item); problem != "" {
			return nil, configError(EnvRPC, shown, fmt.Sprintf("%s (item %d %s)", expected, i+1, problem))
		}
		urls = append(urls, item)
	}
	return urls, nil
}

// checkRPCURL returns what is wrong with a node URL, or "". The result never
// contains any part of raw: url.Parse errors quote the whole URL.
func checkRPCURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "is not a valid URL"
	}
	if u.Scheme == "" || u.Opaque != "" || u.Host == "" {
		return "has no scheme://host part; write it like http://127.0.0.1:8545"
	}
	switch u.Scheme {
	case "http", "https", "ws", "wss":
	default:
		return "has the scheme " + display(u.Scheme, maxDisplay) + "; use http, https, ws or wss"
	}
	if u.Hostname() == "" {
		return "has no host name"
	}
	return ""
}

// redactedURL stands in for a value RedactURL cannot reduce to a host.
const redactedURL = "<redacted: not a URL with a host>"

// RedactURL reduces a URL to scheme://host[:port] for display, dropping user
// info, path, query and fragment, which may hold API keys. A value that does
// not parse as a URL with a host is replaced by a fixed placeholder, since
// which part of it is secret cannot be known.
func RedactURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.Scheme == "" || u.Opaque != "" || u.Host == "" {
		return redactedURL
	}
	return u.Scheme + "://" + u.Host
}

// stateURLProblem says what is wrong with a WALLETGATE_STATE_URL, or "". It
// must name a host (a unix socket directory goes in the host query
// parameter, with any host name in the URL); everything else is the
// driver's to read.
func stateURLProblem(raw string) string {
	u, err := url.Parse(raw)
	switch {
	case err != nil:
		return "not a valid URL"
	case u.Scheme != "postgres" && u.Scheme != "postgresql":
		return "scheme " + u.Scheme
	case u.Host == "" || u.Hostname() == "":
		return "no host"
	}
	return ""
}
