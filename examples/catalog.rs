//! Documentation and a discoverability lint for the repository's example tools.
//!
//! ```text
//! cargo run --example catalog                        # write docs/catalog/<server>/{CATALOG.md,tools.json}
//! cargo run --example catalog -- --check             # fail when those files are stale
//! cargo run --example catalog -- --lint              # print findings: tool, severity, problem, fix
//! cargo run --example catalog -- --lint --deny warnings               # exit 1 on any warning or error
//! cargo run --example catalog -- --lint --requests examples/catalog/requests.jsonl
//! ```
//!
//! `--out DIR` writes (or checks) somewhere other than docs/catalog. A request in the
//! `--requests` file is checked against each server that has its expected tool.

#[path = "catalog/servers.rs"]
mod servers;

use std::path::PathBuf;
use std::process::ExitCode;

use disco_runtime::catalog::docs::{self, DocsError};
use disco_runtime::catalog::lint::{self, ExampleRequest, LintOptions, Severity};
use disco_runtime::Catalog;

struct Args {
    check: bool,
    lint: bool,
    deny: Option<Severity>,
    requests: Option<PathBuf>,
    out: PathBuf,
}

const USAGE: &str = "usage: catalog [--check] [--lint [--deny warnings|errors|info] \
                     [--requests FILE.jsonl]] [--out DIR]";

fn parse_args() -> Result<Args, String> {
    let mut args = Args {
        check: false,
        lint: false,
        deny: None,
        requests: None,
        out: PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("docs/catalog"),
    };
    let mut it = std::env::args().skip(1);
    while let Some(arg) = it.next() {
        match arg.as_str() {
            "--check" => args.check = true,
            "--lint" => args.lint = true,
            "--deny" => {
                args.deny = Some(match it.next().as_deref() {
                    Some("warnings" | "warning") => Severity::Warning,
                    Some("errors" | "error") => Severity::Error,
                    Some("info") => Severity::Info,
                    other => {
                        return Err(format!(
                            "--deny takes warnings, errors or info, not {other:?}"
                        ))
                    }
                })
            }
            "--requests" => {
                args.requests = Some(it.next().ok_or("--requests needs a file")?.into())
            }
            "--out" => args.out = it.next().ok_or("--out needs a directory")?.into(),
            "-h" | "--help" => return Err(String::new()),
            other => return Err(format!("unknown argument `{other}`")),
        }
    }
    if (args.deny.is_some() || args.requests.is_some()) && !args.lint {
        args.lint = true;
    }
    Ok(args)
}

fn main() -> ExitCode {
    let args = match parse_args() {
        Ok(args) => args,
        Err(msg) => {
            if !msg.is_empty() {
                eprintln!("{msg}");
            }
            eprintln!("{USAGE}");
            return ExitCode::from(2);
        }
    };
    let catalogs = match servers::catalogs() {
        Ok(c) => c,
        Err(e) => {
            eprintln!("{e}");
            return ExitCode::FAILURE;
        }
    };
    let mut failed = false;

    // Docs: written, or checked.
    for (name, catalog) in &catalogs {
        let dir = args.out.join(name);
        match docs::write(catalog, &dir, args.check) {
            Ok(report) if args.check => {
                println!("{name}: docs up to date ({} files)", report.unchanged.len())
            }
            Ok(report) => {
                for path in &report.written {
                    println!("{name}: wrote {}", path.display());
                }
                if report.written.is_empty() {
                    println!("{name}: docs already up to date");
                }
            }
            Err(e @ DocsError::Stale { .. }) => {
                eprintln!("{name}: {e}\nrun `cargo run --example catalog` and commit the result");
                failed = true;
            }
            Err(e) => {
                eprintln!("{name}: {e}");
                failed = true;
            }
        }
    }

    if args.lint {
        let requests = match &args.requests {
            Some(path) => match std::fs::read_to_string(path)
                .map_err(|e| e.to_string())
                .and_then(|text| lint::parse_requests(&text))
            {
                Ok(r) => r,
                Err(e) => {
                    eprintln!("{}: {e}", path.display());
                    return ExitCode::from(2);
                }
            },
            None => Vec::new(),
        };
        let knows = |c: &Catalog, r: &ExampleRequest| {
            c.tools()
                .iter()
                .any(|t| t.name() == r.expected || t.aliases().contains(&r.expected))
        };
        for r in &requests {
            if !catalogs.iter().any(|(_, c)| knows(c, r)) {
                eprintln!(
                    "error[request-unknown-tool]: example request {:?} expects `{}`, which no \
                     example server has",
                    r.query, r.expected
                );
                failed = true;
            }
        }
        for (name, catalog) in &catalogs {
            let options = LintOptions {
                requests: requests
                    .iter()
                    .filter(|r| knows(catalog, r))
                    .cloned()
                    .collect(),
                ..LintOptions::default()
            };
            let findings = lint::lint(catalog, &options);
            let count = |s: Severity| findings.iter().filter(|f| f.severity == s).count();
            println!(
                "\n== {name}: {} error(s), {} warning(s), {} info ({} example request(s) checked)",
                count(Severity::Error),
                count(Severity::Warning),
                count(Severity::Info),
                options.requests.len()
            );
            for f in &findings {
                println!("{f}");
            }
            let denied = args.deny.unwrap_or(Severity::Error);
            if lint::worst(&findings).is_some_and(|w| w >= denied) {
                failed = true;
            }
        }
    }

    if failed {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    }
}
