//! Tool definitions pinned: what a model reads of a tool (its name, title, description,
//! schemas and annotations) is approved once, and a definition that changes afterwards waits
//! for the operator instead of reaching the model unseen. A server's tools are approved when
//! the gateway first lists them; a tool that changes, and one that appears after its server was
//! approved, waits until `disco-gateway approve <server>.<tool>` (or, with `disco.onChange:
//! "serve"`, is served and logged).
//!
//! A pin is the SHA-256 of a definition's canonical JSON: those six fields, object keys sorted
//! by their UTF-8 bytes at every depth, no spaces. Each server's pins are one file of the
//! state directory, `pins/<server>.json`, beside the definitions they were made of (for the
//! diff the log shows) and the definitions that wait, each kept as the canonical text its pin
//! hashes. The directory is made 0700 and each file
//! written 0600 through a temporary file and a rename, under a lock, so that a gateway and an
//! `approve` never write one file at once and a reader never sees half of one. A file that
//! cannot be read is an error naming it; nothing of that server is served until it is fixed.

use std::collections::{BTreeMap, HashMap};
use std::fmt::Write as _;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use disco_runtime::rmcp::model::Tool;
use serde_json::value::RawValue;
use serde_json::{Map, Value};
use sha2::{Digest, Sha256};

use crate::text::{clip, shown, visible};

/// The fields of a tool a pin covers: everything a model reads of it.
pub const PINNED_FIELDS: [&str; 6] = [
    "name",
    "title",
    "description",
    "inputSchema",
    "outputSchema",
    "annotations",
];

/// At most this many lines of a diff are logged; the rest are counted.
const MAX_DIFF_LINES: usize = 24;
/// A value in a diff line is clipped to this many characters.
const MAX_DIFF_VALUE_CHARS: usize = 160;

/// A pin: the SHA-256 of a definition's canonical JSON.
pub type Sha = [u8; 32];

/// Why a tool waits for approval.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Why {
    /// Its definition is not the one approved.
    Changed,
    /// It was first listed after its server was approved.
    New,
}

/// A tool that waits for approval: why, and the pin of the definition that waits.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Waiting {
    pub why: Why,
    pub sha: Sha,
}

/// What a server's listing is, against its pins.
#[derive(Debug, Default)]
pub struct Review {
    /// The server had no pins: its tools were approved as they are now.
    pub first_seen: bool,
    /// The tools that wait, by the upstream's name.
    pub waiting: BTreeMap<String, Waiting>,
    /// For each waiting definition not in `logged` (see [`Pins::review`]): the tool, and what
    /// differs from the approved one, as lines to log.
    pub diffs: Vec<(String, String)>,
}

/// The state directory's pins.
#[derive(Clone, Debug)]
pub struct Pins {
    dir: PathBuf,
    /// `false` for `lint` and `docs`: they review and never write (a server they see first is
    /// approved by the gateway that serves it, not by them).
    writable: bool,
}

/// A server's pin file, as written.
#[derive(serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    /// The server these are the pins of (the file's name is the name escaped).
    server: String,
    approved: BTreeMap<String, Pin>,
    #[serde(default)]
    waiting: BTreeMap<String, Pin>,
}

/// A definition and its pin. The definition is kept as its canonical JSON text, unparsed: a
/// review reads every pin of a server and parses only the definitions it shows a diff of
/// (a parsed schema takes ten times its text).
#[derive(serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct Pin {
    sha256: String,
    definition: Box<RawValue>,
}

impl Pin {
    fn new(sha: &Sha, canonical: String) -> Result<Pin, String> {
        Ok(Pin {
            sha256: hex(sha),
            definition: RawValue::from_string(canonical).map_err(|e| e.to_string())?,
        })
    }

    /// The definition parsed, for a diff.
    fn parsed(&self) -> Value {
        serde_json::from_str(self.definition.get()).unwrap_or(Value::Null)
    }
}

