//! What `disco-gateway lint` says, for the person running the gateway: the catalog's own rules
//! ([`for_operator`]), each fix said in what that person can change (`disco.aliases`,
//! `disco.keywords`, which tools a caller sees, or a report to the server's authors), and,
//! beside them, what the gateway finds of the upstreams ([`findings`]): the tools an upstream
//! listed that the gateway left out (and why), the tools whose definitions wait for approval
//! (pins.rs), the names a reader cannot tell apart, and, under `"namespace": "none"`, tools one
//! or two edits from another server's tool (a typo away from calling the wrong server).
//! [`summary`] sums them up server by server.

use std::collections::HashMap;
use std::fmt;

use disco_runtime::catalog::lint::{self, Severity};

use crate::admit::{same_name_key, shown};
use crate::config::{Namespace, OnChange};
use crate::pins::Why;
use crate::provider::GatewayProvider;
use crate::upstream::Hub;

/// One finding, printed as the catalog's findings are.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Finding {
    /// The server whose tool it concerns; `None` for disco's own tools and the catalog.
    pub server: Option<String>,
    pub severity: Severity,
    /// Stable, for scripts: `upstream-tool-refused`, `upstream-tool-left-out`,
    /// `upstream-tool-unapproved`, `tool-name-look-alike`, `tool-name-near`.
    pub code: &'static str,
    /// The tool, as it may be shown.
    pub tool: String,
    pub problem: String,
    pub fix: String,
}

impl fmt::Display for Finding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}[{}] `{}`: {}\n  fix: {}",
            self.severity, self.code, self.tool, self.problem, self.fix
        )
    }
}

/// Whose identity an OAuth server's calls act as, and who may make them over HTTP: the user
/// who signed in, and the callers whose token entry names the server in `servers` or one of
/// its tools in `tools` (provider.rs, `can_see`).
fn oauth_identity(server: &str, hub: &Hub, provider: &GatewayProvider) -> Finding {
    // A tool is the server's when it listed it; before, when its name is in the server's
    // namespace.
    let its_tool = |tool: &str| match provider.server_of(tool) {
        Some(owner) => owner == server,
        None => match &hub.disco.namespace {
            Namespace::Separator(sep) => tool
                .strip_prefix(server)
                .is_some_and(|rest| rest.starts_with(sep.as_str())),
            Namespace::None => false,
        },
    };
    let named: Vec<String> = hub
        .disco
        .tokens
        .iter()
        .filter(|t| {
            t.servers
                .as_ref()
                .is_some_and(|s| s.iter().any(|n| n == server))
                || t.tools.iter().any(|tool| its_tool(tool))
        })
        .map(|t| format!("`{}`", t.caller))
        .collect();
    let callers = if named.is_empty() {
        "no HTTP caller (no `disco.tokens` entry names it)".to_string()
    } else {
        format!("the HTTP callers {}", named.join(", "))
    };
    Finding {
        server: Some(server.to_string()),
        severity: Severity::Info,
        code: "upstream-oauth-identity",
        tool: server.to_string(),
        problem: format!(
            "server `{server}` signs in with OAuth: every call to it acts as the user who ran \
             `disco-gateway login {server}`, whoever makes it; over stdio that is the one \
             caller, over HTTP {callers} (or one of its tools in `tools`)"
        ),
        fix: format!(
            "give a caller its tools by naming `{server}` in its `disco.tokens[].servers`; \
             take them away by leaving it out"
        ),
    }
}

