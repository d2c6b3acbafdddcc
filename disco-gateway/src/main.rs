//! disco-gateway: any MCP servers behind disco's catalog. Safe tool-name correction, argument
//! repair, `tool_search` / `execute_tool`, per-caller visibility, docs and lint for tools
//! written in any language.
//!
//! ```text
//! disco-gateway --config servers.json [--http 127.0.0.1:8080] [--stateless] [--search all|search-first]
//! disco-gateway [--name NAME] -- npx -y @modelcontextprotocol/server-filesystem ~/notes
//! disco-gateway docs --config servers.json [--out DIR]
//! disco-gateway lint --config servers.json [--deny warnings|errors]
//! disco-gateway approve [--config servers.json] fs.read_file
//! disco-gateway login --config servers.json SERVER
//! ```

use std::net::SocketAddr;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use disco_runtime::catalog::docs;
use disco_runtime::catalog::lint::{self, LintOptions, Severity};
use disco_runtime::{BearerTokens, Caller, Catalog, CatalogTool, HttpOptions, Server};

use disco_gateway::config::{self, Config, ExposureKind};
use disco_gateway::follow;
use disco_gateway::learning::{self, Flush};
use disco_gateway::metrics::Metrics;
use disco_gateway::pins::{state_dir, Pins};
use disco_gateway::provider::GatewayProvider;
use disco_gateway::search;
use disco_gateway::upstream::{Hub, Status};

const USAGE: &str = "usage:
  disco-gateway --config FILE [--http ADDR] [--stateless | --resumable-calls] [--search all|search-first] [--metrics ADDR]
  disco-gateway [--name NAME] [--http ADDR] [--metrics ADDR] -- COMMAND [ARGS...]
  disco-gateway docs (--config FILE | -- COMMAND...) [--out DIR]
  disco-gateway lint (--config FILE | -- COMMAND...) [--deny warnings|errors]
  disco-gateway approve [--config FILE] SERVER[.TOOL]...
  disco-gateway login --config FILE SERVER   (OAuth sign-in to a remote server)
  disco-gateway adopt --from CLIENT [--file FILE] [--write] [--undo]
      CLIENT: claude-desktop, claude-code, cursor, windsurf, gemini, vscode, codex
  disco-gateway report (--config FILE | -- COMMAND...) [--format table|json|attributes]
  disco-gateway report [--config FILE] --forget all|NAME

  --resumable-calls (with --http): a session's calls go through rmcp's session loop, slower,
    so that a slow call's answer comes as a stream a client can resume after a broken
    connection (by default they run beside it and the answer is sent whole)
  --learn (when serving): record discovery events for `report` (feature `learning`)
  --learn-online (when serving): --learn, and use what is ready every minute: aliases of
    read-only tools, keywords in search ranking
  --learn-every SECONDS (when serving): --learn-online, reading what is ready every SECONDS
    (1 to 86400) instead of every minute";

const HELP: &str = "Any MCP servers behind disco's catalog: safe tool-name correction, argument \
repair and tool search. FILE is a client's own configuration as it is (Claude Desktop, Claude \
Code, Cursor, Windsurf, Gemini CLI, VS Code, or Codex's TOML); see the guide's gateway chapter.";

#[derive(Clone, Default)]
struct Args {
    command: Option<String>,
    config: Option<String>,
    http: Option<SocketAddr>,
    /// The Prometheus endpoint's address (`disco.metrics.listen` of the file, overridden).
    metrics: Option<SocketAddr>,
    stateless: bool,
    /// `--resumable-calls`: a session's calls through rmcp's session loop.
    resumable_calls: bool,
    search: Option<ExposureKind>,
    name: Option<String>,
    out: Option<String>,
    deny: Option<Severity>,
    upstream: Vec<String>,
    /// `approve`'s servers and tools.
    names: Vec<String>,
    /// `adopt`'s client, and its file when not at the usual place.
    from: Option<String>,
    file: Option<String>,
    write: bool,
    undo: bool,
    /// Record discovery events while serving.
    learn: bool,
    /// And use what they teach while serving.
    learn_online: bool,
    /// How often what they teach is read again (`--learn-every`; default a minute).
    learn_every: Option<Duration>,
    /// `report`'s output: table, json or attributes.
    format: Option<String>,
    /// `report --forget`: `all` or a name.
    forget: Option<String>,
}

