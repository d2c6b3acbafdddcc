//! The ten benchmark tools served by disco. `bench/rmcp-tools` serves the same ten with rmcp's
//! own macros; `bench/loadgen` drives both the same way (see BENCHMARKS.md).
//!
//! ```text
//! disco-tools --stdio
//! disco-tools --http 127.0.0.1:0 [--stateless]   # prints LISTENING http://ADDR/mcp
//! ```
//!
//! The tools are `async` as in the rmcp server: a sync disco tool runs on tokio's blocking
//! pool, which is a choice of the tool's author, not a cost of disco's call path.

use disco_runtime::{mcp_tool, HttpOptions, Server};

/// Add two numbers and return their sum.
///
/// # Arguments
/// * `a` - the first number
/// * `b` - the second number
#[mcp_tool(read_only)]
async fn add(a: f64, b: f64) -> String {
    (a + b).to_string()
}

/// Multiply two numbers and return their product.
///
/// # Arguments
/// * `a` - the first number
/// * `b` - the second number
#[mcp_tool(read_only)]
async fn multiply(a: f64, b: f64) -> String {
    (a * b).to_string()
}

/// Return the text unchanged.
///
/// # Arguments
/// * `text` - the text to echo
#[mcp_tool(read_only)]
async fn echo(text: String) -> String {
    text
}

/// Return the text with its characters in reverse order.
///
/// # Arguments
/// * `text` - the text to reverse
#[mcp_tool(read_only)]
async fn reverse_text(text: String) -> String {
    text.chars().rev().collect()
}

/// Return the text in upper case.
///
/// # Arguments
/// * `text` - the text to convert
#[mcp_tool(read_only)]
async fn uppercase(text: String) -> String {
    text.to_uppercase()
}

/// Count the words of a text.
///
/// # Arguments
/// * `text` - the text whose words to count
#[mcp_tool(read_only)]
async fn word_count(text: String) -> String {
    text.split_whitespace().count().to_string()
}

/// Convert a temperature from degrees Celsius to degrees Fahrenheit.
///
/// # Arguments
/// * `celsius` - the temperature in degrees Celsius
#[mcp_tool(read_only)]
async fn celsius_to_fahrenheit(celsius: f64) -> String {
    (celsius * 9.0 / 5.0 + 32.0).to_string()
}

/// Say whether a whole number is prime.
///
/// # Arguments
/// * `n` - the number to test
#[mcp_tool(read_only)]
async fn is_prime(n: u64) -> String {
    tools_logic::is_prime(n).to_string()
}

/// Return the n-th Fibonacci number (n at most 90).
///
/// # Arguments
/// * `n` - which Fibonacci number, from 0
#[mcp_tool(read_only)]
async fn fibonacci(n: u32) -> String {
    tools_logic::fibonacci(n).to_string()
}

/// Join words into one text.
///
/// # Arguments
/// * `words` - the words to join
/// * `separator` - what to put between them (default a space)
#[mcp_tool(read_only)]
async fn join_words(words: Vec<String>, separator: Option<String>) -> String {
    words.join(separator.as_deref().unwrap_or(" "))
}

mod tools_logic {
    pub fn is_prime(n: u64) -> bool {
        if n < 2 {
            return false;
        }
        let mut d = 2u64;
        while d.saturating_mul(d) <= n {
            if n.is_multiple_of(d) {
                return false;
            }
            d += 1;
        }
        true
    }
    pub fn fibonacci(n: u32) -> u64 {
        let (mut a, mut b) = (0u64, 1u64);
        for _ in 0..n.min(90) {
            (a, b) = (b, a + b);
        }
        a
    }
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let server = Server::from_inventory().name("bench-tools");
    // `--calls-beside` (before `--http`): a session's calls run beside rmcp's session loop.
    let calls_beside = args.first().is_some_and(|a| a == "--calls-beside");
    let args = &args[usize::from(calls_beside)..];
    match args.first().map(String::as_str) {
        Some("--http") => {
            let addr = args.get(1).map(String::as_str).unwrap_or("127.0.0.1:0");
            let stateless = args.iter().any(|a| a == "--stateless");
            let listener = tokio::net::TcpListener::bind(addr).await?;
            println!("LISTENING http://{}/mcp", listener.local_addr()?);
            let options = HttpOptions::default()
                .stateless(stateless)
                .calls_beside(calls_beside);
            server
                .http_options(options)
                .serve_http_on(listener, async {
                    let _ = tokio::signal::ctrl_c().await;
                })
                .await?;
        }
        _ => server.serve_stdio().await?,
    }
    Ok(())
}
