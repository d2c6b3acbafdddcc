use super::*;

fn init_error(inner: Box<dyn std::error::Error + Send + Sync>) -> ClientInitializeError {
    ClientInitializeError::TransportError {
        error: rmcp::transport::DynamicTransportError::from_parts(
            "streamable-http",
            std::any::TypeId::of::<()>(),
            inner,
        ),
        context: "send initialize request".into(),
    }
}

/// A refusal is read from rmcp's typed errors (401 `AuthRequired`, 403
/// `InsufficientScope`), never from the text: an address or message with 401, 403 or
/// "Auth required" in it is not one.
#[test]
fn a_refusal_is_read_from_the_typed_error() {
    use rmcp::transport::streamable_http_client::{
        AuthRequiredError, InsufficientScopeError, StreamableHttpError,
    };
    type E = StreamableHttpError<std::io::Error>;
    let refusals: [Box<dyn std::error::Error + Send + Sync>; 2] = [
        Box::new(E::AuthRequired(AuthRequiredError::new("Bearer".into()))),
        Box::new(E::InsufficientScope(InsufficientScopeError::new(
            "Bearer error=\"insufficient_scope\"".into(),
            None,
        ))),
    ];
    for inner in refusals {
        let failure = InitFailure::of(&init_error(inner));
        assert!(failure.refused, "{}", failure.detail);
    }
    for text in [
        "error sending request for url (http://127.0.0.1:401/mcp/403)",
        "Auth required: HTTP 401 / 403 from a proxy log line",
    ] {
        let inner: [Box<dyn std::error::Error + Send + Sync>; 2] = [
            Box::new(std::io::Error::other(text)),
            Box::new(E::UnexpectedServerResponse(text.to_string().into())),
        ];
        for inner in inner {
            let failure = InitFailure::of(&init_error(inner));
            assert!(!failure.refused, "{}", failure.detail);
            assert!(failure.detail.contains(text), "{}", failure.detail);
        }
    }
}
