pub mod http;
pub mod named;
pub mod notes;

use disco_runtime::catalog::JsonCatalogProvider;
use disco_runtime::{Catalog, Server};
use serde_json::{json, Value};

/// The `#[mcp_tool]`s declared in `module` (a `module_path!()`) and in the modules inside it:
/// a test's own tools, whatever else its binary's inventory holds.
pub fn tools_in(module: &str) -> impl Iterator<Item = &'static disco_runtime::ToolSpec> + '_ {
    disco_runtime::tool::registered().filter(move |s| {
        s.origin
            .module
            .strip_prefix(module)
            .is_some_and(|rest| rest.is_empty() || rest.starts_with("::"))
    })
}

/// A server over the `#[mcp_tool]`s of `module` (a `module_path!()`) alone, with the
/// defaults of `Server::from_inventory()`: what that served when the module was a binary of
/// its own. The binary's inventory also holds tools a server refuses on purpose.
pub fn server_in(module: &str) -> Server {
    Server::new(Catalog::builder().specs(tools_in(module)))
}

/// The name the test harness gives the test `name` of `module` (a `module_path!()`): the path
/// without the crate's name, which is what `--exact` matches when a test runs this binary
/// again as a child process.
pub fn test_name(module: &str, name: &str) -> String {
    match module.split_once("::") {
        Some((_, inner)) => format!("{inner}::{name}"),
        None => name.to_string(),
    }
}

/// Held by the tests that load the machine or time their answers (the load test, the slow
/// clients, the huge names), so that in this one binary they never run beside each other:
/// libtest runs tests in parallel, and each of them was written to run alone.
pub static HEAVY: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

/// The parent side of a test that runs its server in a process of its own: this test binary
/// started again with `env` set, running the child test `child` of `module` (a
/// `module_path!()`) alone, which serves with [`serve_http_child`]. Dropping it closes the
/// child's stdin, which stops the server, and waits for it (killed after 5 s).
pub struct ChildServer {
    pub child: std::process::Child,
    pub addr: std::net::SocketAddr,
}

impl ChildServer {
    pub fn spawn(module: &str, child: &str, env: &str) -> ChildServer {
        use std::io::BufRead;
        let mut child = std::process::Command::new(std::env::current_exe().expect("test binary"))
            .args([
                "--exact",
                test_name(module, child).as_str(),
                "--nocapture",
                "--test-threads",
                "1",
            ])
            .env(env, "1")
            .env("RUST_LOG", "error")
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::null())
            .spawn()
            .expect("spawn the server process");
        let stdout = child.stdout.take().expect("stdout");
        // The harness prints `test <name> ... ` on the same line as the port.
        let port = std::io::BufReader::new(stdout)
            .lines()
            .map_while(Result::ok)
            .find_map(|line| line.split("PORT ").nth(1)?.trim().parse::<u16>().ok())
            .expect("the server process prints its port");
        ChildServer {
            child,
            addr: std::net::SocketAddr::from(([127, 0, 0, 1], port)),
        }
    }

    /// A figure in kB of `/proc/<pid>/status` (`"VmRSS:"`, `"VmHWM:"`); 0 when unreadable.
    pub fn status_kb(&self, field: &str) -> u64 {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.child.id()))
            .unwrap_or_default();
        status
            .lines()
            .find_map(|l| l.strip_prefix(field))
            .and_then(|v| v.split_whitespace().next())
            .and_then(|v| v.parse().ok())
            .unwrap_or(0)
    }
}

impl Drop for ChildServer {
    fn drop(&mut self) {
        drop(self.child.stdin.take());
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
        while std::time::Instant::now() < deadline {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The child side of a test that runs its server in a process of its own: serves `server`
/// over HTTP on 127.0.0.1:0 on a two-worker runtime, prints `PORT <n>` for the parent, and
/// stops when stdin closes (when the parent ends or drops the pipe).
pub fn serve_http_child(server: Server) {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    rt.block_on(async {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind");
        println!("PORT {}", listener.local_addr().expect("addr").port());
        let shutdown = async {
            let _ = tokio::task::spawn_blocking(|| {
                let mut sink = String::new();
                while std::io::stdin()
                    .read_line(&mut sink)
                    .map(|n| n > 0)
                    .unwrap_or(false)
                {}
            })
            .await;
        };
        server
            .serve_http_on(listener, shutdown)
            .await
            .expect("server runs");
    });
}

/// Tools of these names and nothing more, every one read-only (no description, any object as
/// arguments): a catalog where a fuzzy correction is allowed on every tool, so that only the
/// name rules decide.
pub fn read_only_tools(names: &[String]) -> JsonCatalogProvider {
    let tools: Vec<Value> = names
        .iter()
        .map(|n| {
            json!({"name": n, "description": "", "inputSchema": {"type": "object"},
                   "annotations": {"readOnlyHint": true}})
        })
        .collect();
    JsonCatalogProvider::from_value(&json!({ "tools": tools })).unwrap()
}

/// xorshift64: the generated corpora (`polarity_corpus`, `meaning_corpus`) draw the same cases
/// on every run.
pub struct Rng(pub u64);

impl Rng {
    pub fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        self.0 = x;
        x
    }

    pub fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    pub fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }
}
