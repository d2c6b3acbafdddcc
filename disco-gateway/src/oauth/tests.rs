use super::*;

/// The URL of the server the tokens are for.
const URL: &str = "https://mcp.example/mcp";

fn temp_dir() -> PathBuf {
    let dir = std::env::temp_dir().join(format!(
        "disco-oauth-{}-{}",
        std::process::id(),
        fastrand::u64(..)
    ));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Credentials as rmcp stores them after a code exchange, with `secret` as both tokens.
fn credentials(secret: &str) -> StoredCredentials {
    let token: rmcp::transport::auth::OAuthTokenResponse =
        serde_json::from_value(serde_json::json!({
            "access_token": secret,
            "token_type": "Bearer",
            "expires_in": 3600,
            "refresh_token": format!("{secret}-refresh"),
        }))
        .unwrap();
    StoredCredentials::new("client-1".into(), Some(token), vec!["mcp".into()], Some(1))
}

#[tokio::test]
async fn the_token_file_is_the_owners_alone_and_read_back_whole() {
    let state = temp_dir().join("state");
    // Every server name, odd ones too, gets a file of its own inside `oauth/`.
    for server in ["notion", "a/b", "..", "名前", &"x".repeat(300)] {
        let path = token_file(&state, server);
        assert_eq!(
            path.parent(),
            Some(state.join("oauth").as_path()),
            "{server}"
        );
        let store = TokenFile::new(path.clone(), URL);
        assert!(store.load().await.unwrap().is_none());
        store.save(credentials("at-secret-1")).await.unwrap();
        let back = store.load().await.unwrap().unwrap();
        assert_eq!(back.client_id, "client-1");
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
            assert_eq!(mode(&path), 0o600, "{server}");
            assert_eq!(mode(&state.join("oauth")), 0o700);
        }
        store.clear().await.unwrap();
        assert!(store.load().await.unwrap().is_none());
    }
}

#[tokio::test]
async fn a_broken_token_file_is_an_error_that_shows_none_of_it() {
    let state = temp_dir();
    let path = token_file(&state, "s");
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    // Cut anywhere, the file's text never reaches the error.
    let whole = serde_json::to_string(&credentials("at-secret-2")).unwrap();
    for cut in (1..whole.len()).step_by(7) {
        std::fs::write(&path, &whole[..cut]).unwrap();
        let e = TokenFile::new(path.clone(), URL)
            .load()
            .await
            .unwrap_err()
            .to_string();
        assert!(!e.contains("at-secret-2"), "{e}");
        assert!(e.contains(&path.display().to_string()), "{e}");
    }
}

#[test]
fn sign_in_again_names_the_command() {
    assert_eq!(
        sign_in_again("notion", "not signed in"),
        "not signed in: sign in again with `disco-gateway login notion`"
    );
}

#[test]
fn a_redirect_parameter_is_read_decoded() {
    let url = "http://127.0.0.1:1/callback?error=access_denied&error_description=no%20way";
    assert_eq!(url_param(url, "error").as_deref(), Some("access_denied"));
    assert_eq!(
        url_param(url, "error_description").as_deref(),
        Some("no way")
    );
    assert_eq!(url_param(url, "code"), None);
}

/// The refresh guard is held across processes' open files: a second holder waits until the
/// first lets go.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_refresh_at_a_time() {
    let state = temp_dir();
    let path = token_file(&state, "s");
    let first = TokenFile::new(path.clone(), URL)
        .acquire_refresh_guard()
        .await
        .unwrap()
        .unwrap();
    let (tx, mut rx) = tokio::sync::oneshot::channel();
    let waiter = tokio::spawn(async move {
        let second = TokenFile::new(path, URL)
            .acquire_refresh_guard()
            .await
            .unwrap();
        let _ = tx.send(());
        second
    });
    // A liveness bound on the wait, not a measure: the second is still waiting.
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    assert!(
        rx.try_recv().is_err(),
        "the second guard was given while the first is held"
    );
    drop(first);
    tokio::time::timeout(std::time::Duration::from_secs(20), waiter)
        .await
        .expect("the second guard after the first")
        .unwrap();
}