/// Where the gateway keeps its state: `configured` (`disco.dataDir`), else
/// `$XDG_STATE_HOME/disco-gateway`, else `$HOME/.local/state/disco-gateway`.
pub fn state_dir(
    configured: Option<&Path>,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<PathBuf, String> {
    if let Some(dir) = configured {
        return Ok(dir.to_path_buf());
    }
    // The XDG rule: a relative path is invalid and ignored.
    if let Some(state) = env("XDG_STATE_HOME").filter(|d| Path::new(d).is_absolute()) {
        return Ok(Path::new(&state).join("disco-gateway"));
    }
    match env("HOME").filter(|d| Path::new(d).is_absolute()) {
        Some(home) => Ok(Path::new(&home).join(".local/state/disco-gateway")),
        None => Err(
            "no directory for the gateway's state: neither XDG_STATE_HOME nor HOME is set to \
             an absolute path; set `disco.dataDir`"
                .into(),
        ),
    }
}

/// The pin of a definition, and the definition as pinned: the canonical JSON of its pinned
/// fields.
pub fn fingerprint(tool: &Tool) -> (Sha, String) {
    let mut pinned = Map::new();
    if let Ok(Value::Object(all)) = serde_json::to_value(tool) {
        for (key, value) in all {
            if PINNED_FIELDS.contains(&key.as_str()) {
                pinned.insert(key, value);
            }
        }
    }
    let mut text = String::new();
    canonical(&Value::Object(pinned), &mut text);
    (sha(&text), text)
}

fn sha(canonical: &str) -> Sha {
    let mut out = [0u8; 32];
    out.copy_from_slice(Sha256::digest(canonical.as_bytes()).as_slice());
    out
}

/// `value` as canonical JSON: object keys sorted by their UTF-8 bytes, at every depth; no
/// whitespace; strings and numbers as serde_json writes them.
pub fn canonical(value: &Value, out: &mut String) {
    match value {
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort_unstable();
            out.push('{');
            for (i, key) in keys.into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                let _ = write!(out, "{}", Value::from(key.as_str()));
                out.push(':');
                canonical(&map[key], out);
            }
            out.push('}');
        }
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                canonical(item, out);
            }
            out.push(']');
        }
        scalar => {
            let _ = write!(out, "{scalar}");
        }
    }
}

pub fn hex(sha: &Sha) -> String {
    sha.iter().fold(String::with_capacity(64), |mut s, b| {
        let _ = write!(s, "{b:02x}");
        s
    })
}

/// The name of a server's pin file: letters, digits, `-` and `_` as they are, any other byte
/// `%XX` (so that no name reaches outside the directory or collides with another), and a long
/// name cut and told apart by its hash.
pub(crate) fn file_name(server: &str) -> String {
    let mut out = String::new();
    for b in server.bytes() {
        if b.is_ascii_alphanumeric() || b == b'-' || b == b'_' {
            out.push(char::from(b));
        } else {
            let _ = write!(out, "%{b:02X}");
        }
    }
    if out.len() > 120 {
        let digest = Sha256::digest(server.as_bytes());
        let tail: String = digest.iter().take(8).fold(String::new(), |mut s, b| {
            let _ = write!(s, "{b:02x}");
            s
        });
        out.truncate(100);
        out.push('~');
        out.push_str(&tail);
    }
    out
}

impl Pins {
    pub fn new(dir: PathBuf, writable: bool) -> Pins {
        Pins { dir, writable }
    }

    /// The state directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Whether reviews write (the gateway serving), or only read (`lint`, `docs`).
    pub fn writable(&self) -> bool {
        self.writable
    }

    /// The pin file of `server`.
    pub fn file_of(&self, server: &str) -> PathBuf {
        self.dir
            .join("pins")
            .join(format!("{}.json", file_name(server)))
    }

    /// The state directory the pins are kept in (with the other state of the gateway).
    pub fn state_dir(&self) -> &Path {
        &self.dir
    }

