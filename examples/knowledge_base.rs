//! A personal knowledge base served over MCP: search saved papers and notes, read one, add a
//! note. Everything persists to a JSON file.
//!
//! ```text
//! cargo run --example knowledge_base                          # stdio
//! cargo run --example knowledge_base -- --http 127.0.0.1:8080 # Streamable HTTP at /mcp
//! cargo run --example knowledge_base -- --db ~/notes.json     # another file
//! ```
//!
//! The data file defaults to `$XDG_DATA_HOME/disco/knowledge_base.json` (or
//! `~/.local/share/disco/knowledge_base.json`); `--db` or `DISCO_KB` chooses another.

use std::path::{Path, PathBuf};
use std::sync::Mutex;

use disco_runtime::{mcp_tool, Json, Server, State, ToolError};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// One saved item.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
struct Item {
    /// Stable identifier, e.g. `note-3`.
    id: String,
    /// `paper` or `note`.
    kind: Kind,
    title: String,
    text: String,
    tags: Vec<String>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
enum Kind {
    Paper,
    Note,
}

/// A search hit: the item and how well it matched.
#[derive(Serialize, JsonSchema)]
struct Hit {
    score: f32,
    #[serde(flatten)]
    item: Item,
}

/// The knowledge base: items in memory, written to `path` after every change.
struct Kb {
    path: PathBuf,
    items: Mutex<Vec<Item>>,
}

impl Kb {
    fn open(path: &Path) -> Result<Kb, Box<dyn std::error::Error + Send + Sync>> {
        let items = match std::fs::read_to_string(path) {
            Ok(text) => serde_json::from_str(&text)
                .map_err(|e| format!("{} is not a knowledge base file: {e}", path.display()))?,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => seed(),
            Err(e) => return Err(format!("cannot read {}: {e}", path.display()).into()),
        };
        let kb = Kb {
            path: path.to_path_buf(),
            items: Mutex::new(items),
        };
        kb.save(&kb.lock())?;
        Ok(kb)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<Item>> {
        // A panic while holding the lock cannot leave the list half-written: every change
        // is a single push.
        self.items.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Writes to a temporary file and renames it, so a crash never leaves a torn file.
    fn save(&self, items: &[Item]) -> std::io::Result<()> {
        let tmp = self.path.with_extension("json.tmp");
        let text = serde_json::to_string_pretty(items).map_err(std::io::Error::other)?;
        std::fs::write(&tmp, text)?;
        std::fs::rename(&tmp, &self.path)
    }
}

fn seed() -> Vec<Item> {
    let paper = |n: usize, title: &str, text: &str, tags: &[&str]| Item {
        id: format!("paper-{n}"),
        kind: Kind::Paper,
        title: title.into(),
        text: text.into(),
        tags: tags.iter().map(|t| t.to_string()).collect(),
    };
    vec![
        paper(
            1,
            "Attention Is All You Need",
            "Introduces the Transformer, a sequence model built only on attention, without recurrence or convolution.",
            &["transformers", "attention", "nlp"],
        ),
        paper(
            2,
            "Toolformer: Language Models Can Teach Themselves to Use Tools",
            "A language model learns when to call external tools such as a calculator or a search engine.",
            &["tools", "llm", "agents"],
        ),
        paper(
            3,
            "The Log-Structured Merge-Tree",
            "A disk-based index for high insert rates that batches writes in memory and merges sorted runs.",
            &["databases", "storage", "indexing"],
        ),
    ]
}

fn words(text: &str) -> Vec<String> {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|w| w.len() > 1)
        .map(str::to_lowercase)
        .collect()
}

/// Share of the query's words found in the item, titles and tags counting double.
fn score(query: &[String], item: &Item) -> f32 {
    if query.is_empty() {
        return 0.0;
    }
    let title = words(&item.title);
    let text = words(&item.text);
    let tags: Vec<String> = item.tags.iter().map(|t| t.to_lowercase()).collect();
    let mut total = 0.0;
    for q in query {
        let stem = |w: &String| w.starts_with(q.as_str()) || q.starts_with(w.as_str());
        if title.iter().any(stem) || tags.iter().any(stem) {
            total += 2.0;
        } else if text.iter().any(stem) {
            total += 1.0;
        }
    }
    total / (2.0 * query.len() as f32)
}

/// Search the saved papers and notes by their words.
///
/// Use this when the user asks about something they saved earlier, or wants to know what
/// they have on a topic. Returns the best matches, most relevant first, each with its id,
/// title, full text and tags; pass an id to `get_item` to read a single one again.
///
/// # Arguments
/// * `query` - what to look for, in the user's own words
/// * `limit` - how many results to return at most
/// * `kind` - only papers or only notes; both when absent
#[mcp_tool(
    aliases("search_paper", "search_knowledge_base"),
    keywords("knowledge base", "papers", "notes", "saved"),
    read_only,
    params(
        query(alias = "question", alias = "search_term"),
        limit(alias = "max_results")
    )
)]
fn search_papers(
    kb: State<Kb>,
    query: String,
    #[param(default = 5)] limit: u32,
    kind: Option<Kind>,
) -> Json<Vec<Hit>> {
    let q = words(&query);
    let items = kb.lock();
    let mut hits: Vec<Hit> = items
        .iter()
        .filter(|i| kind.is_none_or(|k| i.kind == k))
        .map(|i| Hit {
            score: score(&q, i),
            item: i.clone(),
        })
        .filter(|h| h.score > 0.0)
        .collect();
    hits.sort_by(|a, b| b.score.total_cmp(&a.score).then(a.item.id.cmp(&b.item.id)));
    hits.truncate(limit as usize);
    Json(hits)
}

