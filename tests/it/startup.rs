//! What stops a server from starting, found before a model calls a tool: a `State<T>` that was
//! never registered, reported by `into_handler`, every `serve_*` and `Server::check`, naming
//! the tool, where it is declared and the type; the error those return converts with `?`; and
//! a stdio server whose stdin closes before any client spoke stops cleanly.
//!
//! Its servers serve this module's tools alone (`common::server_in`): the start-up checks tested
//! here report every tool of the server that lacks its state. The stdio server is this test
//! binary started again, running this module's child test alone.

use std::process::{Command, Stdio};

use crate::common::{server_in, test_name, tools_in};
use disco_runtime::{mcp_tool, server, Catalog, Server, State};

struct Db;
struct Cache;

/// Look up one record of the database by its key and return it.
#[mcp_tool(read_only)]
fn lookup(db: State<Db>, key: String) -> String {
    let _ = &*db;
    key
}

/// Look up a record through the cache, falling back to the database, and return it.
#[mcp_tool(read_only)]
fn cached_lookup(db: State<Db>, cache: State<Cache>, key: String) -> String {
    let _ = (&*db, &*cache);
    key
}

/// Say hello to someone by name and return the greeting.
#[mcp_tool(read_only)]
fn hello(name: String) -> String {
    format!("hello {name}")
}

/// The line of `fn NAME(` in this file: where the report must say the tool is declared.
fn line_of(name: &str) -> u32 {
    let needle = format!("fn {name}(");
    let at = include_str!("startup.rs")
        .lines()
        .position(|l| l.starts_with(&needle))
        .expect("the tool is declared in this file");
    at as u32 + 1
}

/// The problems of a start with only the given state registered.
fn problems(server: Server) -> Vec<String> {
    match server.check() {
        Ok(()) => Vec::new(),
        Err(e) => e.problems().iter().map(ToString::to_string).collect(),
    }
}

#[test]
fn every_missing_state_is_named_with_its_tool_and_where_it_is_declared() {
    // Every subset of the two state types: each tool that takes a type left out is reported
    // once for it, and nothing else is.
    for (db, cache) in [(false, false), (true, false), (false, true), (true, true)] {
        let mut server = server_in(module_path!());
        if db {
            server = server.with_state(Db);
        }
        if cache {
            server = server.with_state(Cache);
        }
        let found = problems(server);
        let mut expected: Vec<(&str, &str, u32)> = Vec::new();
        if !db {
            expected.push(("lookup", "Db", line_of("lookup")));
            expected.push(("cached_lookup", "Db", line_of("cached_lookup")));
        }
        if !cache {
            expected.push(("cached_lookup", "Cache", line_of("cached_lookup")));
        }
        assert_eq!(
            found.len(),
            expected.len(),
            "db {db} cache {cache}: {found:#?}"
        );
        for (tool, ty, line) in expected {
            let hit = found.iter().find(|p| {
                p.contains(&format!("tool `{tool}` at "))
                    && p.contains(&format!("tests/it/startup.rs:{line}"))
                    && p.contains(&format!("State<{}::{ty}>", module_path!()))
                    && p.contains(".with_state(")
            });
            assert!(hit.is_some(), "{tool} {ty}: {found:#?}");
        }
    }
}

#[test]
fn the_handler_and_every_transport_refuse_to_start_without_the_state() {
    let Err(err) = server_in(module_path!()).with_state(Db).into_handler() else {
        panic!("a handler without `Cache` was built");
    };
    assert_eq!(err.problems().len(), 1, "{err}");
    assert!(
        err.problems()[0].to_string().contains("cached_lookup"),
        "{err}"
    );

    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let err = rt.block_on(async {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        // Refused before it serves: the shutdown future is never needed.
        server_in(module_path!())
            .serve_http_on(listener, std::future::pending())
            .await
            .unwrap_err()
    });
    let catalog = err.catalog().expect("a catalog error");
    assert_eq!(catalog.problems().len(), 3, "{catalog}");
    // Display and Debug both read as the list of problems.
    let cache = format!("State<{}::Cache>", module_path!());
    assert!(err.to_string().contains(&cache), "{err}");
    assert!(format!("{err:?}").contains(&cache), "{err:?}");
}

#[test]
fn registered_state_starts_and_the_name_checks_need_none() {
    assert_eq!(
        problems(server_in(module_path!()).with_state(Db).with_state(Cache)),
        Vec::<String>::new()
    );
    // `check()` judges names, aliases and defaults, which need no state: what it does over the
    // whole inventory, over this module's tools (the binary's inventory also holds tools that
    // must fail it).
    Catalog::builder()
        .from_specs(tools_in(module_path!()))
        .map(|_| ())
        .unwrap();
}