#[tokio::test]
async fn a_refresh_is_not_a_new_sign_in_and_a_login_is() {
    let path = token_file(&temp_dir(), "s");
    let refreshing = TokenFile::new(path.clone(), URL);
    // No tokens yet: the first `login` is a new sign-in.
    let mut seen = Seen::now(&path, URL);
    TokenFile::new_grant(path.clone(), URL)
        .save(credentials("at-1"))
        .await
        .unwrap();
    assert!(seen.signed_in_again(&path));
    // Refreshes, each a rename over the file with new tokens: the same sign-in.
    for n in 2..5 {
        refreshing
            .save(credentials(&format!("at-{n}")))
            .await
            .unwrap();
        assert!(!seen.signed_in_again(&path), "refresh {n}");
        let back = refreshing.load().await.unwrap().unwrap();
        let back = serde_json::to_value(back.token_response).unwrap();
        assert_eq!(back["access_token"], format!("at-{n}"));
    }
    // A seen taken now (a connection starting) does not take the last refresh for one.
    let mut fresh = Seen::now(&path, URL);
    assert!(!fresh.signed_in_again(&path));
    // Another `login`: a new grant, even with the same client.
    TokenFile::new_grant(path.clone(), URL)
        .save(credentials("at-5"))
        .await
        .unwrap();
    assert!(seen.signed_in_again(&path));
    assert!(fresh.signed_in_again(&path));
    // Another client, or another authorization server, even through a refresh's save.
    let mut other = credentials("at-6");
    other.client_id = "client-2".into();
    refreshing.save(other).await.unwrap();
    assert!(seen.signed_in_again(&path));
    let other = credentials("at-7").with_issuer(Some("https://other.example".into()));
    refreshing.save(other).await.unwrap();
    assert!(seen.signed_in_again(&path));
    // The tokens removed.
    refreshing.clear().await.unwrap();
    assert!(seen.signed_in_again(&path));
}

#[tokio::test]
async fn tokens_kept_for_another_url_are_not_signed_in() {
    let path = token_file(&temp_dir(), "s");
    TokenFile::new_grant(path.clone(), URL)
        .save(credentials("at-secret-3"))
        .await
        .unwrap();
    assert!(TokenFile::new(path.clone(), URL)
        .load()
        .await
        .unwrap()
        .is_some());
    // The server's `url` changed since `login`: its tokens are not sent to the new one.
    for other in [
        "https://mcp.example/mcp/",
        "https://mcp.example/other",
        "https://elsewhere.example/mcp",
        "http://mcp.example/mcp",
        "",
    ] {
        let store = TokenFile::new(path.clone(), other);
        assert!(store.load().await.unwrap().is_none(), "{other}");
        let mut seen = Seen::now(&path, other);
        assert_eq!(seen, Seen::now(&path, other));
        // A `login` for the new URL is a new sign-in.
        TokenFile::new_grant(path.clone(), other)
            .save(credentials("at-4"))
            .await
            .unwrap();
        assert!(seen.signed_in_again(&path), "{other}");
        assert!(store.load().await.unwrap().is_some(), "{other}");
        // ... and the old URL is no longer signed in.
        assert!(TokenFile::new(path.clone(), URL)
            .load()
            .await
            .unwrap()
            .is_none());
        TokenFile::new_grant(path.clone(), URL)
            .save(credentials("at-5"))
            .await
            .unwrap();
    }
    // A file written before the URL was kept in it names none: not signed in.
    let old = serde_json::to_vec(&credentials("at-6")).unwrap();
    std::fs::write(&path, old).unwrap();
    assert!(TokenFile::new(path.clone(), URL)
        .load()
        .await
        .unwrap()
        .is_none());
}

/// The loopback listener of a `login` waiting for state `s1`, and its port.
/// The redirect's URL, once the browser was answered (as `login` does after the exchange).
async fn listening() -> (u16, tokio::task::JoinHandle<Result<String, String>>) {
    let listener = tokio::net::TcpListener::bind(("127.0.0.1", 0))
        .await
        .unwrap();
    let port = listener.local_addr().unwrap().port();
    let task = tokio::spawn(async move {
        let (mut browser, url) = redirected(&listener, port, "s1").await?;
        answer(&mut browser, "200 OK", b"done").await;
        Ok(url)
    });
    (port, task)
}

/// The status line of the answer to `GET target` on the listener at `port`.
async fn get(port: u16, target: &str) -> String {
    let mut stream = tokio::net::TcpStream::connect(("127.0.0.1", port))
        .await
        .unwrap();
    let request = format!("GET {target} HTTP/1.1\r\nhost: 127.0.0.1\r\n\r\n");
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut answer = String::new();
    stream.read_to_string(&mut answer).await.unwrap();
    answer.lines().next().unwrap_or("").to_string()
}

