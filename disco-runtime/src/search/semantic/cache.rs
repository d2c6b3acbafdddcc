//! Tool vectors kept on disk between runs: one file per model, holding a vector per tool text,
//! keyed by the text's hash. A transformer takes seconds to minutes for a large catalog; with
//! the file, a restart or a reload embeds only the texts it has not seen.
//!
//! The file is rewritten whole, through a new file renamed over it ([`write`]), whenever a
//! catalog embedded a text it did not hold: appending would need the checksum at the end
//! rewritten anyway, and a catalog embeds new texts only at start-up and after a change.
//!
//! The file is trusted only whole: it names its model and its dimension, and ends with the
//! sha256 of everything before it; a file that is short, foreign (another model, another
//! format), corrupt or holds a non-finite value is ignored and written anew.
//!
//! Layout (little-endian): `DISCOVEC`, format `u32`, the model id's length `u32` and bytes,
//! the dimension `u32`, the count `u64`, then per entry the text's 16-byte key and `dim` f32,
//! then the sha256 of all of the above.

use std::collections::HashMap;
use std::io::Write;
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

const MAGIC: &[u8; 8] = b"DISCOVEC";
const FORMAT: u32 = 1;
/// A file keeps at most this many vectors: those of the catalog that wrote it first, then
/// those of earlier catalogs (a scoped caller's tools, a tool before its text changed).
const MAX_ENTRIES: usize = 200_000;

/// A tool text's key in the file: the first 16 bytes of its sha256.
pub type TextKey = [u8; 16];

/// The key of `text`.
#[doc(hidden)]
pub fn text_key(text: &str) -> TextKey {
    let d = Sha256::digest(text.as_bytes());
    let mut k = [0u8; 16];
    k.copy_from_slice(&d[..16]);
    k
}

/// Where the tools' semantic vectors are kept between runs: one file per model
/// (`vectors-<model id>.bin`), rewritten whole through a new file renamed over it whenever a
/// catalog embedded texts it did not hold.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum VectorCache {
    /// In `disco/` under the user's cache directory (`$XDG_CACHE_HOME`, else `~/.cache`; on
    /// macOS `~/Library/Caches`; on Windows `%LOCALAPPDATA%`); nowhere when there is none.
    #[default]
    UserDir,
    /// In this directory (created when missing).
    Dir(PathBuf),
    /// Not on disk: every start embeds every tool.
    Off,
}

impl VectorCache {
    /// The directory of the files, if any.
    pub(crate) fn dir(&self) -> Option<PathBuf> {
        match self {
            VectorCache::Dir(d) => Some(d.clone()),
            VectorCache::Off => None,
            // By hand rather than with a crate: three environment variables, and no crate
            // for it is in the dependency graph.
            VectorCache::UserDir => {
                let env = |k: &str| {
                    std::env::var_os(k)
                        .filter(|v| !v.is_empty())
                        .map(PathBuf::from)
                };
                let base = if cfg!(windows) {
                    env("LOCALAPPDATA")
                } else if cfg!(target_os = "macos") {
                    env("HOME").map(|h| h.join("Library/Caches"))
                } else {
                    env("XDG_CACHE_HOME").or_else(|| env("HOME").map(|h| h.join(".cache")))
                };
                base.map(|b| b.join("disco"))
            }
        }
    }
}

/// The file of `model_id` in `dir`.
pub(crate) fn file_of(dir: &Path, model_id: &str) -> PathBuf {
    let short: String = model_id.chars().take(16).collect();
    dir.join(format!("vectors-{short}.bin"))
}

/// The vectors in `path` for `model_id` at `dim`; empty (with the reason logged) when the
/// file is missing, foreign or damaged.
pub(crate) fn read(path: &Path, model_id: &str, dim: usize) -> HashMap<TextKey, Vec<f32>> {
    let bytes = match std::fs::read(path) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return HashMap::new(),
        Err(e) => {
            tracing::warn!(file = %path.display(), error = %e, "cannot read the vector cache; ignored");
            return HashMap::new();
        }
    };
    match parse(&bytes, model_id, dim) {
        Ok(map) => map,
        Err(why) => {
            tracing::warn!(file = %path.display(), why, "the vector cache is ignored and will be written anew");
            HashMap::new()
        }
    }
}

