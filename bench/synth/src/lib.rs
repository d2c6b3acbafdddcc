//! Synthetic `tools/list` catalogs of any size, built from the vocabulary of the real catalogs
//! in `../shared/datasets` (BFCL and MetaTool: tool-name words, descriptions, parameters).
//!
//! Why synthetic: no public catalog has 10,000 or 100,000 tools, and speed at those sizes is a
//! target. Why from real vocabulary: the cost of resolution and search depends on how words are
//! distributed (shared verbs, long descriptions, repeated parameter names), which random strings
//! would not reproduce.
//!
//! Deterministic: the same size and seed give the same catalog on every machine, so figures
//! from different runs describe the same input. When the datasets are missing (a fresh clone
//! without `../shared`), a small built-in vocabulary is used and a warning says so: the
//! benchmarks still run, but their figures are not the ones in BENCHMARKS.md.

use std::collections::{BTreeMap, BTreeSet, HashSet};
use std::path::{Path, PathBuf};

use serde_json::{json, Map, Value};

/// splitmix64: tiny, fast, and identical on every platform.
#[derive(Clone, Debug)]
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed)
    }
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    /// Uniform in `0..n` (n > 0).
    pub fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n as u64) as usize
    }
    pub fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }
}

/// One input parameter seen in a real catalog.
#[derive(Clone, Debug)]
pub struct Param {
    pub name: String,
    pub ty: String,
    pub description: String,
}

/// Words and texts to build tools from.
#[derive(Clone, Debug, Default)]
pub struct Vocab {
    /// First words of real tool names that start several names (get, calculate, find, ...).
    pub verbs: Vec<String>,
    /// The other words of real tool names.
    pub objects: Vec<String>,
    /// Real tool descriptions.
    pub descriptions: Vec<String>,
    /// Real parameters (name, JSON type, description).
    pub params: Vec<Param>,
    /// Where the vocabulary came from, for the report.
    pub source: String,
}

/// `$DISCO_DATASETS`, else `../shared/datasets` beside the workspace.
pub fn datasets_dir() -> PathBuf {
    if let Some(dir) = std::env::var_os("DISCO_DATASETS") {
        return PathBuf::from(dir);
    }
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/datasets")
}

/// The tools of a `tools/list` JSON file (`{"tools": [...]}` or a bare array).
pub fn read_tools(path: &Path) -> Result<Vec<Value>, String> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    let value: Value =
        serde_json::from_str(&text).map_err(|e| format!("{}: not JSON: {e}", path.display()))?;
    match value {
        Value::Array(tools) => Ok(tools),
        Value::Object(mut map) => match map.remove("tools") {
            Some(Value::Array(tools)) => Ok(tools),
            _ => Err(format!("{}: no \"tools\" array", path.display())),
        },
        _ => Err(format!("{}: not a tools/list result", path.display())),
    }
}

/// The vocabulary of BFCL and MetaTool, or the built-in fallback with a warning on stderr.
pub fn vocab() -> Vocab {
    let dir = datasets_dir();
    match vocab_from(&[
        dir.join("bfcl/mcp/catalog.json"),
        dir.join("metatool/mcp/catalog.json"),
    ]) {
        Ok(v) => v,
        Err(e) => {
            eprintln!(
                "warning: {e}\nwarning: using the small built-in vocabulary; set DISCO_DATASETS to \
                 the datasets folder (BFCL and MetaTool under mcp/catalog.json) for the catalogs \
                 BENCHMARKS.md reports on"
            );
            fallback()
        }
    }
}

/// The vocabulary of the given `tools/list` files.
pub fn vocab_from(paths: &[PathBuf]) -> Result<Vocab, String> {
    let mut first_words: BTreeMap<String, usize> = BTreeMap::new();
    let mut objects = BTreeSet::new();
    let mut descriptions = BTreeSet::new();
    let mut params: BTreeMap<String, Param> = BTreeMap::new();
    let mut sources = Vec::new();
    for path in paths {
        let tools = read_tools(path)?;
        sources.push(format!("{} ({} tools)", path.display(), tools.len()));
        for tool in &tools {
            let name = tool["name"].as_str().unwrap_or_default();
            let words = split_name(name);
            if words.len() >= 2 {
                *first_words.entry(words[0].clone()).or_default() += 1;
                objects.extend(words[1..].iter().filter(|w| is_word(w)).cloned());
            } else {
                objects.extend(words.into_iter().filter(|w| is_word(w)));
            }
            if let Some(d) = tool["description"].as_str() {
                let d = d.trim();
                if d.len() >= 20 && d.len() <= 600 {
                    descriptions.insert(d.to_string());
                }
            }
            if let Some(props) = tool["inputSchema"]["properties"].as_object() {
                for (pname, p) in props {
                    if !is_param_name(pname) {
                        continue;
                    }
                    let ty = match p["type"].as_str() {
                        Some(t @ ("string" | "integer" | "number" | "boolean" | "array")) => t,
                        Some("object" | "dict") => "object",
                        _ => "string",
                    };
                    let description = p["description"].as_str().unwrap_or_default().trim();
                    params.entry(pname.clone()).or_insert_with(|| Param {
                        name: pname.clone(),
                        ty: ty.to_string(),
                        description: description.chars().take(300).collect(),
                    });
                }
            }
        }
    }
    let verbs: Vec<String> = first_words
        .into_iter()
        .filter(|(w, n)| *n >= 3 && is_word(w))
        .map(|(w, _)| w)
        .collect();
    let objects: Vec<String> = objects.into_iter().filter(|w| !verbs.contains(w)).collect();
    let vocab = Vocab {
        verbs,
        objects,
        descriptions: descriptions.into_iter().collect(),
        params: params.into_values().collect(),
        source: sources.join(", "),
    };
    if vocab.verbs.len() < 5 || vocab.objects.len() < 50 || vocab.params.len() < 10 {
        return Err(format!("too little vocabulary in {}", vocab.source));
    }
    Ok(vocab)
}