fn parse_args(mut args: impl Iterator<Item = String>) -> Result<Args, String> {
    let mut a = Args::default();
    let mut first = true;
    while let Some(arg) = args.next() {
        if first
            && matches!(
                arg.as_str(),
                "docs" | "lint" | "approve" | "adopt" | "report" | "login"
            )
        {
            a.command = Some(arg);
            first = false;
            continue;
        }
        first = false;
        let mut value = |flag: &str| args.next().ok_or_else(|| format!("{flag} needs a value"));
        match arg.as_str() {
            "--config" => a.config = Some(value("--config")?),
            "--http" => {
                let v = value("--http")?;
                a.http = Some(
                    v.parse()
                        .map_err(|_| format!("--http {v}: not an address like 127.0.0.1:8080"))?,
                );
            }
            "--metrics" => {
                let v = value("--metrics")?;
                a.metrics =
                    Some(v.parse().map_err(|_| {
                        format!("--metrics {v}: not an address like 127.0.0.1:9464")
                    })?);
            }
            "--stateless" => a.stateless = true,
            "--resumable-calls" => a.resumable_calls = true,
            // Serving stdio is the default; the flag is accepted for launchers that pass it.
            "--stdio" => {}
            "--search" => {
                a.search = Some(match value("--search")?.as_str() {
                    "all" => ExposureKind::All,
                    "search-first" => ExposureKind::SearchFirst,
                    other => return Err(format!("--search {other}: expected all or search-first")),
                })
            }
            "--name" => a.name = Some(value("--name")?),
            "--from" if a.command.as_deref() == Some("adopt") => a.from = Some(value("--from")?),
            "--file" if a.command.as_deref() == Some("adopt") => a.file = Some(value("--file")?),
            "--write" if a.command.as_deref() == Some("adopt") => a.write = true,
            "--undo" if a.command.as_deref() == Some("adopt") => a.undo = true,
            "--learn" => a.learn = true,
            "--learn-online" => {
                a.learn = true;
                a.learn_online = true;
            }
            "--learn-every" => {
                let text = value("--learn-every")?;
                let seconds = text
                    .parse::<u64>()
                    .ok()
                    .filter(|s| (1..=86_400).contains(s))
                    .ok_or_else(|| {
                        format!("--learn-every {text}: expected a number of seconds, 1 to 86400")
                    })?;
                a.learn = true;
                a.learn_online = true;
                a.learn_every = Some(Duration::from_secs(seconds));
            }
            "--format" => a.format = Some(value("--format")?),
            "--forget" => a.forget = Some(value("--forget")?),
            "--out" => a.out = Some(value("--out")?),
            "--deny" => {
                a.deny = Some(match value("--deny")?.as_str() {
                    "warnings" => Severity::Warning,
                    "errors" => Severity::Error,
                    "info" => Severity::Info,
                    other => return Err(format!("--deny {other}: expected warnings or errors")),
                })
            }
            "--" => {
                a.upstream = args.by_ref().collect();
                if a.upstream.is_empty() {
                    return Err("`--` must be followed by the command of a stdio server".into());
                }
            }
            name if matches!(a.command.as_deref(), Some("approve" | "login"))
                && !name.starts_with('-') =>
            {
                a.names.push(name.to_string())
            }
            other => return Err(format!("unknown argument `{other}`")),
        }
    }
    if a.command.as_deref() == Some("adopt") {
        return if a.from.is_none() {
            Err("adopt: name the client, --from CLIENT".into())
        } else if a.config.is_some() || !a.upstream.is_empty() {
            Err("adopt: takes --from, --file, --write and --undo only".into())
        } else {
            Ok(a)
        };
    }
    if a.command.as_deref() == Some("report") && a.forget.is_some() {
        return if a.upstream.is_empty() {
            Ok(a)
        } else {
            Err("report --forget: give --config FILE or nothing, not a command".into())
        };
    }
    if a.command.as_deref() == Some("login") {
        return match (&a.config, a.names.len()) {
            (Some(_), 1) if a.upstream.is_empty() => Ok(a),
            _ => Err("login: give --config FILE and the name of one server".into()),
        };
    }
    if a.command.as_deref() == Some("approve") {
        return if a.names.is_empty() {
            Err("approve: name what to approve, `SERVER.TOOL` or a whole `SERVER`".into())
        } else if !a.upstream.is_empty() {
            Err("approve: give --config FILE or nothing, not a command".into())
        } else {
            Ok(a)
        };
    }
    match (&a.config, a.upstream.is_empty()) {
        (Some(_), false) => Err("give --config or a command after `--`, not both".into()),
        (None, true) => Err("give --config FILE, or a server's command after `--`".into()),
        _ => Ok(a),
    }
}

