//! Header rules checked on every HTTP request before anything else (bearer tokens included),
//! where rmcp takes the first of repeated headers and reads `Host` leniently.
//!
//! - `Host` appears once (RFC 9112 section 3.2: 400 otherwise), and so do `Origin`,
//!   `Content-Type`, `MCP-Protocol-Version` and `Mcp-Session-Id`: two values are ambiguous,
//!   and a check that reads the first while a later reader takes the last is a bypass.
//! - `Host` is `host[:port]` (RFC 9112 section 3.2, RFC 3986 section 3.2.2): no userinfo
//!   (`evil.com:80@localhost`), a port of digits up to 65535. Otherwise 400.
//! - `Origin` with userinfo (`http://evil.com@localhost:1`) is no origin a browser sends: 403,
//!   as for an origin that is not allowed.
//! - An absolute-form target (`POST http://evil.com/mcp`) names the host that counts
//!   (RFC 9112 section 3.2.2): its authority must be an allowed host (403) and carry no
//!   userinfo (400). rmcp checks `Host` alone.

use axum::response::{IntoResponse, Response};
use http::{header, HeaderMap, HeaderName, Request, StatusCode};

/// Headers that must not be repeated.
const SINGLE: [&str; 5] = [
    "host",
    "origin",
    "content-type",
    "mcp-protocol-version",
    "mcp-session-id",
];

#[derive(Clone)]
pub(crate) struct HeaderRules {
    /// `allowed_hosts`, lowercased, brackets of IPv6 literals removed, with their port if
    /// the entry names one; an entry of no such shape is left out, and allows nothing.
    hosts: Vec<(String, Option<u16>)>,
    /// No host was configured: every host is allowed (as in rmcp). A list whose every entry
    /// was left out allows none.
    any: bool,
}

impl HeaderRules {
    pub(crate) fn new(allowed_hosts: &[String]) -> Self {
        let hosts = allowed_hosts
            .iter()
            .filter_map(|entry| {
                let entry = entry.trim().to_ascii_lowercase();
                // `::1` as configured (no brackets, no port) is an IPv6 literal.
                if entry.parse::<std::net::Ipv6Addr>().is_ok() {
                    return Some((entry, None));
                }
                let (host, port) = split_authority(&entry)?;
                Some((host.to_string(), port))
            })
            .collect();
        HeaderRules {
            hosts,
            any: allowed_hosts.is_empty(),
        }
    }

    /// The answer that refuses `req`, if a rule is broken.
    pub(crate) fn refuse<B>(&self, req: &Request<B>) -> Option<Response> {
        let headers = req.headers();
        // As many values as names: nothing is repeated (the usual request, told in O(1)).
        if headers.len() != headers.keys_len() {
            for name in SINGLE {
                if repeated(headers, &HeaderName::from_static(name)) {
                    return Some(bad_request(&format!(
                        "Bad Request: more than one {name} header"
                    )));
                }
            }
        }
        if let Some(host) = headers.get(header::HOST) {
            let valid = host
                .to_str()
                .ok()
                .filter(|h| !h.contains('@'))
                .and_then(split_authority)
                .is_some();
            if !valid {
                return Some(bad_request("Bad Request: invalid Host header"));
            }
        }
        if let Some(origin) = headers.get(header::ORIGIN) {
            if origin.as_bytes().contains(&b'@') {
                return Some(forbidden("Forbidden: Origin header is not allowed"));
            }
        }
        if let Some(authority) = req.uri().authority() {
            let text = authority.as_str();
            if text.contains('@') {
                return Some(bad_request("Bad Request: userinfo in the request target"));
            }
            let Some((host, port)) = split_authority(text) else {
                return Some(bad_request("Bad Request: invalid request target"));
            };
            if !self.allowed(&host.to_ascii_lowercase(), port) {
                return Some(forbidden(
                    "Forbidden: the request target's host is not allowed",
                ));
            }
        }
        None
    }

