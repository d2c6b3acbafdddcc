//! What `disco-gateway lint` says of the upstreams, beside the catalog's own rules: the tools
//! an upstream listed that the gateway left out (and why), the tools whose definitions wait
//! for approval (pins.rs), the names a reader cannot tell apart, and, under `"namespace":
//! "none"`, tools one or two edits from another server's tool (a typo away from calling the
//! wrong server).

use std::collections::HashMap;
use std::fmt;

use disco_runtime::catalog::lint::Severity;

use crate::admit::{same_name_key, shown};
use crate::config::{Namespace, OnChange};
use crate::pins::Why;
use crate::provider::GatewayProvider;
use crate::upstream::Hub;

/// One finding, printed as the catalog's findings are.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Finding {
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

/// The gateway's findings over the upstreams as they are now.
pub fn findings(hub: &Hub, provider: &GatewayProvider) -> Vec<Finding> {
    let mut out = Vec::new();
    for upstream in &hub.upstreams {
        let server = &upstream.config.name;
        let (listed, _) = upstream.tools();
        for r in &listed.refused {
            out.push(Finding {
                severity: Severity::Error,
                code: "upstream-tool-refused",
                tool: format!("{server}: {}", r.tool),
                problem: format!(
                    "server `{server}` lists a tool the gateway leaves out: {}",
                    r.why
                ),
                fix: format!("fix the tool in server `{server}`; its other tools serve meanwhile"),
            });
        }
    }
    for upstream in &hub.upstreams {
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
            severity: Severity::Error,
            code: "upstream-tool-left-out",
            tool: l.tool.clone(),
            problem: l.to_string(),
            fix: "rename the tool upstream, use a namespace separator, or order the servers \
                  in the configuration so that the one that should keep the name comes first"
                .into(),
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
            severity: Severity::Warning,
            code: "tool-name-look-alike",
            tool: shown(b),
            problem: format!(
                "`{}` (server `{sb}`) reads as `{}` (server `{sa}`): the same letters under \
                 Unicode folding (NFKC) or look-alike characters (TR39)",
                shown(b),
                shown(a)
            ),
            fix: "rename one of them upstream: a reader, or a model, cannot tell them apart".into(),
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
                    severity: Severity::Warning,
                    code: "tool-name-near",
                    tool: shown(b),
                    problem: format!(
                        "`{}` (server `{sb}`) is within two edits of `{}` (server `{sa}`): a \
                         typo of one may name the other server's tool",
                        shown(b),
                        shown(a)
                    ),
                    fix: "use a namespace separator (`\"namespace\": \".\"`), or rename one \
                          of them upstream"
                        .into(),
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