    /// When the pin file of `server` was last written, and its length: what the gateway
    /// watches to see an `approve` of another process.
    pub fn stamp(&self, server: &str) -> Option<(SystemTime, u64)> {
        let meta = std::fs::metadata(self.file_of(server)).ok()?;
        Some((meta.modified().ok()?, meta.len()))
    }

    /// Reviews what `server` lists now against its pins. A server without pins has its tools
    /// approved (and written, when writable). A tool whose pin differs, or that has none, waits;
    /// its definition is recorded as waiting (for `approve`, and for the diff). A tool that
    /// waited and is now listed as approved waits no more. `diffs` is made for the waiting
    /// definitions whose pin is not the one in `logged` (those already logged by this process).
    pub fn review(
        &self,
        server: &str,
        tools: &[Tool],
        logged: &HashMap<String, Sha>,
    ) -> Result<Review, String> {
        let path = self.file_of(server);
        let _lock = if self.writable {
            Some(self.lock(&path)?)
        } else {
            None
        };
        let mut review = Review::default();
        let Some(mut file) = read(&path)? else {
            review.first_seen = true;
            if self.writable {
                let approved = tools
                    .iter()
                    .map(|t| {
                        let (sha, definition) = fingerprint(t);
                        Ok((t.name.to_string(), Pin::new(&sha, definition)?))
                    })
                    .collect::<Result<_, String>>()?;
                let file = File {
                    server: server.to_string(),
                    approved,
                    waiting: BTreeMap::new(),
                };
                self.write(&path, &file)?;
            }
            return Ok(review);
        };
        let mut changed = false;
        let mut listed = std::collections::HashSet::new();
        for tool in tools {
            let name = tool.name.to_string();
            let (sha, definition) = fingerprint(tool);
            let approved = file.approved.get(&name);
            if approved.is_some_and(|p| p.sha256 == hex(&sha)) {
                changed |= file.waiting.remove(&name).is_some();
                continue;
            }
            let why = if approved.is_some() {
                Why::Changed
            } else {
                Why::New
            };
            if logged.get(&name) != Some(&sha) {
                let before = approved.map(Pin::parsed);
                let after = serde_json::from_str(&definition).unwrap_or(Value::Null);
                review
                    .diffs
                    .push((name.clone(), diff(before.as_ref(), &after)));
            }
            if file.waiting.get(&name).map(|p| p.sha256.as_str()) != Some(hex(&sha).as_str()) {
                file.waiting
                    .insert(name.clone(), Pin::new(&sha, definition)?);
                changed = true;
            }
            listed.insert(name.clone());
            review.waiting.insert(name, Waiting { why, sha });
        }
        // What waited and is listed no more waits no more.
        let before = file.waiting.len();
        file.waiting.retain(|name, _| listed.contains(name));
        changed |= file.waiting.len() != before;
        if changed && self.writable {
            self.write(&path, &file)?;
        }
        Ok(review)
    }

    /// Approves what waits of `server`: the tool `tool`, or every one. Returns the tools
    /// approved; an error says why none could be (no pins, nothing waits under that name, a
    /// file that cannot be read or written).
    pub fn approve(&self, server: &str, tool: Option<&str>) -> Result<Vec<String>, String> {
        let path = self.file_of(server);
        let _lock = self.lock(&path)?;
        let Some(mut file) = read(&path)? else {
            return Err(format!(
                "server `{}` has no pins in {}: no gateway has served it with this state \
                 directory (`disco.dataDir`)",
                shown(server),
                self.dir.display()
            ));
        };
        let names: Vec<String> = match tool {
            Some(tool) if file.waiting.contains_key(tool) => vec![tool.to_string()],
            Some(tool) if file.approved.contains_key(tool) => {
                return Err(format!(
                    "`{}.{}` waits for nothing: it is approved as the gateway last listed it",
                    shown(server),
                    shown(tool)
                ))
            }
            Some(tool) => {
                return Err(format!(
                    "server `{}` has no tool `{}` that waits for approval (see `disco-gateway \
                     lint`)",
                    shown(server),
                    shown(tool)
                ))
            }
            None if file.waiting.is_empty() => {
                return Err(format!(
                    "nothing of server `{}` waits for approval",
                    shown(server)
                ))
            }
            None => file.waiting.keys().cloned().collect(),
        };
        for name in &names {
            if let Some(pin) = file.waiting.remove(name) {
                file.approved.insert(name.clone(), pin);
            }
        }
        self.write(&path, &file)?;
        Ok(names)
    }

