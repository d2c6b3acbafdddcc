//! What the gateway's integration tests share.

// Each test crate uses a part of it.
#![allow(dead_code)]

use std::time::Duration;

use tokio::io::AsyncBufReadExt;

/// The URL a gateway started with `--http` says it listens at (`LISTENING <url>` on its
/// stdout, which is taken), waited for at most `guard`.
pub async fn listening_url(child: &mut tokio::process::Child, guard: Duration) -> String {
    let stdout = child.stdout.take().expect("the gateway's stdout is piped");
    let mut lines = tokio::io::BufReader::new(stdout).lines();
    tokio::time::timeout(guard, async {
        while let Ok(Some(line)) = lines.next_line().await {
            if let Some(url) = line.strip_prefix("LISTENING ") {
                return url.to_string();
            }
        }
        panic!("the gateway ended without listening");
    })
    .await
    .expect("the gateway listens")
}

/// Runs `command` to its end with no stdin: its stdout, or a failure that shows its stderr.
pub fn succeeds(command: &mut std::process::Command) -> String {
    let out = command
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap_or_else(|e| panic!("{command:?} does not run: {e}"));
    assert!(
        out.status.success(),
        "{command:?}: {}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}