/// The gateway's findings over the upstreams as they are now.
pub fn findings(hub: &Hub, provider: &GatewayProvider) -> Vec<Finding> {
    let mut out = Vec::new();
    for upstream in hub.upstreams().iter() {
        let server = &upstream.config.name;
        if upstream.acts_as_user() {
            out.push(oauth_identity(server, hub, provider));
        }
        let (listed, _) = upstream.tools();
        for r in &listed.refused {
            out.push(Finding {
                server: Some(server.clone()),
                severity: Severity::Error,
                code: "upstream-tool-refused",
                tool: format!("{server}: {}", r.tool),
                problem: format!(
                    "server `{server}` lists a tool the gateway leaves out: {}",
                    r.why
                ),
                fix: format!(
                    "report it to the authors of server `{server}`; its other tools serve \
                     meanwhile"
                ),
            });
        }
    }
    for upstream in hub.upstreams().iter() {
        let server = &upstream.config.name;
        let held = hub.disco.on_change == OnChange::Hold;
        for (tool, waiting) in upstream.waiting().iter() {
            let what = match waiting.why {
                Why::Changed => "its definition changed since it was approved",
                Why::New => "it was first listed after its server was approved",
            };
            let now = if held {
                "held: out of tools/list and search until approved"
            } else {
                "served anyway (`disco.onChange`: \"serve\")"
            };
            out.push(Finding {
                server: Some(server.clone()),
                severity: Severity::Warning,
                code: "upstream-tool-unapproved",
                tool: format!("{server}: {}", shown(tool)),
                problem: format!("{what}; {now}"),
                fix: format!(
                    "read what changed in the gateway's log, then run `disco-gateway approve \
                     {server}.{}`",
                    shown(tool)
                ),
            });
        }
    }
    let (tools, left_out) = provider.current();
    for l in left_out {
        out.push(Finding {
            server: Some(l.server.clone()),
            severity: Severity::Error,
            code: "upstream-tool-left-out",
            tool: l.tool.clone(),
            problem: l.to_string(),
            fix: format!(
                "use a namespace separator (`\"namespace\": \".\"`), or order the servers in \
                 the configuration so that the one that should keep the name comes first; or \
                 report it to the authors of server `{}`",
                l.server
            ),
        });
    }
    let names: Vec<(String, String)> = tools
        .iter()
        .map(|t| {
            let name = t.tool.name.to_string();
            let server = provider.server_of(&name).unwrap_or_default();
            (name, server)
        })
        .collect();
    let keys: Vec<String> = names.iter().map(|(n, _)| same_name_key(n)).collect();
    let mut by_key: HashMap<&str, Vec<usize>> = HashMap::new();
    for (i, key) in keys.iter().enumerate() {
        by_key.entry(key).or_default().push(i);
    }
    let mut alike: Vec<(usize, usize)> = by_key
        .values()
        .filter(|same| same.len() > 1)
        .flat_map(|same| same[1..].iter().map(|&j| (same[0], j)))
        .collect();
    alike.sort_unstable();
    for (i, j) in alike {
        let ((a, sa), (b, sb)) = (&names[i], &names[j]);
        out.push(Finding {
            server: Some(sb.clone()),
            severity: Severity::Warning,
            code: "tool-name-look-alike",
            tool: shown(b),
            problem: format!(
                "`{}` (server `{sb}`) reads as `{}` (server `{sa}`): the same letters under \
                 Unicode folding (NFKC) or look-alike characters (TR39)",
                shown(b),
                shown(a)
            ),
            fix: format!(
                "a reader, or a model, cannot tell them apart: hide one from the callers that \
                 do not need it (a caller's entry of `disco.tokens` lists the servers and tools \
                 it sees), and report it to the authors of server `{sb}`"
            ),
        });
    }
    if hub.disco.namespace == Namespace::None {
        // By length, so that only names within two characters of each other are compared.
        let mut order: Vec<(usize, usize)> = keys
            .iter()
            .enumerate()
            .map(|(i, k)| (k.chars().count(), i))
            .collect();
        order.sort_unstable();
        for (x, &(la, i)) in order.iter().enumerate() {
            for &(lb, j) in &order[x + 1..] {
                if lb - la > 2 {
                    break;
                }
                let ((a, sa), (b, sb)) = (&names[i.min(j)], &names[i.max(j)]);
                if sa == sb || !near(&keys[i], &keys[j]) {
                    continue;
                }
                out.push(Finding {
                    server: Some(sb.clone()),
                    severity: Severity::Warning,
                    code: "tool-name-near",
                    tool: shown(b),
                    problem: format!(
                        "`{}` (server `{sb}`) is within two edits of `{}` (server `{sa}`): a \
                         typo of one may name the other server's tool",
                        shown(b),
                        shown(a)
                    ),
                    fix: format!(
                        "use a namespace separator (`\"namespace\": \".\"`), or report it to \
                         the authors of server `{sb}`"
                    ),
                });
            }
        }
    }
    out
}

