//! State on disk: files of mode 0600 in a directory made by [`crate::util::private_dir`].

use std::io::Write;
use std::path::Path;

/// Writes `bytes` to a new file `path` of mode 0600, synced.
pub(crate) fn write_private(path: &Path, bytes: &[u8]) -> Result<(), String> {
    let failed = |e: std::io::Error| format!("{}: {e}", path.display());
    let mut options = std::fs::OpenOptions::new();
    options.create_new(true).write(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    let mut out = options.open(path).map_err(failed)?;
    out.write_all(bytes).map_err(failed)?;
    out.sync_all().map_err(failed)
}
