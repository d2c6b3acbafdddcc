use std::collections::BTreeMap;

use super::*;

/// The caller's token replaces any configured `Authorization`, whatever its case; every other
/// configured header is kept; every value is sensitive, so a printed map shows no secret.
#[test]
fn forwarded_headers_carry_the_callers_token_and_hide_every_value() {
    let mut rng = fastrand::Rng::with_seed(0xA7);
    for case in 0..50 {
        let spelled: String = "authorization"
            .chars()
            .map(|c| {
                if rng.bool() {
                    c.to_ascii_uppercase()
                } else {
                    c
                }
            })
            .collect();
        let mut configured = BTreeMap::new();
        if case % 5 != 0 {
            configured.insert(spelled.clone(), "Bearer operator-secret".to_string());
        }
        configured.insert("X-Api-Key".to_string(), format!("api-secret-{case}"));
        let token = format!("caller-token-{case}-{}", rng.u64(..));
        let map = forwarded_headers(&configured, &token).unwrap();
        assert_eq!(map.len(), 2, "{spelled}");
        assert_eq!(
            map[&http::header::AUTHORIZATION],
            format!("Bearer {token}").as_str()
        );
        assert_eq!(
            map[&http::HeaderName::from_static("x-api-key")],
            format!("api-secret-{case}").as_str()
        );
        assert!(map.values().all(|v| v.is_sensitive()));
        let shown = format!("{map:?}");
        for secret in [token.as_str(), "operator-secret", "api-secret"] {
            assert!(!shown.contains(secret), "{shown}");
        }
    }
    // The operator's own headers are sensitive too.
    let configured = BTreeMap::from([("Authorization".to_string(), "Bearer op".to_string())]);
    let map = header_map(&configured).unwrap();
    assert!(map.values().all(|v| v.is_sensitive()));
    assert!(!format!("{map:?}").contains("op\""));
}