/// A name for the one server of `disco-gateway -- COMMAND`: the package or script it runs.
fn derive_name(command: &[String]) -> String {
    let launchers = [
        "npx", "uvx", "node", "python", "python3", "bunx", "deno", "docker", "uv", "pnpm", "yarn",
    ];
    let base = |s: &str| {
        let s = s.rsplit('/').next().unwrap_or(s);
        let s = s.split('@').next().filter(|p| !p.is_empty()).unwrap_or(s);
        s.trim_end_matches(".py")
            .trim_end_matches(".js")
            .to_string()
    };
    let program = base(&command[0]);
    let picked = if launchers.contains(&program.as_str()) {
        command[1..]
            .iter()
            .filter(|a| !a.starts_with('-') && !matches!(a.as_str(), "run" | "exec" | "dlx"))
            .map(|a| base(a.trim_start_matches('@')))
            .next()
            .unwrap_or(program)
    } else {
        program
    };
    let name: String = picked
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect();
    if name.is_empty() {
        "server".into()
    } else {
        name
    }
}

/// The configuration file at `path`, in its format (TOML for `.toml`, else JSON or JSONC);
/// what it says that the gateway leaves out is logged, one warning for each.
fn read_config(path: &str) -> Result<Config, String> {
    read_config_with(path, &|name| std::env::var(name).ok())
}

fn read_config_with(path: &str, vars: config::Vars) -> Result<Config, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{path}: {e}"))?;
    let file = std::path::Path::new(path);
    let here = std::env::current_dir().ok();
    let origin = config::Origin {
        project: here.as_deref(),
        ..config::Origin::of(file)
    };
    let config = Config::read(&text, vars, origin).map_err(|e| format!("{path}: {e}"))?;
    for w in &config.warnings {
        tracing::warn!("{path}: {w}");
    }
    Ok(config)
}

fn load_config(args: &Args) -> Result<Config, String> {
    let mut config = match &args.config {
        Some(path) => read_config(path)?,
        None => {
            let name = args
                .name
                .clone()
                .unwrap_or_else(|| derive_name(&args.upstream));
            Config::single(name, args.upstream[0].clone(), args.upstream[1..].to_vec())
        }
    };
    if let Some(search) = args.search {
        config.disco.exposure = search;
    }
    if let Some(metrics) = args.metrics {
        config.disco.metrics = Some(metrics);
    }
    #[cfg(not(feature = "tls"))]
    for s in &config.servers {
        if let config::Transport::Http { url, .. } = &s.transport {
            if url.starts_with("https://") {
                return Err(format!(
                    "{}.url: https needs the `tls` feature, which this build of disco-gateway was made without (it is on by default)",
                    s.key
                ));
            }
        }
    }
    Ok(config)
}

/// The tool pins of this configuration, in `disco.dataDir` or the default state directory;
/// `writable` for the gateway that serves, not for `lint` and `docs` (they approve nothing).
fn pins(config: &Config, writable: bool) -> Result<Pins, String> {
    let dir = state_dir(config.disco.data_dir.as_deref(), &|k| std::env::var(k).ok())?;
    Ok(Pins::new(dir, writable))
}

