use super::*;

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
        let store = TokenFile::new(path.clone());
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
        let e = TokenFile::new(path.clone())
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
    let first = TokenFile::new(path.clone())
        .acquire_refresh_guard()
        .await
        .unwrap()
        .unwrap();
    let (tx, mut rx) = tokio::sync::oneshot::channel();
    let waiter = tokio::spawn(async move {
        let second = TokenFile::new(path).acquire_refresh_guard().await.unwrap();
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
