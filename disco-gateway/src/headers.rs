//! The header rules: which configured headers and which callers' tokens can go upstream, and
//! their conversion to HTTP header values. The configuration checks a forwarding server's
//! headers and tokens with these functions when it is read, and the connections build their
//! headers with them, so a value the configuration accepts is one a connection can send.
//!
//! Every value is a secret: each is marked sensitive (what prints a header map, such as a
//! debug log of the HTTP client, shows none of them), and an error names the header, never
//! its value.

use std::collections::{BTreeMap, HashMap};

/// The configured headers with `Authorization: Bearer <token>` in place of any configured
/// `Authorization`. Every value is marked sensitive: what prints a header map (a debug log of
/// the HTTP client) shows none of them.
pub(crate) fn forwarded_headers(
    configured: &BTreeMap<String, String>,
    token: &str,
) -> Result<HashMap<http::HeaderName, http::HeaderValue>, String> {
    let mut map = header_map(configured)?;
    let value = bearer(token)
        .ok_or_else(|| "the caller's token is not a valid header value".to_string())?;
    map.insert(http::header::AUTHORIZATION, value);
    Ok(map)
}

/// `Bearer <token>` as a header value, marked sensitive; `None` when the token cannot be in
/// one. The configuration's check and the connections' headers both use it.
pub(crate) fn bearer(token: &str) -> Option<http::HeaderValue> {
    let mut value = http::HeaderValue::from_str(&format!("Bearer {token}")).ok()?;
    value.set_sensitive(true);
    Some(value)
}

/// What makes a configured header unusable.
pub(crate) enum BadHeader {
    Name,
    Value,
}

/// One configured header as the HTTP client takes it, its value marked sensitive. The
/// configuration's check and the connections' headers both use it.
pub(crate) fn header(
    name: &str,
    value: &str,
) -> Result<(http::HeaderName, http::HeaderValue), BadHeader> {
    let name = http::HeaderName::from_bytes(name.as_bytes()).map_err(|_| BadHeader::Name)?;
    let mut value = http::HeaderValue::from_str(value).map_err(|_| BadHeader::Value)?;
    value.set_sensitive(true);
    Ok((name, value))
}

/// The configured headers as the HTTP client takes them, every value marked sensitive. An
/// error names the header, never its value.
pub(crate) fn header_map(
    configured: &BTreeMap<String, String>,
) -> Result<HashMap<http::HeaderName, http::HeaderValue>, String> {
    let mut map = HashMap::new();
    for (k, v) in configured {
        let (name, value) = header(k, v).map_err(|bad| match bad {
            BadHeader::Name => format!("header `{k}` is not a valid header name"),
            BadHeader::Value => format!("the value of header `{k}` is not valid"),
        })?;
        map.insert(name, value);
    }
    Ok(map)
}

#[cfg(test)]
mod tests;