fn is_word(w: &str) -> bool {
    w.len() >= 3 && w.len() <= 20 && w.chars().all(|c| c.is_ascii_lowercase())
}

fn is_param_name(w: &str) -> bool {
    !w.is_empty() && w.len() <= 40 && w.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// `get_user.byId-v2` -> `get`, `user`, `by`, `id`, `v2`.
pub fn split_name(name: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut cur = String::new();
    let mut prev_lower = false;
    for c in name.chars() {
        if !c.is_alphanumeric() {
            if !cur.is_empty() {
                words.push(std::mem::take(&mut cur));
            }
            prev_lower = false;
            continue;
        }
        if c.is_uppercase() && prev_lower && !cur.is_empty() {
            words.push(std::mem::take(&mut cur));
        }
        prev_lower = c.is_lowercase() || c.is_ascii_digit();
        cur.extend(c.to_lowercase());
    }
    if !cur.is_empty() {
        words.push(cur);
    }
    words
}

/// The vocabulary used when the datasets are not there: enough to run, not to report.
pub fn fallback() -> Vocab {
    let s = |items: &[&str]| items.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    Vocab {
        verbs: s(&[
            "get",
            "calculate",
            "find",
            "search",
            "create",
            "update",
            "delete",
            "list",
            "send",
            "convert",
            "check",
            "fetch",
        ]),
        objects: s(&[
            "user",
            "order",
            "weather",
            "forecast",
            "stock",
            "price",
            "movie",
            "recipe",
            "flight",
            "hotel",
            "invoice",
            "email",
            "calendar",
            "event",
            "file",
            "folder",
            "document",
            "triangle",
            "area",
            "distance",
            "route",
            "restaurant",
            "review",
            "song",
            "playlist",
            "news",
            "article",
            "currency",
            "rate",
            "account",
            "balance",
            "ticket",
            "issue",
            "project",
            "task",
            "contact",
            "message",
            "image",
            "video",
            "translation",
            "word",
            "definition",
            "population",
            "city",
            "country",
            "temperature",
            "recommendation",
            "product",
            "shipping",
            "tracking",
            "payment",
            "subscription",
            "report",
            "chart",
        ]),
        descriptions: s(&[
            "Calculate the area of a triangle given its base and height.",
            "Get the current weather forecast for a city, including temperature and humidity.",
            "Search for flights between two airports on a given date and return the cheapest.",
            "Find restaurants near a location that serve a given cuisine, sorted by rating.",
            "Convert an amount of money from one currency to another at today's rate.",
            "Send an email message to one or more recipients with an optional attachment.",
            "List the events in a calendar between two dates.",
            "Retrieve the latest news articles about a topic from trusted sources.",
            "Track a parcel by its tracking number and report where it is.",
            "Recommend movies similar to the ones the user liked.",
        ]),
        params: [
            ("city", "string", "The name of the city."),
            ("date", "string", "The date in YYYY-MM-DD format."),
            ("limit", "integer", "How many results to return."),
            ("query", "string", "The words to search for."),
            ("amount", "number", "The amount of money."),
            ("currency", "string", "A three-letter currency code."),
            ("include_details", "boolean", "Whether to include details."),
            ("tags", "array", "Tags to filter by."),
            ("user_id", "integer", "The identifier of the user."),
            ("base", "integer", "The base of the triangle."),
            ("height", "integer", "The height of the triangle."),
            ("options", "object", "Extra options."),
        ]
        .iter()
        .map(|(n, t, d)| Param {
            name: n.to_string(),
            ty: t.to_string(),
            description: d.to_string(),
        })
        .collect(),
        source: "built-in fallback vocabulary".into(),
    }
}

fn capitalise(w: &str) -> String {
    let mut c = w.chars();
    match c.next() {
        Some(f) => f.to_uppercase().chain(c).collect(),
        None => String::new(),
    }
}

fn schema_of(p: &Param) -> Value {
    let mut s = Map::new();
    s.insert("type".into(), json!(p.ty));
    if p.ty == "array" {
        s.insert("items".into(), json!({"type": "string"}));
    }
    if !p.description.is_empty() {
        s.insert("description".into(), json!(p.description));
    }
    Value::Object(s)
}

/// A `{"tools": [...]}` catalog of `n` tools, the same for the same `n`, `seed` and vocabulary.
///
/// Each tool: a name `verb_object[_object]` (unique), a description that says the name's
/// words and then one real description, one to four real parameters (the first required),
/// and, for every other tool, `readOnlyHint: true` (fuzzy correction applies only to tools
/// that are not destructive, and real catalogs mix both).
pub fn catalog(n: usize, seed: u64, vocab: &Vocab) -> Value {
    let mut rng = Rng::new(seed);
    let mut seen = HashSet::with_capacity(n);
    let mut tools = Vec::with_capacity(n);
    for i in 0..n {
        let (name, words) = loop {
            let mut words = vec![
                rng.pick(&vocab.verbs).clone(),
                rng.pick(&vocab.objects).clone(),
            ];
            if rng.below(3) > 0 {
                words.push(rng.pick(&vocab.objects).clone());
            }
            let mut name = words.join("_");
            let mut extra = 0;
            while seen.contains(&name) && extra < 4 {
                words.push(rng.pick(&vocab.objects).clone());
                name = words.join("_");
                extra += 1;
            }
            if seen.insert(name.clone()) {
                break (name, words);
            }
        };
        let phrase = words[1..].join(" ");
        let description = format!(
            "{} {}. {}",
            capitalise(&words[0]),
            phrase,
            rng.pick(&vocab.descriptions)
        );
        let mut props = Map::new();
        let want = 1 + rng.below(4);
        let mut guard = 0;
        while props.len() < want && guard < 16 {
            let p = rng.pick(&vocab.params);
            props.entry(p.name.clone()).or_insert_with(|| schema_of(p));
            guard += 1;
        }
        let required: Vec<&String> = props.keys().take(1).collect();
        let mut tool = json!({
            "name": name,
            "description": description,
            "inputSchema": {"type": "object", "properties": props, "required": required},
        });
        if i % 2 == 0 {
            tool["annotations"] = json!({"readOnlyHint": true});
        }
        tools.push(tool);
    }
    json!({ "tools": tools })
}

/// Inputs that exercise each resolution tier and the search, drawn from a generated catalog.
#[derive(Clone, Debug, Default)]
pub struct Probes {
    /// Names as they are.
    pub exact: Vec<String>,
    /// Same names in another spelling: PascalCase, or a client prefix (`functions.name`).
    pub spelling: Vec<String>,
    /// One letter dropped from the longest word of a read-only tool's name.
    pub typo: Vec<String>,
    /// Names of no tool, made of one unseen verb and the catalog's own object words.
    pub unknown: Vec<String>,
    /// Search queries: a few words of one tool's name and description, in another order.
    pub queries: Vec<String>,
}

/// `count` probes of each kind for `catalog`, deterministic.
pub fn probes(catalog: &Value, count: usize, seed: u64) -> Probes {
    let tools = catalog["tools"]
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or(&[]);
    let mut rng = Rng::new(seed);
    let mut p = Probes::default();
    if tools.is_empty() {
        return p;
    }
    let names: HashSet<&str> = tools.iter().filter_map(|t| t["name"].as_str()).collect();
    let strange = [
        "reticulate",
        "defenestrate",
        "transmogrify",
        "frobnicate",
        "discombobulate",
    ];
    let mut guard = 0;
    while p.typo.len() < count && guard < count * 50 {
        guard += 1;
        let t = rng.pick(tools);
        let name = t["name"].as_str().unwrap_or_default();
        let words = split_name(name);
        if p.exact.len() < count {
            p.exact.push(name.to_string());
            p.spelling.push(if p.spelling.len() % 2 == 0 {
                words.iter().map(|w| capitalise(w)).collect()
            } else {
                format!("functions.{name}")
            });
            let mut unknown = words.clone();
            unknown[0] = rng.pick(&strange).to_string();
            p.unknown.push(unknown.join("_"));
            let desc = t["description"].as_str().unwrap_or_default();
            let content: Vec<&str> = desc
                .split(|c: char| !c.is_alphanumeric())
                .filter(|w| w.len() >= 4)
                .collect();
            let mut q: Vec<String> = words[1..].to_vec();
            for _ in 0..2 {
                if !content.is_empty() {
                    q.push(rng.pick(&content).to_lowercase());
                }
            }
            q.push(words[0].clone());
            p.queries.push(q.join(" "));
        }
        if t["annotations"]["readOnlyHint"] != json!(true) {
            continue;
        }
        let Some((wi, longest)) = words.iter().enumerate().max_by_key(|(_, w)| w.len()) else {
            continue;
        };
        if longest.len() < 6 {
            continue;
        }
        let mut w = longest.clone();
        w.remove(longest.len() / 2);
        let mut typo = words.clone();
        typo[wi] = w;
        let typo = typo.join("_");
        if !names.contains(typo.as_str()) {
            p.typo.push(typo);
        }
    }
    p
}