/// Starts the upstreams and waits for each to be ready or to fail its first start, at most
/// `wait`. Nothing an upstream lists stops the gateway: a tool that cannot be served is left
/// out and logged.
async fn start(config: &Config, pins: Pins, wait: Duration) -> (Arc<Hub>, GatewayProvider) {
    let hub = Hub::pinned(config.servers.clone(), config.disco.clone(), Some(pins));
    hub.start();
    let late = hub.settle(wait).await;
    if !late.is_empty() {
        tracing::warn!(servers = ?late, "serving without these upstreams for now; they join when ready");
    }
    let provider = GatewayProvider::new(hub.clone());
    provider.warn_unknown_labels();
    (hub, provider)
}

/// Who may see what: a token's servers and extra tools (`GatewayProvider::can_see`).
fn visibility(
    provider: GatewayProvider,
) -> impl Fn(&Caller, &CatalogTool) -> bool + Send + Sync + 'static {
    move |caller: &Caller, tool: &CatalogTool| provider.can_see(caller, tool.name())
}

async fn serve(args: Args, config: Config) -> Result<(), String> {
    if let Some(server) = config.forwarding_server() {
        if config.disco.tokens.is_empty() || args.http.is_none() {
            // Every caller is then anonymous, which is the operator: forwarding has no
            // caller's token to send, and the configured headers are used.
            tracing::warn!(
                server = %server,
                "forwardToken without HTTP callers (disco.tokens and --http): every call uses \
                 the configured headers"
            );
        }
    }
    // Before any upstream starts: a model that does not load stops the gateway here.
    let search = search::serving(&config.disco).await?;
    let (hub, provider) = start(&config, pins(&config, true)?, config.disco.startup_timeout).await;
    let metrics = config.disco.metrics.map(|_| Arc::new(Metrics::default()));
    let provider = match &metrics {
        Some(m) => provider.with_metrics(m.clone()),
        None => provider,
    };
    // Over HTTP an OAuth server is seen only by the callers whose token entry names it, also
    // one a reload adds: the rule is in place whatever the configuration is now.
    let provider = match args.http {
        Some(_) => provider.over_http(),
        None => provider,
    };
    let mut server = Server::from_inventory()
        .name("disco-gateway")
        .version(env!("CARGO_PKG_VERSION"))
        .provider(provider.clone())
        .resources(provider.clone())
        .search(search)
        .page_size(config.disco.page_size)
        .default_timeout(config.disco.call_timeout);
    if !config.disco.tokens.is_empty() || args.http.is_some() {
        server = server.visibility(visibility(provider.clone()));
    }
    let mut flush_events: Option<Flush> = None;
    if args.learn {
        let (sink, flush) = learning::recorder(&config)?;
        server = server.discovery(sink);
        flush_events = Some(flush);
    }
    // The gateway's tools send the client no requests (it declines an upstream's sampling,
    // roots and elicitation: call.rs), so its calls may run beside rmcp's session loop, unless
    // resumable answers are asked for.
    let mut http = HttpOptions::default()
        .stateless(args.stateless)
        .rate_limit(config.disco.rate_limit)
        .calls_beside(!args.resumable_calls);
    if !config.disco.tokens.is_empty() {
        let mut tokens = BearerTokens::new();
        for t in &config.disco.tokens {
            tokens = tokens.token(t.token.clone(), Caller::new(t.caller.clone()));
        }
        http = http.bearer_auth(tokens);
    }
    server = server.http_options(http);

    // Each change upstream rebuilds the catalog and tells the clients whose list changed. The
    // catalog about to be served has every change up to now: the upstreams' arrival during
    // start-up is no change to it (rebuilding 20,000 tools for nothing held two catalogs at
    // once, and the memory they took stayed the process's).
    let handle = server.handle();
    let reloads = {
        let hub = hub.clone();
        let mut built = hub.generation();
        tokio::spawn(async move {
            loop {
                hub.changed.notified().await;
                let now = hub.generation();
                if now == built {
                    continue;
                }
                built = now;
                loop {
                    match handle.reload().await {
                        Ok(()) => {
                            release_freed_memory();
                            break;
                        }
                        // Not serving yet: the catalog being built has the change, or will
                        // get it at the next try.
                        Err(_) if handle.stats().is_none() => {
                            tokio::time::sleep(Duration::from_millis(50)).await
                        }
                        Err(e) => {
                            tracing::error!(error = %e, "the catalog could not be rebuilt; the previous one stays");
                            break;
                        }
                    }
                }
            }
        })
    };

    let exporter = match (config.disco.metrics, metrics) {
        (Some(addr), Some(metrics)) => Some(serve_metrics(addr, metrics, &hub, &server).await?),
        _ => None,
    };
    // An edit of the file, or SIGHUP, serves its servers (upstream/reload.rs).
    let follow = args.config.clone().map(|path| {
        let (args, provider, disco) = (args.clone(), provider.clone(), config.disco.clone());
        tokio::spawn(follow::follow(
            path,
            move || load_config(&args),
            provider,
            disco,
        ))
    });

    // Once the first catalog is built and served, what its build freed goes back too.
    let trim = {
        let handle = server.handle();
        tokio::spawn(async move {
            while handle.stats().is_none() {
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
            release_freed_memory();
        })
    };
    // What traffic taught, used while serving (`--learn-online`), reread every minute (or
    // every `--learn-every`).
    let every = args.learn_every.unwrap_or(Duration::from_secs(60));
    let online = args
        .learn_online
        .then(|| learning::online(&config, server.handle(), every))
        .transpose()?;
    let result = match args.http {
        Some(addr) => {
            let listener = tokio::net::TcpListener::bind(addr)
                .await
                .map_err(|e| format!("--http {addr}: {e}"))?;
            let bound = listener.local_addr().map_err(|e| e.to_string())?;
            tracing::info!(addr = %bound, "serving Streamable HTTP at /mcp");
            // The address actually bound (`--http 127.0.0.1:0` picks a port), for scripts.
            println!("LISTENING http://{bound}/mcp");
            server
                .serve_http_on(listener, stop_signal())
                .await
                .map_err(|e| e.to_string())
        }
        None => tokio::select! {
            r = server.serve_stdio() => r.map_err(|e| e.to_string()),
            _ = stop_signal() => Ok(()),
        },
    };
    reloads.abort();
    trim.abort();
    for task in [exporter, follow, online].into_iter().flatten() {
        task.abort();
    }
    hub.stop().await;
    if let Some(flush) = flush_events {
        // The events still queued reach the store before the process ends.
        let _ = tokio::task::spawn_blocking(flush).await;
    }
    result
}

/// Serves the Prometheus endpoint at `addr` (metrics.rs): the gateway's counters, the catalog's
/// and each upstream's restarts, read at each scrape.
async fn serve_metrics(
    addr: SocketAddr,
    metrics: Arc<Metrics>,
    hub: &Arc<Hub>,
    server: &Server,
) -> Result<tokio::task::JoinHandle<()>, String> {
    let listener = tokio::net::TcpListener::bind(addr)
        .await
        .map_err(|e| format!("disco.metrics.listen {addr}: {e}"))?;
    let bound = listener.local_addr().map_err(|e| e.to_string())?;
    // The address actually bound (port 0 picks one), in the log: stdout may be the client's.
    tracing::info!(addr = %bound, "serving Prometheus metrics at /metrics");
    let (hub, handle) = (hub.clone(), server.handle());
    let render = move || {
        let restarts: Vec<(String, u64)> = hub
            .upstreams()
            .iter()
            .map(|u| (u.config.name.clone(), u.restarts()))
            .collect();
        metrics.render(handle.stats(), &restarts)
    };
    Ok(tokio::spawn(async move {
        if let Err(e) = disco_gateway::metrics::serve(listener, render).await {
            tracing::error!(error = %e, "the metrics endpoint stopped");
        }
    }))
}

/// Gives the memory a catalog build freed back to the system. glibc's allocator keeps freed
/// memory in its arenas for later allocations, and a build frees much (its temporaries, the
/// upstreams' listings as read, the catalog it replaces) that a gateway at rest never asks
/// for again: with 20,000 tools it stayed resident, 150 MB past the live heap.
fn release_freed_memory() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: malloc_trim(3) returns free memory of the allocator's own to the system; it
    // touches no memory in use.
    unsafe {
        libc::malloc_trim(0);
    }
}