/// Read one saved paper or note by its id (as returned by `search_papers` or `add_note`).
///
/// Returns the whole item. Fails with a clear message when no item has that id.
///
/// # Arguments
/// * `id` - the item's id, e.g. `paper-2` or `note-1`
#[mcp_tool(read_only, aliases("get_note", "get_paper"))]
fn get_item(kb: State<Kb>, id: String) -> Result<Json<Item>, ToolError> {
    kb.lock()
        .iter()
        .find(|i| i.id == id)
        .cloned()
        .map(Json)
        .ok_or_else(|| ToolError::new(format!("no item has id `{id}`; search first to find ids")))
}

/// Save a new note in the knowledge base.
///
/// Use this when the user asks to remember, write down or save something. Returns the new
/// note with its id. It never changes or removes existing items.
///
/// # Arguments
/// * `title` - a short title
/// * `text` - the note itself
/// * `tags` - words to find it by later
#[mcp_tool(
    destructive = false,
    aliases("create_note", "save_note"),
    keywords("remember", "write down")
)]
async fn add_note(
    kb: State<Kb>,
    title: String,
    text: String,
    #[param(default)] tags: Vec<String>,
) -> Result<Json<Item>, ToolError> {
    if title.trim().is_empty() {
        return Err(ToolError::new("`title` cannot be empty"));
    }
    // The file write is blocking I/O: keep it off the async workers.
    tokio::task::spawn_blocking(move || {
        let mut items = kb.lock();
        let next = items.iter().filter(|i| i.kind == Kind::Note).count() + 1;
        let item = Item {
            id: format!("note-{next}"),
            kind: Kind::Note,
            title,
            text,
            tags,
        };
        items.push(item.clone());
        if let Err(e) = kb.save(&items) {
            items.pop();
            return Err(ToolError::new(format!("could not save the note: {e}")));
        }
        Ok(Json(item))
    })
    .await?
}

fn arg_value(args: &[String], flag: &str) -> Option<String> {
    args.iter()
        .position(|a| a == flag)
        .and_then(|i| args.get(i + 1).cloned())
}

/// The data file when neither `--db` nor `DISCO_KB` names one: in the user's data directory,
/// never in the directory the server happens to be started from.
fn default_db() -> Result<PathBuf, String> {
    let data = std::env::var_os("XDG_DATA_HOME")
        .filter(|d| !d.is_empty())
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| Path::new(&h).join(".local/share")))
        .ok_or("no data directory (set HOME or XDG_DATA_HOME, or pass --db FILE)")?;
    let dir = data.join("disco");
    std::fs::create_dir_all(&dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    Ok(dir.join("knowledge_base.json"))
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
    let args: Vec<String> = std::env::args().collect();
    let db = match arg_value(&args, "--db").or_else(|| std::env::var("DISCO_KB").ok()) {
        Some(db) => PathBuf::from(db),
        None => default_db()?,
    };
    eprintln!("knowledge-base: data in {}", db.display());
    let server = Server::from_inventory()
        .name("knowledge-base")
        .instructions(
            "A personal knowledge base. Search with search_papers, read one item with \
             get_item, save new notes with add_note.",
        )
        .with_state(Kb::open(&db)?);
    match arg_value(&args, "--http") {
        Some(addr) => {
            server
                .serve_http(addr.parse::<std::net::SocketAddr>()?)
                .await?
        }
        None => server.serve_stdio().await?,
    }
    Ok(())
}