/// What the task of [`listening`] ended with, waited for at most [`GUARD`].
async fn ended(task: tokio::task::JoinHandle<Result<String, String>>) -> Result<String, String> {
    tokio::time::timeout(GUARD, task)
        .await
        .expect("the listener ends within the guard")
        .expect("the listener does not panic")
}

/// A hang guard, never a measure.
const GUARD: std::time::Duration = std::time::Duration::from_secs(20);

#[tokio::test]
async fn a_callback_with_another_state_is_refused_and_the_listener_goes_on() {
    let (port, task) = listening().await;
    for target in [
        "/callback?code=c0&state=s2",
        "/callback?code=c0",
        "/callback?code=c0&state=",
        "/callback?code=c0&state=s1x",
        "/callback?error=access_denied&state=other",
    ] {
        assert_eq!(
            get(port, target).await,
            "HTTP/1.1 400 Bad Request",
            "{target}"
        );
        assert!(!task.is_finished(), "{target}");
    }
    assert_eq!(get(port, "/favicon.ico").await, "HTTP/1.1 404 Not Found");
    assert_eq!(
        get(port, "/callback?code=c1&state=s1").await,
        "HTTP/1.1 200 OK"
    );
    let url = ended(task).await.expect("the redirect is taken");
    assert_eq!(url_param(&url, "code").as_deref(), Some("c1"));
}

#[tokio::test]
async fn a_refusal_is_shown_as_a_terminal_may_show_it() {
    let (port, task) = listening().await;
    get(
        port,
        "/callback?error=%1B%5B2J%E2%80%AEdenied%0Anext&state=s1",
    )
    .await;
    let e = ended(task).await.expect_err("the refusal is an error");
    assert!(e.contains("denied"), "{e}");
    assert!(
        !e.chars().any(|c| c.is_control() || c == '\u{202e}'),
        "{e:?}"
    );
}

#[tokio::test]
async fn a_silent_connection_does_not_hold_up_the_redirect() {
    let (port, task) = listening().await;
    // A browser's preconnect: a connection that says nothing, kept open.
    let _silent = tokio::net::TcpStream::connect(("127.0.0.1", port))
        .await
        .unwrap();
    let status = tokio::time::timeout(GUARD, get(port, "/callback?code=c1&state=s1"))
        .await
        .expect("the redirect is answered");
    assert_eq!(status, "HTTP/1.1 200 OK");
    let url = ended(task).await.expect("the redirect is taken");
    assert_eq!(url_param(&url, "code").as_deref(), Some("c1"));
}

#[tokio::test]
async fn a_rejected_refresh_token_is_dropped_and_the_client_kept() {
    let path = token_file(&temp_dir(), "s");
    let store = TokenFile::new(path.clone(), URL);
    TokenFile::new_grant(path.clone(), URL)
        .save(credentials("at-8"))
        .await
        .unwrap();
    let mut seen = Seen::now(&path, URL);
    let used = store.load().await.unwrap().unwrap();
    store.on_refresh_token_rejected(&used).await.unwrap();
    let back = store.load().await.unwrap().unwrap();
    assert!(back.token_response.is_none());
    assert_eq!(back.client_id, "client-1");
    // Not a new sign-in: the connection goes on, and its next request asks to sign in.
    assert!(!seen.signed_in_again(&path));
    // Tokens a `login` saved since the rejected ones were used are left alone.
    TokenFile::new_grant(path.clone(), URL)
        .save(credentials("at-9"))
        .await
        .unwrap();
    store.on_refresh_token_rejected(&used).await.unwrap();
    let back = store.load().await.unwrap().unwrap();
    let back = serde_json::to_value(back.token_response).unwrap();
    assert_eq!(back["access_token"], "at-9");
}