/// The entries of a whole file, or why it is refused.
pub(crate) fn parse(
    bytes: &[u8],
    model_id: &str,
    dim: usize,
) -> Result<HashMap<TextKey, Vec<f32>>, &'static str> {
    if bytes.len() < 32 {
        return Err("shorter than its checksum");
    }
    let (body, sum) = bytes.split_at(bytes.len() - 32);
    if Sha256::digest(body).as_slice() != sum {
        return Err("its checksum does not match");
    }
    let mut r = Reader(body);
    if r.take(8)? != MAGIC {
        return Err("not a vector cache");
    }
    if r.u32()? != FORMAT {
        return Err("another format");
    }
    let id_len = r.u32()? as usize;
    if r.take(id_len)? != model_id.as_bytes() {
        return Err("another model's");
    }
    if r.u32()? as usize != dim {
        return Err("another dimension");
    }
    let count = r.u64()?;
    let entry = 16 + dim * 4;
    if count.checked_mul(entry as u64) != Some(r.0.len() as u64) {
        return Err("its length does not match its count");
    }
    let mut map = HashMap::with_capacity(count as usize);
    for chunk in r.0.chunks_exact(entry) {
        let mut key = [0u8; 16];
        key.copy_from_slice(&chunk[..16]);
        let v: Vec<f32> = chunk[16..]
            .chunks_exact(4)
            .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
            .collect();
        if v.iter().any(|x| !x.is_finite()) {
            return Err("a vector holds a value that is not finite");
        }
        map.insert(key, v);
    }
    Ok(map)
}

struct Reader<'a>(&'a [u8]);

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8], &'static str> {
        if self.0.len() < n {
            return Err("cut short");
        }
        let (head, rest) = self.0.split_at(n);
        self.0 = rest;
        Ok(head)
    }
    fn u32(&mut self) -> Result<u32, &'static str> {
        let b = self.take(4)?;
        Ok(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }
    fn u64(&mut self) -> Result<u64, &'static str> {
        let b = self.take(8)?;
        let mut a = [0u8; 8];
        a.copy_from_slice(b);
        Ok(u64::from_le_bytes(a))
    }
}

/// The bytes of a file holding `entries` (first) and then `older` ones not among them.
pub(crate) fn serialize<'a>(
    model_id: &str,
    dim: usize,
    entries: impl Iterator<Item = (&'a TextKey, &'a [f32])>,
    older: &HashMap<TextKey, Vec<f32>>,
) -> Vec<u8> {
    let mut seen: std::collections::HashSet<TextKey> = std::collections::HashSet::new();
    let mut body: Vec<u8> = Vec::new();
    let mut count = 0u64;
    let mut put = |key: &TextKey, v: &[f32], body: &mut Vec<u8>| {
        if v.len() != dim || count as usize >= MAX_ENTRIES || !seen.insert(*key) {
            return;
        }
        body.extend_from_slice(key);
        for x in v {
            body.extend_from_slice(&x.to_le_bytes());
        }
        count += 1;
    };
    for (k, v) in entries {
        put(k, v, &mut body);
    }
    for (k, v) in older {
        put(k, v, &mut body);
    }
    let mut out = Vec::with_capacity(body.len() + 64 + model_id.len());
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&FORMAT.to_le_bytes());
    out.extend_from_slice(&(model_id.len() as u32).to_le_bytes());
    out.extend_from_slice(model_id.as_bytes());
    out.extend_from_slice(&(dim as u32).to_le_bytes());
    out.extend_from_slice(&count.to_le_bytes());
    out.extend_from_slice(&body);
    let sum = Sha256::digest(&out);
    out.extend_from_slice(&sum);
    out
}

/// The vectors of any texts kept in `path` for `model_id` at `dim`, by [`text_key`]: the
/// file format of the tools' cache, for a caller that keeps texts of its own (the evaluation
/// harness keeps its queries' vectors this way). Empty when the file is missing, foreign or
/// damaged, as [`read`] says.
#[doc(hidden)]
pub fn read_texts(path: &Path, model_id: &str, dim: usize) -> HashMap<TextKey, Vec<f32>> {
    read(path, model_id, dim)
}

/// Writes `vectors` to `path` for `model_id` at `dim`, as the tools' cache writes its file
/// (whole, checksummed, renamed over the old one): the counterpart of [`read_texts`].
#[doc(hidden)]
pub fn write_texts(
    path: &Path,
    model_id: &str,
    dim: usize,
    vectors: &HashMap<TextKey, Vec<f32>>,
) -> std::io::Result<()> {
    let bytes = serialize(
        model_id,
        dim,
        vectors.iter().map(|(k, v)| (k, v.as_slice())),
        &HashMap::new(),
    );
    write(path, &bytes)
}

/// Writes `bytes` to `path` through a new file beside it, renamed over it: a reader sees the
/// old file or the new one, never a part, and of several writers at once (threads, processes,
/// containers sharing the directory) the last rename wins whole. The temporary file is made
/// by `tempfile`, under a random name and only if nothing has that name (`O_EXCL`): an
/// existing file or link is never followed, truncated or reused; it is removed on failure.
pub(crate) fn write(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    std::fs::create_dir_all(dir)?;
    let prefix = match path.file_name() {
        Some(name) => format!(".{}.", name.to_string_lossy()),
        None => ".vectors.".to_string(),
    };
    let mut tmp = tempfile::Builder::new()
        .prefix(&prefix)
        .suffix(".tmp")
        .tempfile_in(dir)?;
    tmp.write_all(bytes)?;
    tmp.as_file().sync_all()?;
    tmp.persist(path).map_err(|e| e.error)?;
    Ok(())
}
