//! Example requests: the tool each should find first, checked against `tool_search`.

use super::words::*;
use super::*;

/// One example request: what a user might ask, and the tool that should answer it.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
pub struct ExampleRequest {
    /// The request as a user would put it, searched as a `tool_search` query.
    pub query: String,
    /// The name (or an alias) of the tool that should rank first for it.
    pub expected: String,
}

/// Reads example requests from JSON Lines: one `{"query": "...", "expected": "tool"}` per line;
/// blank lines and lines starting with `#` or `//` are skipped. Errors name the line.
pub fn parse_requests(text: &str) -> Result<Vec<ExampleRequest>, String> {
    let mut requests = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') || line.starts_with("//") {
            continue;
        }
        let request: ExampleRequest = serde_json::from_str(line).map_err(|e| {
            format!(
                "line {}: {e} (expected {{\"query\": \"...\", \"expected\": \"tool_name\"}})",
                i + 1
            )
        })?;
        requests.push(request);
    }
    Ok(requests)
}

pub(super) fn request_rules(catalog: &Catalog, options: &LintOptions, out: &mut Vec<Finding>) {
    if options.requests.is_empty() {
        return;
    }
    for request in &options.requests {
        let expected = catalog.get(&request.expected).or_else(|| {
            catalog
                .tools()
                .iter()
                .find(|t| t.aliases.contains(&request.expected))
                .map(|t| &**t)
        });
        let Some(expected) = expected else {
            out.push(finding(
                None,
                Severity::Error,
                "request-unknown-tool",
                format!(
                    "example request {:?} expects `{}`, which is not a tool or alias of this \
                     catalog",
                    request.query, request.expected
                ),
                "fix the `expected` field, or remove the request".into(),
            ));
            continue;
        };
        // Every tool, hidden ones included: search is how hidden tools are found.
        let depth = options.search_depth.max(options.search_results).max(1);
        let hits = catalog.search_where(&request.query, depth, &|_| true);
        let rank = hits.iter().position(|(t, _)| t.name == expected.name);
        if rank == Some(0) {
            continue;
        }
        let first = hits.first().map(|(t, _)| t.name.as_str());
        let problem = match (rank, first) {
            (_, None) => format!(
                "search for {:?} finds nothing (every score is below the abstention \
                 threshold); `{}` was expected first",
                request.query, expected.name
            ),
            (Some(r), Some(first)) => format!(
                "search for {:?} ranks `{first}` first and `{}` #{}",
                request.query,
                expected.name,
                r + 1
            ),
            (None, Some(first)) => format!(
                "search for {:?} ranks `{first}` first and `{}` not in the top {depth}",
                request.query, expected.name,
            ),
        };
        let query_words = plain_words(&request.query)
            .into_iter()
            .filter(|w| !STOP_WORDS.contains(&w.as_str()))
            .collect::<Vec<_>>()
            .join(", ");
        let severity = match rank {
            Some(r) if r < options.search_results => Severity::Info,
            _ => Severity::Warning,
        };
        out.push(finding(
            Some(&expected.name),
            severity,
            "search-misranked",
            problem,
            format!(
                "use the words people use ({query_words}) in `{}`'s description or keywords{}",
                expected.name,
                match first {
                    Some(f) if f != expected.name => {
                        format!(", and say in `{f}`'s description when not to use it")
                    }
                    _ => String::new(),
                }
            ),
        ));
    }
}