/// Ctrl-C or SIGTERM.
async fn stop_signal() {
    #[cfg(unix)]
    {
        let mut term =
            match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
                Ok(s) => s,
                Err(_) => {
                    let _ = tokio::signal::ctrl_c().await;
                    return;
                }
            };
        tokio::select! {
            _ = tokio::signal::ctrl_c() => {}
            _ = term.recv() => {}
        }
    }
    #[cfg(not(unix))]
    let _ = tokio::signal::ctrl_c().await;
}

/// The merged catalog, as the server would build it, for docs and lint.
async fn catalog(config: &Config) -> Result<(Arc<Hub>, GatewayProvider, Catalog), String> {
    // No client waits on `lint` and `docs`: each upstream's first start is waited for to its
    // end, so that every server is reported on and no start is stopped half-way.
    let wait = disco_gateway::upstream::start_attempt(&config.disco);
    let (hub, provider) = start(config, pins(config, false)?, wait).await;
    let built = Catalog::builder()
        .server_name("disco-gateway")
        .provider(provider.clone())
        .search(search::options(&config.disco))
        .default_timeout(config.disco.call_timeout)
        .from_inventory();
    match built {
        Ok(c) => Ok((hub, provider, c)),
        Err(e) => {
            hub.stop().await;
            Err(e.to_string())
        }
    }
}

