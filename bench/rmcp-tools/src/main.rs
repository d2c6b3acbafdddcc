//! The ten benchmark tools served by plain rmcp with its own `#[tool_router]` macros: the
//! baseline for disco's overhead. Transports are set up as disco sets them up (stdio over
//! pipes, TCP_NODELAY, the same Streamable HTTP configuration), so that the ratio measures
//! disco's call path and not a transport setting.
//!
//! Two ways rmcp's macros are used, both measured: `#[tool_router(server_handler)]` as rmcp's
//! README shows it, whose generated handler calls `Self::tool_router()` (building every tool's
//! schema) on each call (`--router-per-call`); and by default the router built once and kept in
//! a field (`#[tool_handler(router = ...)]`), which is the faster baseline disco is held to.
//!
//! ```text
//! rmcp-tools --stdio [--router-per-call]
//! rmcp-tools --http 127.0.0.1:0 [--stateless]   # prints LISTENING http://ADDR/mcp
//! ```

use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use rmcp::{tool, tool_handler, tool_router, ServerHandler, ServiceExt};
use schemars::JsonSchema;
use serde::Deserialize;
use std::borrow::Cow;

#[derive(Clone)]
struct Tools {
    router: ToolRouter<Tools>,
    per_call: bool,
}

impl Tools {
    fn new(per_call: bool) -> Tools {
        Tools {
            router: Tools::tool_router(),
            per_call,
        }
    }

    /// The stored router, or a new one per call as the README's `server_handler` form does.
    fn router(&self) -> Cow<'_, ToolRouter<Tools>> {
        if self.per_call {
            Cow::Owned(Tools::tool_router())
        } else {
            Cow::Borrowed(&self.router)
        }
    }
}

#[tool_handler(router = self.router())]
impl ServerHandler for Tools {}

#[derive(Deserialize, JsonSchema)]
struct TwoNumbers {
    /// the first number
    a: f64,
    /// the second number
    b: f64,
}

#[derive(Deserialize, JsonSchema)]
struct Text {
    /// the text
    text: String,
}

#[derive(Deserialize, JsonSchema)]
struct Celsius {
    /// the temperature in degrees Celsius
    celsius: f64,
}

#[derive(Deserialize, JsonSchema)]
struct Number {
    /// the number
    n: u64,
}

#[derive(Deserialize, JsonSchema)]
struct Index {
    /// which Fibonacci number, from 0
    n: u32,
}

#[derive(Deserialize, JsonSchema)]
struct Words {
    /// the words to join
    words: Vec<String>,
    /// what to put between them (default a space)
    separator: Option<String>,
}

#[tool_router]
impl Tools {
    #[tool(
        description = "Add two numbers and return their sum.",
        annotations(read_only_hint = true)
    )]
    async fn add(&self, Parameters(p): Parameters<TwoNumbers>) -> String {
        (p.a + p.b).to_string()
    }

    #[tool(
        description = "Multiply two numbers and return their product.",
        annotations(read_only_hint = true)
    )]
    async fn multiply(&self, Parameters(p): Parameters<TwoNumbers>) -> String {
        (p.a * p.b).to_string()
    }

    #[tool(
        description = "Return the text unchanged.",
        annotations(read_only_hint = true)
    )]
    async fn echo(&self, Parameters(p): Parameters<Text>) -> String {
        p.text
    }

    #[tool(
        description = "Return the text with its characters in reverse order.",
        annotations(read_only_hint = true)
    )]
    async fn reverse_text(&self, Parameters(p): Parameters<Text>) -> String {
        p.text.chars().rev().collect()
    }

    #[tool(
        description = "Return the text in upper case.",
        annotations(read_only_hint = true)
    )]
    async fn uppercase(&self, Parameters(p): Parameters<Text>) -> String {
        p.text.to_uppercase()
    }

    #[tool(
        description = "Count the words of a text.",
        annotations(read_only_hint = true)
    )]
    async fn word_count(&self, Parameters(p): Parameters<Text>) -> String {
        p.text.split_whitespace().count().to_string()
    }

    #[tool(
        description = "Convert a temperature from degrees Celsius to degrees Fahrenheit.",
        annotations(read_only_hint = true)
    )]
    async fn celsius_to_fahrenheit(&self, Parameters(p): Parameters<Celsius>) -> String {
        (p.celsius * 9.0 / 5.0 + 32.0).to_string()
    }

    #[tool(
        description = "Say whether a whole number is prime.",
        annotations(read_only_hint = true)
    )]
    async fn is_prime(&self, Parameters(p): Parameters<Number>) -> String {
        let n = p.n;
        let prime = n >= 2 && {
            let mut d = 2u64;
            let mut prime = true;
            while d.saturating_mul(d) <= n {
                if n.is_multiple_of(d) {
                    prime = false;
                    break;
                }
                d += 1;
            }
            prime
        };
        prime.to_string()
    }

    #[tool(
        description = "Return the n-th Fibonacci number (n at most 90).",
        annotations(read_only_hint = true)
    )]
    async fn fibonacci(&self, Parameters(p): Parameters<Index>) -> String {
        let (mut a, mut b) = (0u64, 1u64);
        for _ in 0..p.n.min(90) {
            (a, b) = (b, a + b);
        }
        a.to_string()
    }

    #[tool(
        description = "Join words into one text.",
        annotations(read_only_hint = true)
    )]
    async fn join_words(&self, Parameters(p): Parameters<Words>) -> String {
        p.words.join(p.separator.as_deref().unwrap_or(" "))
    }
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let per_call = args.iter().any(|a| a == "--router-per-call");
    match args.iter().position(|a| a == "--http") {
        Some(i) => {
            let addr = args.get(i + 1).map(String::as_str).unwrap_or("127.0.0.1:0");
            let stateless = args.iter().any(|a| a == "--stateless");
            let listener = tokio::net::TcpListener::bind(addr).await?;
            println!("LISTENING http://{}/mcp", listener.local_addr()?);
            // As disco: loopback hosts, sessions unless stateless, JSON responses when stateless.
            let mut config = StreamableHttpServerConfig::default()
                .with_allowed_hosts(["localhost", "127.0.0.1", "::1"])
                .with_legacy_session_mode(!stateless);
            if stateless {
                config = config.with_json_response(true);
            }
            // Built once and cloned per session (or per request when stateless), as disco
            // shares its catalog: the factory must not rebuild the router.
            let base = Tools::new(per_call);
            let service = StreamableHttpService::new(
                move || Ok(base.clone()),
                std::sync::Arc::new(LocalSessionManager::default()),
                config,
            );
            let app = axum::Router::new().route_service("/mcp", service);
            let listener = axum::serve::ListenerExt::tap_io(listener, |tcp| {
                let _ = tcp.set_nodelay(true);
            });
            axum::serve(listener, app)
                .with_graceful_shutdown(async {
                    let _ = tokio::signal::ctrl_c().await;
                })
                .await?;
        }
        None => {
            let running = Tools::new(per_call)
                .serve(rmcp::transport::stdio_pipes())
                .await?;
            running.waiting().await?;
        }
    }
    Ok(())
}