#[test]
fn the_server_error_converts_with_question_mark() {
    fn start() -> Result<(), server::Error> {
        server_in(module_path!()).into_handler()?;
        Ok(())
    }
    fn boxed() -> Result<(), Box<dyn std::error::Error>> {
        start()?;
        Ok(())
    }
    fn boxed_send() -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
        start()?;
        Ok(())
    }
    fn with_anyhow() -> anyhow::Result<()> {
        start()?;
        Ok(())
    }
    let err = boxed().unwrap_err();
    let inner = err
        .downcast_ref::<server::Error>()
        .expect("a server::Error");
    assert!(inner.catalog().is_some());
    // The source chain reaches the catalog's problems.
    let source = std::error::Error::source(inner).expect("a source");
    assert!(source.to_string().contains("problem(s)"), "{source}");
    assert!(boxed_send().is_err());
    assert!(with_anyhow()
        .unwrap_err()
        .to_string()
        .contains("cached_lookup"));
}

const CHILD_ENV: &str = "DISCO_STARTUP_STDIO_CHILD";

/// Run as a child process by the test below: a stdio server on this process's stdin.
#[test]
fn stdio_child() {
    if std::env::var_os(CHILD_ENV).is_none() {
        return;
    }
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(
        server_in(module_path!())
            .with_state(Db)
            .with_state(Cache)
            .serve_stdio(),
    )
    .expect("stdin closed before initialize is a clean stop");
}

#[test]
fn a_stdio_server_says_it_waits_and_stops_cleanly_when_stdin_closes_first() {
    let stderr = child_stderr("stdio_child", CHILD_ENV, "1");
    assert!(stderr.contains("waiting for a client"), "{stderr}");
    assert!(!stderr.contains("ConnectionClosed"), "{stderr}");
}

const EMPTY_CHILD_ENV: &str = "DISCO_STARTUP_EMPTY_CHILD";

/// Run as a child process by the test below: a stdio server of `tools` tools (none, or this
/// module's) and `provider` providers, on this process's stdin.
#[test]
fn empty_stdio_child() {
    let Some(shape) = std::env::var_os(EMPTY_CHILD_ENV) else {
        return;
    };
    let server = match shape.to_str() {
        Some("nothing") => Server::new(Catalog::builder().specs(std::iter::empty())),
        Some("provider") => Server::new(Catalog::builder().specs(std::iter::empty()))
            .provider(crate::common::named::NamedTools::default()),
        _ => server_in(module_path!()).with_state(Db).with_state(Cache),
    };
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(server.serve_stdio())
        .expect("stdin closed before initialize is a clean stop");
}

/// The stderr of this module's child test `child`, run with `env` set to `value` and its
/// stdin closed at once; the child must succeed.
fn child_stderr(child: &str, env: &str, value: &str) -> String {
    let out = Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            test_name(module_path!(), child).as_str(),
            "--nocapture",
            "--test-threads",
            "1",
        ])
        .env(env, value)
        .env_remove("RUST_LOG")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "{:?}\n{stderr}", out.status);
    stderr
}

/// Its stderr, for a server of that shape whose stdin closes at once.
fn empty_child_stderr(shape: &str) -> String {
    child_stderr("empty_stdio_child", EMPTY_CHILD_ENV, shape)
}

#[test]
fn a_server_without_tools_warns_at_start_up_how_to_link_them() {
    let stderr = empty_child_stderr("nothing");
    assert!(stderr.contains("WARN"), "{stderr}");
    assert!(stderr.contains("this server has no tools"), "{stderr}");
    assert!(stderr.contains("use my_crate as _;"), "{stderr}");
    // Tools, or a provider that may add them, and no warning.
    for shape in ["tools", "provider"] {
        let stderr = empty_child_stderr(shape);
        assert!(stderr.contains("catalog ready"), "{shape}: {stderr}");
        assert!(!stderr.contains("has no tools"), "{shape}: {stderr}");
    }
}

#[test]
fn a_missing_state_lists_what_was_registered_and_spots_an_arc() {
    let problems = |server: Server| -> Vec<String> {
        let err = server.check().expect_err("a state is missing");
        err.problems().iter().map(ToString::to_string).collect()
    };
    let db = format!("{}::Db", module_path!());
    let cache = format!("{}::Cache", module_path!());
    // Nothing registered: said so.
    for p in problems(server_in(module_path!())) {
        assert!(p.contains("(no state is registered)"), "{p}");
    }
    // `Db` registered, `Cache` missing: the one registered type is listed.
    let found = problems(server_in(module_path!()).with_state(Db));
    assert_eq!(found.len(), 1, "{found:#?}");
    assert!(
        found[0].contains(&format!("(registered: `{db}`)")),
        "{found:#?}"
    );
    assert!(!found[0].contains("Arc<"), "{found:#?}");
    // `Arc<Cache>` registered for `State<Cache>`: named as the likely cause, and listed.
    let found = problems(
        server_in(module_path!())
            .with_state(Db)
            .with_state(std::sync::Arc::new(Cache)),
    );
    assert_eq!(found.len(), 1, "{found:#?}");
    assert!(
        found[0].contains(&format!("a state of type `Arc<{cache}>` is registered")),
        "{found:#?}"
    );
    assert!(
        found[0].contains(&format!("alloc::sync::Arc<{cache}>")) && found[0].contains(&db),
        "{found:#?}"
    );
}