/// One or two edits apart, and not equal. Short names are all a few edits from each other
/// (`ls`, `cd`): below 4 characters none is flagged, below 8 only one edit.
fn near(a: &str, b: &str) -> bool {
    let shortest = a.chars().count().min(b.chars().count());
    let most = match shortest {
        0..=3 => return false,
        4..=7 => 1,
        _ => 2,
    };
    (1..=most).contains(&strsim::levenshtein(a, b))
}

/// What `tool` (of the merged catalog) is: a server's, disco's own (`tool_search`,
/// `execute_tool`), or, for a finding of no tool, the catalog's.
fn owner(tool: Option<&str>, server_of: &dyn Fn(&str) -> Option<String>) -> Option<String> {
    tool.and_then(server_of)
}

/// The catalog's findings for the person running the gateway. A server's tool is not theirs
/// to edit: its fix is said in what they can change (the tool's `disco.keywords` and
/// `disco.aliases`, which tools a caller sees with `disco.tokens`, the exposure), or as a
/// report to the server's authors. The advice to a tool's author (its doc comment, its
/// attribute) stays only for disco's own tools. `server_of` names a tool's server, `None` for
/// disco's own.
pub fn for_operator(
    findings: Vec<lint::Finding>,
    server_of: &dyn Fn(&str) -> Option<String>,
) -> Vec<Finding> {
    findings
        .into_iter()
        .map(|f| {
            let server = owner(f.tool.as_deref(), server_of);
            let fix = match (&f.tool, &server) {
                (Some(tool), Some(server)) => tool_fix(f.code, tool, server),
                // disco's own tool: its author's advice is right.
                (Some(_), None) => f.fix.clone(),
                (None, _) => catalog_fix(f.code).unwrap_or_else(|| f.fix.clone()),
            };
            let problem = match f.tool {
                None => catalog_problem(f.code).unwrap_or(f.problem),
                Some(_) => f.problem,
            };
            Finding {
                server,
                severity: f.severity,
                code: f.code,
                tool: f.tool.unwrap_or_else(|| CATALOG.to_string()),
                problem,
                fix,
            }
        })
        .collect()
}

/// The "tool" of a finding about the whole catalog.
const CATALOG: &str = "the catalog";

/// The fix of a finding `code` on `tool` of `server` ([`rule_fix`]), or, for a rule this
/// gateway does not know yet, the report to the server's authors.
fn tool_fix(code: &str, tool: &str, server: &str) -> String {
    rule_fix(code, tool, server)
        .unwrap_or_else(|| format!("report it to the authors of server `{server}`"))
}