    /// Whether the request's one `Host` names an allowed host, as rmcp reads the allow-list
    /// (an entry without a port accepts any port). A `Host` of any other shape is not
    /// allowed here, whatever rmcp would make of it.
    pub(crate) fn host_allowed(&self, headers: &HeaderMap) -> bool {
        let mut hosts = headers.get_all(header::HOST).iter();
        let (Some(host), None) = (hosts.next(), hosts.next()) else {
            return false;
        };
        host.to_str()
            .ok()
            .filter(|h| !h.contains('@'))
            .and_then(split_authority)
            .is_some_and(|(name, port)| self.allowed(&name.to_ascii_lowercase(), port))
    }

    fn allowed(&self, host: &str, port: Option<u16>) -> bool {
        self.any
            || self
                .hosts
                .iter()
                .any(|(h, p)| h == host && (p.is_none() || *p == port))
    }
}

fn repeated(headers: &HeaderMap, name: &HeaderName) -> bool {
    let mut values = headers.get_all(name).iter();
    values.next().is_some() && values.next().is_some()
}

/// `host[:port]` or `[v6][:port]`: the host (brackets removed) and the port, or `None` when
/// it is not that shape (empty host, a port that is not digits or is over 65535).
fn split_authority(text: &str) -> Option<(&str, Option<u16>)> {
    let (host, port) = if let Some(rest) = text.strip_prefix('[') {
        let (host, after) = rest.split_once(']')?;
        host.parse::<std::net::Ipv6Addr>().ok()?;
        match after {
            "" => (host, None),
            _ => (host, Some(after.strip_prefix(':')?)),
        }
    } else {
        match text.split_once(':') {
            Some((host, port)) => (host, Some(port)),
            None => (text, None),
        }
    };
    let valid_host = !host.is_empty()
        && host
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'-' | b'_' | b':'));
    if !valid_host {
        return None;
    }
    let port = match port {
        None | Some("") => None,
        Some(digits) if digits.bytes().all(|b| b.is_ascii_digit()) && digits.len() <= 5 => {
            Some(digits.parse::<u16>().ok()?)
        }
        Some(_) => return None,
    };
    Some((host, port))
}

fn bad_request(message: &str) -> Response {
    (StatusCode::BAD_REQUEST, message.to_string()).into_response()
}

fn forbidden(message: &str) -> Response {
    (StatusCode::FORBIDDEN, message.to_string()).into_response()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_list_of_unreadable_hosts_allows_none() {
        let headers = |host: &str| {
            let mut headers = HeaderMap::new();
            headers.insert(header::HOST, host.parse().unwrap());
            headers
        };
        for list in [vec!["user@localhost"], vec![""], vec!["a b", "x:notaport"]] {
            let list: Vec<String> = list.into_iter().map(String::from).collect();
            let rules = HeaderRules::new(&list);
            for host in ["localhost", "evil.example:80", "127.0.0.1:1"] {
                assert!(
                    !rules.host_allowed(&headers(host)),
                    "{list:?} allowed {host}"
                );
            }
        }
        let none = HeaderRules::new(&[]);
        assert!(
            none.host_allowed(&headers("evil.example:80")),
            "no list: any host"
        );
        let listed = HeaderRules::new(&["user@localhost".into(), "localhost".into()]);
        assert!(listed.host_allowed(&headers("LOCALHOST:8080")));
        assert!(!listed.host_allowed(&headers("evil.example")));
    }

    #[test]
    fn authorities_are_host_and_port() {
        assert_eq!(split_authority("localhost"), Some(("localhost", None)));
        assert_eq!(
            split_authority("localhost:8080"),
            Some(("localhost", Some(8080)))
        );
        assert_eq!(split_authority("localhost:"), Some(("localhost", None)));
        assert_eq!(split_authority("[::1]:3000"), Some(("::1", Some(3000))));
        assert_eq!(split_authority("[::1]"), Some(("::1", None)));
        assert_eq!(split_authority("localhost:99999"), None);
        assert_eq!(split_authority("localhost:65536"), None);
        assert_eq!(split_authority("localhost:8o"), None);
        assert_eq!(split_authority("localhost:1:2"), None);
        assert_eq!(split_authority(":80"), None);
        assert_eq!(split_authority(""), None);
        assert_eq!(split_authority("[nope]:1"), None);
        assert_eq!(split_authority("a b"), None);
    }
}
