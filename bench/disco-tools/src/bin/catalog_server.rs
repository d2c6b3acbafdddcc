//! Serves a JSON tools/list catalog with disco's `tool_search`, for the FastMCP comparison:
//! `catalog_server CATALOG --stdio` or `catalog_server CATALOG --http 127.0.0.1:0`.
//! Calls to the catalog's tools answer with their name and arguments (they have no code).
//! Like FastMCP's search transform, tools/list shows only the meta-tools (search-first).
//! `--threshold X` overrides the abstention threshold (0 never abstains). `--list-all` lists
//! every tool instead (an upstream of many tools, for the gateway's start-up benchmark).

use disco_runtime::catalog::JsonCatalogProvider;
use disco_runtime::{Exposure, SearchOptions, Server};

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some(path) = args.first() else {
        eprintln!("usage: catalog_server CATALOG (--stdio | --http ADDR)");
        std::process::exit(2);
    };
    let provider = JsonCatalogProvider::from_file(std::path::Path::new(path))?;
    let exposure = if args.iter().any(|a| a == "--list-all") {
        Exposure::All
    } else {
        Exposure::SearchFirst { pinned: Vec::new() }
    };
    let mut search = SearchOptions::default().enabled(true).exposure(exposure);
    if let Some(i) = args.iter().position(|a| a == "--threshold") {
        if let Some(t) = args.get(i + 1).and_then(|t| t.parse().ok()) {
            search.threshold = t;
        }
    }
    let server = Server::from_inventory()
        .name("bench-catalog")
        .provider(provider)
        .search(search);
    match args.get(1).map(String::as_str) {
        Some("--http") => {
            let addr = args.get(2).map(String::as_str).unwrap_or("127.0.0.1:0");
            let listener = tokio::net::TcpListener::bind(addr).await?;
            println!("LISTENING http://{}/mcp", listener.local_addr()?);
            server
                .serve_http_on(listener, async {
                    let _ = tokio::signal::ctrl_c().await;
                })
                .await?;
        }
        _ => server.serve_stdio().await?,
    }
    Ok(())
}
