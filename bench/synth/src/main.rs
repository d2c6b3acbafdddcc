//! `synth --tools N [--seed S] [--only bfcl|metatool] [--with CATALOG]`: prints a synthetic
//! tools/list catalog. `--with` puts a real catalog's tools first (kept as they are) and fills
//! up to N with synthetic ones: the 10,000-tool catalog of the FastMCP comparison is MetaTool's
//! 199 tools among 9,801 synthetic ones, so MetaTool's labelled queries still have their answer.
use std::process::ExitCode;

fn main() -> ExitCode {
    let mut n = 1000usize;
    let mut seed = 42u64;
    let mut only: Option<String> = None;
    let mut with: Option<String> = None;
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        let v = args.next();
        match (a.as_str(), v) {
            ("--tools", Some(v)) => n = v.parse().unwrap_or(n),
            ("--seed", Some(v)) => seed = v.parse().unwrap_or(seed),
            ("--only", Some(v)) => only = Some(v),
            ("--with", Some(v)) => with = Some(v),
            _ => {
                eprintln!(
                    "usage: synth --tools N [--seed S] [--only bfcl|metatool] [--with CATALOG]"
                );
                return ExitCode::from(2);
            }
        }
    }
    let dir = synth::datasets_dir();
    let vocab = match only.as_deref() {
        Some(which) => match synth::vocab_from(&[dir.join(which).join("mcp/catalog.json")]) {
            Ok(v) => v,
            Err(e) => {
                eprintln!("error: {e}");
                return ExitCode::FAILURE;
            }
        },
        None => synth::vocab(),
    };
    let mut tools = match &with {
        Some(path) => match synth::read_tools(std::path::Path::new(path)) {
            Ok(t) => t,
            Err(e) => {
                eprintln!("error: {e}");
                return ExitCode::FAILURE;
            }
        },
        None => Vec::new(),
    };
    let taken: std::collections::HashSet<String> = tools
        .iter()
        .filter_map(|t| t["name"].as_str().map(str::to_string))
        .collect();
    let fill = n.saturating_sub(tools.len());
    // Generate a little more than needed and drop names the real catalog already has.
    let generated = synth::catalog(fill + taken.len(), seed, &vocab);
    for t in generated["tools"].as_array().into_iter().flatten() {
        if tools.len() >= n {
            break;
        }
        if !taken.contains(t["name"].as_str().unwrap_or_default()) {
            tools.push(t.clone());
        }
    }
    eprintln!("{} tools from {}", tools.len(), vocab.source);
    println!("{}", serde_json::json!({ "tools": tools }));
    ExitCode::SUCCESS
}