/// `login` over every kind of URL server entry (config/tests/kinds.rs): one that signs in
/// (asked to, or by no key when the server asks) is tried (here its authorization server is
/// not there: the error is discovery's); one that never signs in is refused, saying why in
/// one sentence that names the server, its words single-spaced. And the other refusals: a
/// stdio server, a disabled one, an unknown name, a `callbackPort` in use.
#[tokio::test]
async fn login_tries_each_server_that_signs_in_and_says_why_not_for_the_others() {
    use crate::config::tests::kinds::{kinds, Expected};
    // The TLS provider discovery's HTTP client needs (an error: one is installed already).
    let _ = rustls::crypto::ring::default_provider().install_default();
    let state = temp_dir();
    let check = |e: &str| {
        assert!(e.contains("`remote`"), "{e}");
        assert!(!e.contains("  "), "{e}");
        assert!(!e.contains('\n'), "{e}");
        assert!(!e.contains("s3cr3t"), "{e}");
    };
    let mut refused = 0;
    for kind in kinds() {
        let Ok(config) = kind.read() else {
            assert_eq!(kind.expected(), Expected::Refused, "{}", kind.label);
            continue;
        };
        let e = login_server(&config, "remote", &state, |_| {})
            .await
            .unwrap_err();
        if kind.expected() == Expected::Never {
            check(&e);
            assert!(e.starts_with("login: "), "{}: {e}", kind.label);
            let why = if kind.credential {
                "header its configuration gives"
            } else if kind.forward {
                "`forwardToken`"
            } else {
                "OAuth turned off"
            };
            assert!(e.contains(why), "{}: {e}", kind.label);
            refused += 1;
        } else {
            // Tried: discovery at the server's URL, where nothing listens.
            assert!(e.starts_with("OAuth: "), "{}: {e}", kind.label);
        }
    }
    assert!(refused >= 40, "{refused}");

    let busy = std::net::TcpListener::bind(("127.0.0.1", 0)).unwrap();
    let port = busy.local_addr().unwrap().port();
    let text = serde_json::json!({"mcpServers": {
        "remote": {"url": "http://127.0.0.1:9/mcp", "oauth": {"callbackPort": port}},
    }})
    .to_string();
    let config = crate::config::Config::parse(&text, &|_| None).unwrap();
    let e = login_server(&config, "remote", &state, |_| {})
        .await
        .unwrap_err();
    assert!(e.contains(&format!("127.0.0.1:{port}")), "{e}");
    assert!(e.contains("callbackPort"), "{e}");
    drop(busy);
    for entry in [
        serde_json::json!({"command": "x"}),
        serde_json::json!({"url": "http://127.0.0.1:9/mcp", "disabled": true}),
    ] {
        let text = serde_json::json!({"mcpServers": {"remote": entry, "other": {"command": "y"}}});
        let config = crate::config::Config::parse(&text.to_string(), &|_| None).unwrap();
        let e = login_server(&config, "remote", &state, |_| {})
            .await
            .unwrap_err();
        check(&e);
        let e = login_server(&config, "nowhere", &state, |_| {})
            .await
            .unwrap_err();
        assert!(e.contains("no server is named `nowhere`"), "{e}");
        assert!(!e.contains("  "), "{e}");
    }
    let _ = std::fs::remove_dir_all(&state);
}

/// The browser is told it is signed in once the code is exchanged, not when it comes back:
/// `redirected` hands its connection over unanswered.
#[tokio::test]
async fn the_browser_is_answered_after_the_exchange() {
    let listener = tokio::net::TcpListener::bind(("127.0.0.1", 0))
        .await
        .unwrap();
    let port = listener.local_addr().unwrap().port();
    let mut browser = tokio::net::TcpStream::connect(("127.0.0.1", port))
        .await
        .unwrap();
    browser
        .write_all(b"GET /callback?code=c1&state=s1 HTTP/1.1\r\nhost: 127.0.0.1\r\n\r\n")
        .await
        .unwrap();
    let (mut stream, url) = tokio::time::timeout(GUARD, redirected(&listener, port, "s1"))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(url_param(&url, "code").as_deref(), Some("c1"));
    // Nothing is said to the browser yet (a write on loopback is in its buffer at once).
    let mut buf = [0u8; 64];
    match browser.try_read(&mut buf) {
        Err(e) => assert_eq!(e.kind(), std::io::ErrorKind::WouldBlock),
        Ok(n) => panic!("answered before the exchange: {n} bytes"),
    }
    answer(&mut stream, "200 OK", b"signed in").await;
    let mut said = String::new();
    tokio::time::timeout(GUARD, browser.read_to_string(&mut said))
        .await
        .unwrap()
        .unwrap();
    assert!(said.starts_with("HTTP/1.1 200 OK"), "{said}");
    assert!(said.ends_with("signed in"), "{said}");
}
