#!/usr/bin/env python3
"""Generates three crates with the same 100 tools, for compile time and binary size:

  disco/  100 `#[mcp_tool]` functions, served by `Server::from_inventory()` over stdio
  rmcp/   the same 100 with rmcp's own `#[tool_router]` / `#[tool]` (one args struct each)
  plain/  the same 100 functions without any macro, called by name from `main`

    python3 bench/compile/gen.py OUT_DIR
    bash bench/compile/measure.sh OUT_DIR     # clean builds, rebuilds, binary sizes

Each crate is its own workspace with a copy of the repository's Cargo.lock, so all three use
the same versions of shared dependencies as disco itself.
"""
import os
import shutil
import sys

N = 100
ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
VERBS = ["get", "find", "list", "count", "format", "check", "convert", "summarise", "rank", "tag"]
NOUNS = ["order", "invoice", "ticket", "user", "note", "event", "file", "song", "city", "recipe"]


def tools():
    for i in range(N):
        verb, noun = VERBS[i % 10], NOUNS[i // 10]
        yield i, f"{verb}_{noun}_{i}", f"{verb.capitalize()} the {noun} named by the text, at most `limit` of them ({i})."


def manifest(name, deps):
    return f"""[package]
name = "{name}"
version = "0.1.0"
edition = "2021"
publish = false

[workspace]

[dependencies]
{deps}
[profile.release]
debug = false
"""


def body(i):
    return f'format!("{{text}} {{}}", limit.unwrap_or({i}))'


def disco():
    out = ["use disco_runtime::{mcp_tool, Server};", ""]
    for i, name, desc in tools():
        out += [f"/// {desc}", "///", "/// # Arguments", "/// * `text` - what to look for",
                "/// * `limit` - how many to return", "#[mcp_tool(read_only)]",
                f"async fn {name}(text: String, limit: Option<u32>) -> String {{", f"    {body(i)}", "}", ""]
    out += ["#[tokio::main]", "async fn main() -> Result<(), Box<dyn std::error::Error + Send + Sync>> {",
            "    Server::from_inventory().serve_stdio().await?;", "    Ok(())", "}"]
    deps = (f'disco-runtime = {{ path = "{ROOT}/disco-runtime" }}\n'
            'tokio = { version = "1", features = ["full"] }\n')
    return manifest("tools100-disco", deps), "\n".join(out) + "\n"


def rmcp():
    out = ["use rmcp::handler::server::wrapper::Parameters;", "use rmcp::{tool, tool_router, ServiceExt};",
           "use schemars::JsonSchema;", "use serde::Deserialize;", "", "#[derive(Clone)]", "struct Tools;", ""]
    for i, name, desc in tools():
        out += ["#[derive(Deserialize, JsonSchema)]", f"struct Args{i} {{", "    /// what to look for",
                "    text: String,", "    /// how many to return", "    limit: Option<u32>,", "}", ""]
    out += ["#[tool_router(server_handler)]", "impl Tools {"]
    for i, name, desc in tools():
        d = desc.replace('"', '\\"')
        out += [f'    #[tool(description = "{d}", annotations(read_only_hint = true))]',
                f"    async fn {name}(&self, Parameters(Args{i} {{ text, limit }}): Parameters<Args{i}>) -> String {{",
                f"        {body(i)}", "    }", ""]
    out += ["}", "", "#[tokio::main]", "async fn main() -> Result<(), Box<dyn std::error::Error + Send + Sync>> {",
            "    Tools.serve(rmcp::transport::stdio_pipes()).await?.waiting().await?;", "    Ok(())", "}"]
    deps = ('rmcp = { version = "=3.11.0", default-features = false, features = ["server", "macros", "schemars", "transport-io"] }\n'
            'schemars = "1.2"\nserde = { version = "1", features = ["derive"] }\n'
            'tokio = { version = "1", features = ["full"] }\n')
    return manifest("tools100-rmcp", deps), "\n".join(out) + "\n"


def plain():
    out = []
    for i, name, desc in tools():
        out += [f"/// {desc}", f"fn {name}(text: String, limit: Option<u32>) -> String {{", f"    {body(i)}", "}", ""]
    out += ["fn main() {", "    let mut args = std::env::args().skip(1);",
            "    let name = args.next().unwrap_or_default();", "    let text = args.next().unwrap_or_default();",
            "    let out = match name.as_str() {"]
    for i, name, desc in tools():
        out.append(f'        "{name}" => {name}(text, None),')
    out += ['        _ => String::new(),', "    };", '    println!("{out}");', "}"]
    return manifest("tools100-plain", ""), "\n".join(out) + "\n"


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: gen.py OUT_DIR")
    out = sys.argv[1]
    for kind, (cargo, src) in {"disco": disco(), "rmcp": rmcp(), "plain": plain()}.items():
        d = os.path.join(out, kind)
        os.makedirs(os.path.join(d, "src"), exist_ok=True)
        with open(os.path.join(d, "Cargo.toml"), "w") as f:
            f.write(cargo)
        with open(os.path.join(d, "src", "main.rs"), "w") as f:
            f.write(src)
        shutil.copy(os.path.join(ROOT, "Cargo.lock"), os.path.join(d, "Cargo.lock"))
    print(out)


if __name__ == "__main__":
    main()