    /// The servers that have pins here, by the names their files give.
    pub fn servers(&self) -> Vec<String> {
        let Ok(entries) = std::fs::read_dir(self.dir.join("pins")) else {
            return Vec::new();
        };
        let mut out: Vec<String> = entries
            .filter_map(|e| e.ok())
            .filter(|e| e.path().extension().is_some_and(|x| x == "json"))
            .filter_map(|e| read(&e.path()).ok().flatten())
            .map(|f| f.server)
            .collect();
        out.sort();
        out
    }

    /// Holds the lock of the pin file `path` until dropped: one writer at a time, across
    /// processes (a gateway and `approve`). The lock file stays; it holds nothing.
    fn lock(&self, path: &Path) -> Result<Lock, String> {
        self.make_dirs()?;
        lock_file(&path.with_extension("lock")).map(Lock)
    }

    /// The state directory and its `pins`, each made 0700 when it is made here.
    fn make_dirs(&self) -> Result<(), String> {
        disco_runtime::learn::private_dir(&self.dir.join("pins"))
    }

    /// Writes `file` to `path` whole or not at all ([`write_whole`]).
    fn write(&self, path: &Path, file: &File) -> Result<(), String> {
        self.make_dirs()?;
        let text = serde_json::to_vec_pretty(file).map_err(|e| e.to_string())?;
        write_whole(path, &text, None)
    }
}

/// The lock file at `lock_path` (made 0600 when missing; it stays, holding nothing), locked
/// exclusively across processes (flock(2)) until the returned file is closed; waits for
/// another holder. Its directory must exist.
pub(crate) fn lock_file(lock_path: &Path) -> Result<std::fs::File, String> {
    let mut options = std::fs::OpenOptions::new();
    options.create(true).truncate(false).write(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    let file = options
        .open(lock_path)
        .map_err(|e| format!("{}: {e}", lock_path.display()))?;
    #[cfg(unix)]
    {
        use std::os::fd::AsRawFd;
        // SAFETY: flock(2) on a descriptor this function owns; no memory is involved.
        if unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX) } != 0 {
            return Err(format!(
                "{}: cannot lock: {}",
                lock_path.display(),
                std::io::Error::last_os_error()
            ));
        }
    }
    Ok(file)
}

/// Writes `bytes` to `path` whole or not at all: a temporary file beside it, of mode 0600 (or
/// of `mode` when given: a file that was there keeps its own), synced, then renamed over it.
/// The directory must exist. A file that may hold secrets (a configuration's env and headers)
/// is never readable by others, not even for the moment before a change of mode.
pub fn write_whole(
    path: &Path,
    bytes: &[u8],
    mode: Option<&std::fs::Permissions>,
) -> Result<(), String> {
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned());
    let temp = path.with_file_name(format!(
        ".{}.{}.tmp",
        name.unwrap_or_default(),
        std::process::id()
    ));
    let failed = |e: std::io::Error| {
        let _ = std::fs::remove_file(&temp);
        format!("{}: {e}", temp.display())
    };
    // A new file, never one that is there (a stale temporary file of a process of this id,
    // or one another user put there, opened with its own mode): removed, then made here.
    let _ = std::fs::remove_file(&temp);
    let mut options = std::fs::OpenOptions::new();
    options.create_new(true).write(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    let mut out = options
        .open(&temp)
        .map_err(|e| format!("{}: {e}", temp.display()))?;
    // 0600 whatever the umask made of the mode asked for.
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        out.set_permissions(std::fs::Permissions::from_mode(0o600))
            .map_err(failed)?;
    }
    out.write_all(bytes).map_err(failed)?;
    if let Some(mode) = mode {
        out.set_permissions(mode.clone()).map_err(failed)?;
    }
    out.sync_all().map_err(failed)?;
    drop(out);
    std::fs::rename(&temp, path).map_err(|e| {
        let _ = std::fs::remove_file(&temp);
        format!("{}: {e}", path.display())
    })
}