/// The fix of a finding about `tool` of `server`, in what the gateway's operator can change.
fn rule_fix(code: &str, tool: &str, server: &str) -> Option<String> {
    let report = format!("report it to the authors of server `{server}`");
    let keywords = format!("`disco.keywords.\"{tool}\"`");
    let hide = "hide it from the callers that do not need it (a caller's entry of \
                `disco.tokens` lists the servers and tools it sees)";
    Some(match code {
        "description-no-returns" => format!("{report}: the description is theirs"),
        "description-short" | "description-no-when" | "descriptions-similar" => format!(
            "add the words a request for it would use to {keywords} (search ranks by them), \
             and {report}: the description is theirs"
        ),
        "param-no-description" => {
            format!("{report}: the gateway passes the input schema as the server declares it")
        }
        "annotations-missing" => format!(
            "{report} (`readOnlyHint`, `destructiveHint`); until then a misspelt name is \
             refused rather than corrected to this tool, the safe default"
        ),
        "names-equivalent" | "names-confusable" => {
            format!("set the two apart for search with {keywords}, {hide}, or {report}")
        }
        "alias-shadows" => {
            format!("change `disco.aliases.\"{tool}\"`: the alias is another tool's name or alias")
        }
        "alias-redundant" => format!(
            "drop it from `disco.aliases.\"{tool}\"`: spelling correction already finds the \
             tool by it"
        ),
        "tool-token-cost" => {
            format!("{hide}, or list it only through search (`\"exposure\": \"search-first\"`)")
        }
        "search-misranked" => format!(
            "add the request's words to {keywords}, or the name it is asked by to \
             `disco.aliases.\"{tool}\"`"
        ),
        code if code.starts_with("schema-") || code == "output-schema-ref" => format!(
            "{hide} if their clients reject the schema, and {report}: the gateway passes the \
             schema as the server declares it"
        ),
        // The catalog's own rules: a server's tool found by one is its authors' to fix.
        "token-cost" | "catalog-too-large" | "request-unknown-tool" | "catalog-empty" => report,
        _ => return None,
    })
}

/// The fix of a finding about the whole catalog, when the operator's differs from a tool
/// author's.
fn catalog_fix(code: &str) -> Option<String> {
    match code {
        "catalog-too-large" => Some(
            "list only `tool_search`, `execute_tool` and `disco.pinned` (`\"exposure\": \
             \"search-first\"`, or `--search search-first`), or give each caller only the \
             servers it needs (`disco.tokens[].servers`)"
                .into(),
        ),
        "catalog-empty" => {
            Some("each server's line below says why it is not up; the gateway's log has the tail of its stderr".into())
        }
        _ => None,
    }
}

/// What a finding about the whole catalog says, when the catalog's own words are a tool
/// author's (an empty catalog is a binary without `#[mcp_tool]` functions there; here it is
/// servers that listed nothing).
fn catalog_problem(code: &str) -> Option<String> {
    match code {
        "catalog-empty" => Some("the catalog has no tools: no server listed one".into()),
        _ => None,
    }
}

/// A server as the summary tells it: its name, its number of tools, and, when it is not up,
/// why (its last start's error, or that its first start is still under way).
#[derive(Clone, Debug)]
pub struct ServerLine {
    pub name: String,
    pub tools: usize,
    pub down: Option<String>,
}

