//! State on disk: a directory of mode 0700 and files of mode 0600, for the learning state
//! and, through [`private_dir`], the gateway's.

#[cfg(feature = "learning")]
use std::io::Write;
use std::path::Path;

/// Makes `dir` and its parents when missing, each made here of mode 0700: the rule of a state
/// directory, whose files (discovery events, their secret; the gateway's pins and tokens) are
/// the owner's alone. A `dir` that is there and the user's own is made 0700 too (one made
/// before, or by hand, open to others); one of another user is left as it is.
pub fn private_dir(dir: &Path) -> Result<(), String> {
    let failed = |e: std::io::Error| format!("{}: {e}", dir.display());
    if dir.is_dir() {
        #[cfg(unix)]
        {
            use std::os::unix::fs::{MetadataExt, PermissionsExt};
            let meta = std::fs::metadata(dir).map_err(failed)?;
            let mine = meta.uid() == rustix::process::geteuid().as_raw();
            if mine && meta.permissions().mode() & 0o077 != 0 {
                std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700))
                    .map_err(failed)?;
            }
        }
        return Ok(());
    }
    let mut builder = std::fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
    builder.create(dir).map_err(failed)
}

/// Writes `bytes` to a new file `path` of mode 0600, synced.
#[cfg(feature = "learning")]
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
