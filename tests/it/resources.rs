//! `Server::resources`: documents beside the tools, each caller's own, over HTTP with bearer
//! tokens; a server without them declares none and answers neither method.

use disco_runtime::rmcp::model::{Resource, ResourceContents};
use disco_runtime::{BearerTokens, Caller, HttpOptions, Resources};
use serde_json::{json, Value};

use crate::common::http::{post, start};
use crate::common::server_in;

/// One status page per caller, naming it; the anonymous caller has none.
struct Status;

impl Resources for Status {
    fn list(&self, caller: &Caller) -> Vec<Resource> {
        caller
            .id()
            .map(|_| vec![Resource::new("test://status", "status")])
            .unwrap_or_default()
    }

    fn read(&self, uri: &str, caller: &Caller) -> Option<Vec<ResourceContents>> {
        let who = caller.id()?;
        (uri == "test://status").then(|| vec![ResourceContents::text(format!("for {who}"), uri)])
    }
}

fn server(resources: bool) -> disco_runtime::Server {
    let tokens = BearerTokens::new()
        .token("tok-ada-4c1d", Caller::new("ada"))
        .token("tok-bob-9e7f", Caller::new("bob"))
        .token("tok-anon-0000", Caller::anonymous());
    let server = server_in(module_path!())
        .name("resources")
        .http_options(HttpOptions::default().stateless(true).bearer_auth(tokens));
    if resources {
        server.resources(Status)
    } else {
        server
    }
}

async fn ask(addr: std::net::SocketAddr, token: &str, method: &str, params: Value) -> Value {
    let auth = format!("Bearer {token}");
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params});
    let r = post(
        addr,
        &[("Authorization", auth.as_str())],
        body.to_string().as_bytes(),
    )
    .await;
    assert_eq!(r.status, 200, "{method}: {}", r.text());
    r.json()
}

/// What the server declares it can do, in its answer to `initialize`.
async fn capabilities(addr: std::net::SocketAddr) -> Value {
    let params = json!({"protocolVersion": "2025-06-18", "capabilities": {},
                        "clientInfo": {"name": "t", "version": "0"}});
    let init = ask(addr, "tok-ada-4c1d", "initialize", params).await;
    init["result"]["capabilities"].clone()
}

#[tokio::test]
async fn each_caller_lists_and_reads_its_own_resources() {
    let (addr, _stop) = start(server(true)).await;
    let capabilities = capabilities(addr).await;
    assert!(capabilities["resources"].is_object(), "{capabilities}");
    for (token, who) in [("tok-ada-4c1d", "ada"), ("tok-bob-9e7f", "bob")] {
        let list = ask(addr, token, "resources/list", json!({})).await;
        assert_eq!(
            list["result"]["resources"][0]["uri"], "test://status",
            "{list}"
        );
        let read = ask(
            addr,
            token,
            "resources/read",
            json!({"uri": "test://status"}),
        )
        .await;
        let contents = &read["result"]["contents"][0];
        assert_eq!(contents["text"], format!("for {who}"), "{read}");
    }
    // Nothing for the anonymous caller, and an unknown URI is "resource not found".
    let list = ask(addr, "tok-anon-0000", "resources/list", json!({})).await;
    assert_eq!(list["result"]["resources"], json!([]), "{list}");
    for (token, uri) in [
        ("tok-anon-0000", "test://status"),
        ("tok-ada-4c1d", "test://nope"),
    ] {
        let read = ask(addr, token, "resources/read", json!({"uri": uri})).await;
        assert_eq!(read["error"]["code"], -32002, "{token} {uri}: {read}");
    }
}

#[tokio::test]
async fn a_server_without_resources_declares_and_answers_none() {
    let (addr, _stop) = start(server(false)).await;
    let capabilities = capabilities(addr).await;
    assert!(capabilities.get("resources").is_none(), "{capabilities}");
    for method in ["resources/list", "resources/read"] {
        let answer = ask(
            addr,
            "tok-ada-4c1d",
            method,
            json!({"uri": "test://status"}),
        )
        .await;
        assert_eq!(answer["error"]["code"], -32601, "{method}: {answer}");
    }
}
