//! The learning state's files: a directory of mode 0700 and files of mode 0600, as the
//! gateway makes its other state.

use std::io::Write;
use std::path::Path;

/// Makes `dir` (and its parents) with mode 0700 when it does not exist.
pub(crate) fn make_dir(dir: &Path) -> Result<(), String> {
    if dir.is_dir() {
        return Ok(());
    }
    let mut builder = std::fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
    builder
        .create(dir)
        .map_err(|e| format!("{}: {e}", dir.display()))
}

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
