//! Slow clients without a token cannot lock a legitimate client out. The server runs in a
//! child process with a small open-file limit (`ulimit -n 160`), as a server under attack
//! would find itself at its limit, and with the default `HttpOptions` (bearer tokens on):
//! 300 connections each send half a request head and then nothing; a request with a token
//! on a new connection must still be answered. Bounded: 301 loopback connections, one
//! request, 30 s at most.
//!
//! The server process is this test binary started again in child mode, running this module's
//! child test alone; it serves this module's tool alone (`common::server_in`).

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::common::http::Conn;
use crate::common::{serve_http_child, server_in, test_name};
use disco_runtime::{mcp_tool, BearerTokens, Caller, HttpOptions};
use serde_json::json;
use tokio::io::AsyncWriteExt;

const CHILD_ENV: &str = "DISCO_SLOW_CLIENTS_CHILD";
const ATTACKERS: usize = 300;

/// Repeat a text back.
#[mcp_tool(read_only)]
fn echo(text: String) -> String {
    text
}

/// Child mode: serve with default options and one token, print the port, stop when stdin
/// closes.
#[test]
fn slow_clients_server_child() {
    if std::env::var_os(CHILD_ENV).is_none() {
        return;
    }
    let tokens = BearerTokens::new().token("tok-legit", Caller::new("legit"));
    serve_http_child(
        server_in(module_path!())
            .http_options(HttpOptions::default().bearer_auth(tokens).stateless(true)),
    );
}

#[tokio::test]
async fn half_open_connections_without_a_token_do_not_lock_out_a_legitimate_request() {
    let _alone = crate::common::HEAVY.lock().await;
    let exe = std::env::current_exe().expect("test binary");
    let mut child = Command::new("sh")
        .arg("-c")
        .arg("ulimit -n 160 && exec \"$0\" \"$@\"")
        .arg(exe)
        .args([
            "--exact",
            test_name(module_path!(), "slow_clients_server_child").as_str(),
            "--nocapture",
            "--test-threads",
            "1",
        ])
        .env(CHILD_ENV, "1")
        .env("RUST_LOG", "error")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn the server process");
    let stdout = child.stdout.take().expect("stdout");
    let port = BufReader::new(stdout)
        .lines()
        .map_while(Result::ok)
        .find_map(|line| line.split("PORT ").nth(1)?.trim().parse::<u16>().ok())
        .expect("the server prints its port");
    let addr = std::net::SocketAddr::from(([127, 0, 0, 1], port));

    let outcome = tokio::time::timeout(Duration::from_secs(30), async {
        let mut held = Vec::new();
        for _ in 0..ATTACKERS {
            let Ok(mut tcp) = tokio::net::TcpStream::connect(addr).await else {
                break;
            };
            let half = format!("POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: app");
            let _ = tcp.write_all(half.as_bytes()).await;
            held.push(tcp);
        }
        // Let the server take them all from its backlog.
        tokio::time::sleep(Duration::from_millis(500)).await;
        let started = Instant::now();
        let mut conn = Conn::open(addr).await;
        let body = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                          "params": {"name": "echo", "arguments": {"text": "through"}}});
        let answer = tokio::time::timeout(
            Duration::from_secs(5),
            conn.request(
                "POST",
                "/mcp",
                &[
                    ("Accept", "application/json, text/event-stream"),
                    ("Content-Type", "application/json"),
                    ("Authorization", "Bearer tok-legit"),
                ],
                body.to_string().as_bytes(),
            ),
        )
        .await;
        (held.len(), started.elapsed(), answer)
    })
    .await;
    drop(child.stdin.take());
    let _ = child.kill();
    let _ = child.wait();
    let (attackers, took, answer) = outcome.expect("the test finishes in time");
    assert_eq!(attackers, ATTACKERS, "every slow connection was opened");
    let reply = answer
        .expect("the legitimate request is answered within 5 s")
        .expect("a readable answer");
    assert_eq!(reply.status, 200, "{}", reply.text());
    assert_eq!(reply.json()["result"]["content"][0]["text"], "through");
    eprintln!("{attackers} half-open connections; the legitimate request answered in {took:?}");
}