/// One line for each server (in `servers`' order, with its number of tools and, when it is not
/// up, why), then for disco's own tools and the catalog when they have findings: how many
/// findings of each severity.
pub fn summary(findings: &[Finding], servers: &[ServerLine]) -> Vec<String> {
    let count = |of: &dyn Fn(&Finding) -> bool| -> String {
        let n = |s: Severity| findings.iter().filter(|f| of(f) && f.severity == s).count();
        let (e, w, i) = (n(Severity::Error), n(Severity::Warning), n(Severity::Info));
        if e + w + i == 0 {
            "nothing found".into()
        } else {
            format!("{e} error(s), {w} warning(s), {i} info")
        }
    };
    let mut out: Vec<String> = servers
        .iter()
        .map(|server| {
            let ServerLine { name, tools, down } = server;
            let counts = count(&|f| f.server.as_deref() == Some(name.as_str()));
            match down {
                Some(why) => format!("server `{name}`: not up ({why}); {tools} tool(s); {counts}"),
                None => format!("server `{name}`: {tools} tool(s); {counts}"),
            }
        })
        .collect();
    let own = |f: &Finding| f.server.is_none() && f.tool != CATALOG;
    if findings.iter().any(own) {
        out.push(format!("disco's own tools: {}", count(&own)));
    }
    let whole = |f: &Finding| f.server.is_none() && f.tool == CATALOG;
    if findings.iter().any(whole) {
        out.push(format!("{CATALOG}: {}", count(&whole)));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use disco_runtime::catalog::lint::LintOptions;
    use disco_runtime::catalog::{Catalog, JsonCatalogProvider};

    /// What only a tool's author can act on.
    const ADVICE: &[&str] = &["doc comment", "# Arguments", "#[", "attribute", "rename"];
    /// What the gateway's operator can change.
    const LEVERS: &[&str] = &[
        "disco.keywords",
        "disco.aliases",
        "disco.tokens",
        "exposure",
        "report it to the authors of server",
        "the gateway's log",
    ];

    fn operators(fix: &str) -> bool {
        LEVERS.iter().any(|l| fix.contains(l)) && !ADVICE.iter().any(|a| fix.contains(a))
    }

    /// The codes of the catalog's lint rules, from the table of its documentation.
    fn codes() -> Vec<String> {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../disco-runtime/src/catalog/lint/mod.rs");
        let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path:?}: {e}"));
        text.lines()
            .filter_map(|l| l.strip_prefix("//! | `"))
            .filter_map(|l| l.split('`').next())
            .map(str::to_string)
            .collect()
    }

    /// Every rule of the catalog's lint, found on a server's tool or on the catalog, is fixed
    /// by what the operator can change, and none by a tool author's advice.
    #[test]
    fn every_rule_is_fixed_by_what_the_operator_can_change() {
        let codes = codes();
        assert!(codes.len() >= 20, "{codes:?}");
        for code in &codes {
            // Each rule named, none left to the fallback.
            let fix = rule_fix(code, "fs.write_file", "fs")
                .unwrap_or_else(|| panic!("{code}: no fix of its own"));
            assert!(operators(&fix), "{code}: {fix}");
            if let Some(fix) = catalog_fix(code) {
                assert!(operators(&fix), "{code}: {fix}");
            }
        }
    }

    /// The catalog lint's findings on a catalog of `tools` (a JSON array of tool entries),
    /// with search on, as the gateway serves it.
    fn lint_of(tools: &serde_json::Value) -> Vec<lint::Finding> {
        let provider = JsonCatalogProvider::from_value(tools).expect("a catalog");
        let catalog = Catalog::builder()
            .provider(provider)
            .search(disco_runtime::catalog::SearchOptions::default().enabled(true))
            .from_inventory()
            .expect("a catalog");
        lint::lint(&catalog, &LintOptions::default())
    }

    /// On a catalog of a server's tool and disco's own: the server's tool's findings are the
    /// operator's, disco's own keep their author's advice, and each has its summary line.
    #[test]
    fn a_servers_tool_is_fixed_by_the_operator_and_disco_s_own_by_its_author() {
        let tools = serde_json::json!([
            {"name": "fs.write_file", "description": "Write.",
             "inputSchema": {"type": "object", "properties": {"path": {"type": "string"}}}},
            {"name": "fs.read_file", "description": "Read.",
             "inputSchema": {"type": "object", "properties": {"path": {"type": "string"}}}},
            // A tool of no server: disco's own, as `tool_search` is.
            {"name": "own_notes", "description": "Notes.",
             "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}}}
        ]);
        let raw = lint_of(&tools);
        assert!(
            raw.iter().any(|f| f.fix.contains("# Arguments")),
            "the catalog's own advice is an author's: {raw:#?}"
        );
        let server_of = |t: &str| t.strip_prefix("fs.").map(|_| "fs".to_string());
        let found = for_operator(raw.clone(), &server_of);
        assert_eq!(found.len(), raw.len());
        for (f, r) in found.iter().zip(&raw) {
            match r.tool.as_deref().and_then(server_of) {
                Some(server) => {
                    assert_eq!(f.server.as_deref(), Some(server.as_str()));
                    assert!(operators(&f.fix), "{f}");
                }
                // disco's own tool keeps its author's advice; the catalog's finding is the
                // operator's where theirs differs.
                None if r.tool.is_some() => assert_eq!(f.fix, r.fix, "{f}"),
                None => {
                    assert_eq!(f.fix, catalog_fix(r.code).unwrap_or(r.fix.clone()), "{f}")
                }
            }
        }
        let own: Vec<&Finding> = found
            .iter()
            .filter(|f| f.server.is_none() && f.tool == "own_notes")
            .collect();
        assert!(
            own.iter().any(|f| f.fix.contains("# Arguments")),
            "{own:#?}"
        );
        let line = |name: &str, tools, down: Option<&str>| ServerLine {
            name: name.into(),
            tools,
            down: down.map(str::to_string),
        };
        let servers = [
            line("fs", 2, None),
            line("idle", 0, None),
            line("slow", 0, Some("did not initialize within 10000 ms")),
        ];
        let lines = summary(&found, &servers);
        assert!(
            lines[0].starts_with("server `fs`: 2 tool(s); "),
            "{lines:?}"
        );
        assert!(lines[0].contains("error(s)"), "{lines:?}");
        assert_eq!(lines[1], "server `idle`: 0 tool(s); nothing found");
        assert_eq!(
            lines[2],
            "server `slow`: not up (did not initialize within 10000 ms); 0 tool(s); nothing found"
        );
        assert!(lines[3].starts_with("disco's own tools: "), "{lines:?}");
    }

    /// A catalog that no server listed a tool into is said to be that, not a binary without
    /// `#[mcp_tool]` functions (the library's words for its authors).
    #[test]
    fn an_empty_catalog_is_servers_that_listed_nothing() {
        let raw = lint_of(&serde_json::json!([]));
        let empty = |f: &&Finding| f.code == "catalog-empty";
        let found = for_operator(raw, &|_: &str| None);
        let finding = found
            .iter()
            .find(empty)
            .unwrap_or_else(|| panic!("no catalog-empty: {found:#?}"));
        assert_eq!(
            finding.problem,
            "the catalog has no tools: no server listed one"
        );
        assert!(operators(&finding.fix), "{finding}");
        for advice in ADVICE.iter().chain(&["binary", "mcp_tool"]) {
            assert!(!finding.to_string().contains(advice), "{finding}");
        }
    }

    /// An OAuth server's finding names the identity its calls act as and, over HTTP, the
    /// callers whose entry names it, for every way an entry can name servers or not.
    #[tokio::test]
    async fn lint_says_whose_identity_an_oauth_server_acts_as() {
        let text = r#"{"mcpServers": {
            "remote": {"url": "http://127.0.0.1:9/mcp", "oauth": true},
            "plain": {"url": "http://127.0.0.1:9/other"}},
          "disco": {"tokens": [
            {"token": "t1", "caller": "ann", "servers": ["remote", "plain"]},
            {"token": "t2", "caller": "bob"},
            {"token": "t3", "caller": "cid", "servers": ["plain"]},
            {"token": "t4", "caller": "dee", "servers": ["remote"]},
            {"token": "t5", "caller": "eve", "tools": ["remote.whoami"]},
            {"token": "t6", "caller": "fay", "servers": [], "tools": ["remote.whoami"]},
            {"token": "t7", "caller": "gus", "servers": ["plain"], "tools": ["plain.x"]},
            {"token": "t8", "caller": "hal", "tools": ["remotely.x", "remote"]}]}}"#;
        let config = crate::config::Config::parse(text, &|_| None).unwrap();
        let hub = Hub::new(config.servers.clone(), config.disco.clone());
        let provider = GatewayProvider::new(hub.clone());
        let found: Vec<Finding> = findings(&hub, &provider)
            .into_iter()
            .filter(|f| f.code == "upstream-oauth-identity")
            .collect();
        assert_eq!(found.len(), 1, "{found:#?}");
        let f = &found[0];
        assert_eq!(f.server.as_deref(), Some("remote"));
        assert_eq!(f.severity, Severity::Info);
        assert!(f.problem.contains("`disco-gateway login remote`"), "{f}");
        assert!(f.problem.contains("`ann`, `dee`, `eve`, `fay`"), "{f}");
        for other in ["`bob`", "`cid`", "`gus`", "`hal`"] {
            assert!(!f.problem.contains(other), "{f}");
        }
        assert!(f.fix.contains("disco.tokens"), "{f}");
    }
}