/// A held lock (see [`Pins::lock`]); closing the file releases it.
struct Lock(#[allow(dead_code)] std::fs::File);

/// Reads a pin file: `None` when there is none. Anything else wrong is an error naming the
/// file and what is wrong, never a panic: not JSON, not the shape of a pin file, or a pin
/// that is not its definition's.
fn read(path: &Path) -> Result<Option<File>, String> {
    let bytes = match std::fs::read(path) {
        Ok(bytes) => bytes,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(format!("{}: {e}", path.display())),
    };
    let broken = |what: String| {
        format!(
            "{}: not a pin file the gateway can read ({what}); restore it, or move it away to \
             approve the server's tools again as they are listed next",
            path.display()
        )
    };
    let file: File =
        serde_json::from_slice(&bytes).map_err(|e| broken(clip(&e.to_string(), 200)))?;
    // The definition is kept in its canonical form: its text is what was hashed.
    for (kind, pins) in [("approved", &file.approved), ("waiting", &file.waiting)] {
        for (name, pin) in pins {
            if pin.sha256 != hex(&sha(pin.definition.get())) {
                return Err(broken(format!(
                    "the {kind} pin of `{}` is not the hash of its definition",
                    shown(name)
                )));
            }
        }
    }
    Ok(Some(file))
}

/// What differs from `before` (the approved definition; `None` for a tool first listed after
/// its server was approved) to `after`, one line a value, by its JSON path:
/// `description: "old" -> "new"`. An upstream's text is clipped and its invisible characters
/// escaped: a diff is read in a terminal.
pub fn diff(before: Option<&Value>, after: &Value) -> String {
    let mut lines = Vec::new();
    walk("", before, Some(after), &mut lines);
    let more = lines.len().saturating_sub(MAX_DIFF_LINES);
    lines.truncate(MAX_DIFF_LINES);
    if more > 0 {
        lines.push(format!("… and {more} more"));
    }
    lines
        .iter()
        .map(|l| format!("  {l}"))
        .collect::<Vec<_>>()
        .join("\n")
}

fn walk(path: &str, before: Option<&Value>, after: Option<&Value>, out: &mut Vec<String>) {
    match (before, after) {
        (Some(Value::Object(a)), Some(Value::Object(b))) => {
            let mut keys: Vec<&String> = a.keys().chain(b.keys()).collect();
            keys.sort_unstable();
            keys.dedup();
            for key in keys {
                let key_shown = visible(&clip(key, 64));
                let at = if path.is_empty() {
                    key_shown
                } else {
                    format!("{path}.{key_shown}")
                };
                walk(&at, a.get(key), b.get(key), out);
            }
        }
        (Some(Value::Array(a)), Some(Value::Array(b))) if a.len() == b.len() => {
            for (i, (x, y)) in a.iter().zip(b).enumerate() {
                walk(&format!("{path}[{i}]"), Some(x), Some(y), out);
            }
        }
        (None, Some(Value::Object(b))) if path.is_empty() => {
            for (key, value) in b {
                walk(&visible(&clip(key, 64)), None, Some(value), out);
            }
        }
        (a, b) if a == b => {}
        (a, b) => out.push(format!("{path}: {} -> {}", value_shown(a), value_shown(b))),
    }
}

fn value_shown(value: Option<&Value>) -> String {
    match value {
        None => "(none)".into(),
        Some(v) => {
            let mut text = String::new();
            canonical(v, &mut text);
            visible(&clip(&text, MAX_DIFF_VALUE_CHARS))
        }
    }
}

#[cfg(test)]
mod tests;
