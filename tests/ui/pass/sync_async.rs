// Must compile: sync and async tool functions, with and without parameters.
use disco_runtime::mcp_tool;

/// Add two numbers and return the sum as text.
#[mcp_tool]
fn add(a: f64, b: f64) -> String {
    (a + b).to_string()
}

/// Add two numbers asynchronously and return the sum as text.
#[mcp_tool]
async fn add_async(a: f64, b: f64) -> String {
    (a + b).to_string()
}

/// Say that the server is alive.
#[mcp_tool]
fn ping() -> &'static str {
    "pong"
}

/// Say that the server is alive, asynchronously.
#[mcp_tool]
async fn ping_async() {}

fn main() {
    disco_runtime::check().unwrap();
    // The functions stay ordinary functions.
    assert_eq!(add(1.0, 2.0), "3");
    let _ = add_async(1.0, 2.0);
    let _ = ping_async();
    assert_eq!(ping(), "pong");
}
