//! The code of the guide's chapter on serving (`docs/guide/src/serving.md`), which includes the
//! parts between the `ANCHOR` lines. Compiled, never served: the servers below are built from
//! the whole inventory, and this test binary holds tools that a server refuses on purpose.

#![allow(dead_code)]

use disco_runtime::{BearerTokens, HttpOptions, Server};

#[derive(Default)]
struct Kb {
    notes: std::sync::Mutex<Vec<String>>,
}

// ANCHOR: http
async fn serve() -> Result<(), Box<dyn std::error::Error>> {
    Server::from_inventory()
        .with_state(Kb::default())
        .serve_http(([127, 0, 0, 1], 8080)) // Streamable HTTP at http://127.0.0.1:8080/mcp, until Ctrl-C
        .await?;
    Ok(())
}
// ANCHOR_END: http

// ANCHOR: options
/// Reachable from other machines as `mcp.example.com`, behind bearer tokens.
async fn serve_on_the_network() -> Result<(), Box<dyn std::error::Error>> {
    // `s3cret=alice,t0ken=bob`: each token names its caller
    let tokens = BearerTokens::parse(&std::env::var("MCP_TOKENS")?);
    Server::from_inventory()
        .with_state(Kb::default())
        .http_options(
            HttpOptions::default()
                .bearer_auth(tokens)
                .allowed_hosts(["mcp.example.com"])
                .max_body_bytes(1024 * 1024),
        )
        .serve_http(([0, 0, 0, 0], 8080))
        .await?;
    Ok(())
}
// ANCHOR_END: options