/// `disco-gateway approve`: what waits of each named server or tool is approved, in the state
/// directory of `--config` (its `disco.dataDir`) or the default one. A running gateway takes it
/// within a second.
fn approve(args: &Args) -> Result<ExitCode, String> {
    let (pins, servers) = match &args.config {
        Some(path) => {
            // Only the servers' names and `dataDir` are read here: a variable this shell does
            // not set (a token, a header) is no reason to refuse an approval.
            let config = read_config_with(path, &|name| {
                Some(std::env::var(name).unwrap_or_else(|_| "unset".into()))
            })?;
            let names = config.servers.iter().map(|s| s.name.clone()).collect();
            (pins(&config, true)?, names)
        }
        None => {
            let pins = Pins::new(state_dir(None, &|k| std::env::var(k).ok())?, true);
            let names = pins.servers();
            (pins, names)
        }
    };
    for name in &args.names {
        // The longest server name the argument is, or starts with followed by `.`.
        let found = servers
            .iter()
            .filter(|s| {
                name == *s
                    || name
                        .strip_prefix(s.as_str())
                        .is_some_and(|rest| rest.starts_with('.'))
            })
            .max_by_key(|s| s.len());
        let Some(server) = found else {
            return Err(format!(
                "approve `{name}`: no server of that name in {} (servers: {})",
                pins.dir().display(),
                if servers.is_empty() {
                    "none".to_string()
                } else {
                    servers.join(", ")
                }
            ));
        };
        let tool = name
            .strip_prefix(server.as_str())
            .and_then(|r| r.strip_prefix('.'));
        for approved in pins.approve(server, tool)? {
            println!("approved `{server}.{approved}`");
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// `disco-gateway adopt` (adopt.rs, `command`).
fn adopt(args: &Args) -> Result<ExitCode, String> {
    disco_gateway::adopt::command(
        args.from.as_deref().unwrap_or_default(),
        args.file.as_deref(),
        args.undo,
        args.write,
    )?;
    Ok(ExitCode::SUCCESS)
}

async fn run(args: Args) -> Result<ExitCode, String> {
    if args.command.as_deref() == Some("approve") {
        return approve(&args);
    }
    if args.command.as_deref() == Some("adopt") {
        return adopt(&args);
    }
    if args.command.as_deref() == Some("login") {
        let config = load_config(&args)?;
        let dir = state_dir(config.disco.data_dir.as_deref(), &|k| std::env::var(k).ok())?;
        let server = args.names.first().map(String::as_str).unwrap_or_default();
        let said = disco_gateway::oauth::login_server(&config, server, &dir, |url| {
            println!("Open this URL in your browser to sign in to `{server}`:\n{url}");
        })
        .await?;
        println!("{server}: {said}");
        return Ok(ExitCode::SUCCESS);
    }
    if args.command.as_deref() == Some("report") {
        if let Some(what) = &args.forget {
            let config = args
                .config
                .as_ref()
                .map(|_| load_config(&args))
                .transpose()?;
            return learning::forget(config.as_ref(), what).map(|()| ExitCode::SUCCESS);
        }
        let config = load_config(&args)?;
        let (hub, _, catalog) = catalog(&config).await?;
        let out = learning::report(&config, &catalog, args.format.as_deref());
        hub.stop().await;
        return out.map(|()| ExitCode::SUCCESS);
    }
    let config = load_config(&args)?;
    match args.command.as_deref() {
        None => serve(args, config).await.map(|()| ExitCode::SUCCESS),
        Some("docs") => {
            let (hub, _, catalog) = catalog(&config).await?;
            let out = match &args.out {
                Some(dir) => docs::write(&catalog, dir, false)
                    .map(|report| {
                        for p in report.written {
                            eprintln!("wrote {}", p.display());
                        }
                    })
                    .map_err(|e| e.to_string()),
                None => {
                    print!("{}", docs::markdown(&catalog));
                    Ok(())
                }
            };
            hub.stop().await;
            out.map(|()| ExitCode::SUCCESS)
        }
        Some(_) => {
            let (hub, provider, catalog) = catalog(&config).await?;
            let server_of = |tool: &str| provider.server_of(tool);
            let mut findings = disco_gateway::lint::for_operator(
                lint::lint(&catalog, &LintOptions::default()),
                &server_of,
            );
            // The upstreams' tools the gateway left out, and names too alike to tell apart.
            findings.extend(disco_gateway::lint::findings(&hub, &provider));
            let (tools, _) = provider.current();
            let upstreams = hub.upstreams();
            let down = |name: &str| {
                let upstream = upstreams.iter().find(|u| u.config.name == name)?;
                match upstream.status() {
                    Status::Ready => None,
                    Status::Starting => Some("its first start is still under way".to_string()),
                    Status::Down(outage) => Some(outage.reason),
                }
            };
            let servers: Vec<disco_gateway::lint::ServerLine> = config
                .servers
                .iter()
                .map(|s| disco_gateway::lint::ServerLine {
                    name: s.name.clone(),
                    tools: tools
                        .iter()
                        .filter(|t| server_of(&t.tool.name).as_deref() == Some(s.name.as_str()))
                        .count(),
                    down: down(&s.name),
                })
                .collect();
            // Server by server, then disco's own tools, then the catalog's.
            let order = |f: &disco_gateway::lint::Finding| {
                f.server
                    .as_ref()
                    .and_then(|s| servers.iter().position(|line| &line.name == s))
                    .unwrap_or(servers.len())
            };
            findings.sort_by_key(|f| order(f));
            for f in &findings {
                println!("{f}");
            }
            println!();
            for line in disco_gateway::lint::summary(&findings, &servers) {
                println!("{line}");
            }
            let worst = findings.iter().map(|f| f.severity).max();
            println!(
                "{} finding(s); worst: {}",
                findings.len(),
                worst
                    .map(|s| s.to_string())
                    .unwrap_or_else(|| "none".into())
            );
            hub.stop().await;
            let denied = matches!((args.deny, worst), (Some(deny), Some(w)) if w >= deny);
            Ok(if denied {
                ExitCode::FAILURE
            } else {
                ExitCode::SUCCESS
            })
        }
    }
}

fn init_tracing() {
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info,rmcp=warn"));
    // rmcp's debug lines of an OAuth code exchange show the authorization code: the gateway
    // logs nothing of a sign-in's secrets, whatever RUST_LOG asks.
    let filter = match "rmcp::transport::auth=info".parse() {
        Ok(quiet) => filter.add_directive(quiet),
        Err(_) => filter,
    };
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(false)
        .try_init();
}

/// What `--help` and `--version` print; neither runs anything else.
enum Asked {
    Help,
    Version,
}

fn asked(args: &[String]) -> Option<Asked> {
    // Alone, or first: `-- COMMAND --help` is the upstream's, not the gateway's.
    let ours = args.iter().take_while(|a| *a != "--");
    for a in ours {
        match a.as_str() {
            "-h" | "--help" => return Some(Asked::Help),
            "-V" | "--version" => return Some(Asked::Version),
            _ => {}
        }
    }
    None
}

fn main() -> ExitCode {
    let argv: Vec<String> = std::env::args().skip(1).collect();
    match asked(&argv) {
        Some(Asked::Help) => {
            println!(
                "disco-gateway {}\n{HELP}\n{USAGE}",
                env!("CARGO_PKG_VERSION")
            );
            return ExitCode::SUCCESS;
        }
        Some(Asked::Version) => {
            println!("disco-gateway {}", env!("CARGO_PKG_VERSION"));
            return ExitCode::SUCCESS;
        }
        None => {}
    }
    let args = match parse_args(argv.into_iter()) {
        Ok(a) => a,
        Err(e) => {
            if !e.is_empty() {
                eprintln!("disco-gateway: {e}");
            }
            eprintln!("{USAGE}");
            return ExitCode::from(2);
        }
    };
    init_tracing();
    // Before any HTTP client is made, wherever it is made.
    disco_gateway::install_tls();
    let mut runtime = tokio::runtime::Builder::new_multi_thread();
    // Serving one stdio client, one worker thread: a forwarded call passes through five tasks
    // (rmcp's two service loops, the handler, the two writers), and on two workers each
    // hand-off can wake the other, parked one, which then finds nothing to do; that costs
    // about half the gateway's CPU per call (BENCHMARKS.md, "disco-gateway beside its
    // peers"). Over HTTP many clients' calls run in parallel, so every core serves.
    // `TOKIO_WORKER_THREADS` still decides when it is set.
    if args.http.is_none() && std::env::var_os("TOKIO_WORKER_THREADS").is_none() {
        runtime.worker_threads(1);
    }
    let runtime = match runtime.enable_all().build() {
        Ok(r) => r,
        Err(e) => {
            eprintln!("disco-gateway: cannot start the runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    match runtime.block_on(run(args)) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("disco-gateway: {e}");
            ExitCode::from(2)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(cmd: &str) -> String {
        derive_name(&cmd.split(' ').map(str::to_string).collect::<Vec<_>>())
    }

    #[test]
    fn a_single_server_is_named_after_what_it_runs() {
        assert_eq!(
            names("npx -y @modelcontextprotocol/server-filesystem /tmp"),
            "server-filesystem"
        );
        assert_eq!(
            names("npx -y @modelcontextprotocol/server-memory@2025.9.25"),
            "server-memory"
        );
        assert_eq!(names("uvx mcp-server-git"), "mcp-server-git");
        assert_eq!(names("python3 tests/upstream.py"), "upstream");
        assert_eq!(names("/usr/local/bin/my-server --flag"), "my-server");
    }

    #[test]
    fn arguments() {
        let parse = |s: &str| parse_args(s.split(' ').map(str::to_string));
        assert!(parse("--config a.json --http 127.0.0.1:1 --search search-first").is_ok());
        assert!(parse("-- npx -y x").is_ok());
        assert_eq!(
            parse("lint --config a.json --deny warnings").unwrap().deny,
            Some(Severity::Warning)
        );
        assert!(parse("--config a.json -- x").is_err());
        assert!(parse("--http nowhere --config a").is_err());
        assert!(parse("--bogus").is_err());
        assert!(parse("--search some --config a").is_err());
        assert_eq!(
            parse("approve fs.read_file other").unwrap().names,
            ["fs.read_file", "other"]
        );
        assert!(parse("approve --config a.json fs").is_ok());
        assert!(parse("approve").is_err());
        assert!(parse("approve --bogus fs").is_err());
    }
}
