//! A remote server whose entry has no `oauth` key (`{"type": "http", "url": ...}`, as a client
//! file lists it): the gateway signs in to it when it asks (a 401 naming its protected-resource
//! metadata), as the clients do. Before `login`: what the user sees says to run it, and the
//! other server serves; `login` signs in (discovery, registration, PKCE); the running gateway
//! then calls it with the tokens without a restart, and over HTTP only the callers whose token
//! entry names it see it from then on.

use super::*;

/// `remote`'s entry as the clients write it: a URL, nothing else.
fn no_key(servers: &Servers) -> Value {
    serde_json::json!({"type": "http", "url": servers.mcp})
}

/// An HTTP caller of the gateway at `url` with `token`.
async fn caller(url: &str, token: &str) -> Client {
    let config = StreamableHttpClientTransportConfig::with_uri(url).auth_header(token);
    ().serve(StreamableHttpClientTransport::from_config(config))
        .await
        .expect("the caller connects")
}

/// `disco-gateway lint`: its exit, its stdout (the summary) and its stderr (the log).
fn lint(config: &Path) -> (bool, String, String) {
    let o = std::process::Command::new(env!("CARGO_BIN_EXE_disco-gateway"))
        .args(["lint", "--config"])
        .arg(config)
        .output()
        .expect("lint runs");
    (
        o.status.success(),
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

/// The server lists its tools to anyone and asks for a token on a call (rmcp's `AuthRequired`
/// on a call): the call says to sign in, the other server serves; after `login` the running
/// gateway serves it as the signed-in user, to the callers whose entry names it only.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_without_an_oauth_key_signs_in_when_a_call_asks() {
    let Some(tools) = tools() else { return };
    disco_gateway::install_tls();
    let servers = servers_with(&tools, &[("PUBLIC_LISTING", "1")]).await;
    let tokens = serde_json::json!([
        // No `servers`: every server, but those that act as a signed-in user.
        {"token": "token-all", "caller": "all"},
        {"token": "token-named", "caller": "named", "servers": ["remote", "open"]}
    ]);
    let (dir, state, config) = setup_with(&servers, "asked-call", tokens, no_key(&servers));
    let gateway = over_http(&config).await;
    let all = caller(&gateway.url, "token-all").await;
    let named = caller(&gateway.url, "token-named").await;

    // Before sign-in it carries no identity: every caller sees it, and its call says how to
    // sign in.
    for c in [&all, &named] {
        let (_, text) = until(c, "remote.whoami", |e, t| e && t.contains("sign in")).await;
        assert!(text.contains("`disco-gateway login remote`"), "{text}");
        assert!(!text.contains("  "), "{text}");
        assert_eq!(call(c, "open.whoami").await, (false, "anyone".into()));
    }
    let logged = std::fs::read_to_string(config.with_extension("log")).expect("the log");
    assert!(
        logged
            .lines()
            .any(|l| l.contains("refused the gateway's credentials")
                && l.contains("`disco-gateway login remote`")),
        "{logged}"
    );
    assert!(listed(&gateway.url, Some("token-all"))
        .await
        .contains(&"remote.whoami".to_string()));
    let token_file = state.join("oauth/remote.json");
    assert!(!token_file.exists());

    let signed = login_to(&config, "remote").await;
    assert!(
        signed.output.contains("signed in; tokens in"),
        "{}",
        signed.output
    );
    assert!(token_file.exists());
    let s = stats(&servers).await;
    assert_eq!(s["registrations"], 1, "{s}");
    assert_eq!(s["pkce"], serde_json::json!(["S256"]), "{s}");

    // The running gateway takes the tokens: no restart, the same session.
    until(&named, "remote.whoami", |e, t| !e && t == "user-1").await;
    assert_eq!(call(&named, "open.whoami").await, (false, "anyone".into()));
    // From now on it acts as the signed-in user: the caller whose entry does not name it
    // neither sees it nor reaches it, by any way; `open` it still sees.
    let names = listed(&gateway.url, Some("token-all")).await;
    assert!(!names.contains(&"remote.whoami".to_string()), "{names:?}");
    assert!(names.contains(&"open.whoami".to_string()), "{names:?}");
    let reached = what_reaches_remote(&gateway.url, Some("token-all")).await;
    assert!(reached.is_empty(), "{reached:#?}");
    let (error, text) = call(&all, "remote.whoami").await;
    assert!(error && !text.contains("user-1"), "{text}");
    let reached = what_reaches_remote(&gateway.url, Some("token-named")).await;
    assert!(reached.len() >= 4, "{reached:#?}");
    upstream_refuses_a_caller_that_may_not_act_as_the_user(&config, &state).await;

    let _ = all.cancel().await;
    let _ = named.cancel().await;
    drop(gateway);
    let _ = std::fs::remove_dir_all(&dir);
}

/// The server asks for a token at once (`initialize` answers 401): the server is not up, and
/// the log, `lint`'s summary and `disco://status` say to run `disco-gateway login`; the other
/// server serves. After `login`, the running gateway starts it at once; a revoked grant then
/// asks to sign in again, as for a server with `oauth`; and `lint` finds it up, acting as the
/// signed-in user.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_without_an_oauth_key_signs_in_when_its_connection_asks() {
    let Some(tools) = tools() else { return };
    disco_gateway::install_tls();
    let servers = servers(&tools).await;
    let (dir, _, config) = setup_with(
        &servers,
        "asked-connect",
        serde_json::json!([]),
        no_key(&servers),
    );

    let (ok, out, err) = lint(&config);
    assert!(ok, "{err}");
    assert!(
        out.contains("server `remote`: not up (") && out.contains("`disco-gateway login remote`"),
        "{out}"
    );
    assert!(out.contains("server `open`: 2 tool(s)"), "{out}");
    assert!(
        err.lines().any(|l| l.contains("upstream failed to start")
            && l.contains("`disco-gateway login remote`")),
        "{err}"
    );

    let client = over_stdio(&config, &dir.join("gateway.log"), "info").await;
    until(&client, "open.whoami", |e, t| !e && t == "anyone").await;
    let status = status(&client).await;
    assert!(
        status.contains("sign in with `disco-gateway login remote`"),
        "{status}"
    );

    login_to(&config, "remote").await;
    // Down and waiting to start again: the new tokens start it at once, not after its backoff.
    until(&client, "remote.whoami", |e, t| !e && t == "user-1").await;
    // Signed in, it is an OAuth server as any: a revoked grant asks to sign in again, and
    // `open` serves on.
    revoke_and_sign_in_again(&servers, &client).await;
    let _ = client.cancel().await;
    login_to(&config, "remote").await;

    let (ok, out, err) = lint(&config);
    assert!(ok, "{err}");
    assert!(out.contains("server `remote`: 2 tool(s)"), "{out}");
    assert!(out.contains("upstream-oauth-identity"), "{out}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// A call routed to the server while it carried no identity, and sent once it does, is
/// refused by the upstream itself, never sent as the user: the gateway's `Hub` in this process
/// with the tokens `login` wrote, its upstream called for a caller that may not act as the
/// user and for one that may.
async fn upstream_refuses_a_caller_that_may_not_act_as_the_user(config: &Path, state: &Path) {
    use disco_gateway::upstream::Hub;
    use disco_runtime::{Caller, Context};
    let text = std::fs::read_to_string(config).expect("the configuration");
    let read = disco_gateway::config::Config::parse(&text, &|_| None).expect("it reads");
    let pins = disco_gateway::pins::Pins::new(state.to_path_buf(), false);
    let hub = Hub::pinned(read.servers, read.disco, Some(pins));
    hub.start();
    assert!(hub.settle(GUARD).await.is_empty(), "every server started");
    let remote = hub
        .upstreams()
        .iter()
        .find(|u| u.config.name == "remote")
        .cloned()
        .expect("remote");
    assert!(remote.acts_as_user());
    let call = |as_user: bool| {
        let ctx = Context::for_caller(Caller::new("all"));
        remote.call("whoami", serde_json::Map::new(), ctx, as_user)
    };
    let refused = tokio::time::timeout(GUARD, call(false))
        .await
        .expect("in time");
    let said = serde_json::to_string(&refused).expect("JSON");
    assert_eq!(refused.is_error, Some(true), "{said}");
    assert!(!said.contains("user-1"), "{said}");
    assert!(said.contains("disco-gateway login remote"), "{said}");
    let served = tokio::time::timeout(GUARD, call(true))
        .await
        .expect("in time");
    let said = serde_json::to_string(&served).expect("JSON");
    assert_ne!(served.is_error, Some(true), "{said}");
    assert!(said.contains("user-1"), "{said}");
    hub.stop().await;
}
