use super::private_dir;

/// A directory of the test's own under the system's temporary one, not there yet (the
/// learning store's tests use it too).
pub(crate) fn temp_dir(tag: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!(
        "disco-util-{tag}-{}-{}",
        std::process::id(),
        fastrand::u64(..)
    ));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

#[cfg(unix)]
pub(crate) fn unix_mode(p: &std::path::Path) -> u32 {
    use std::os::unix::fs::PermissionsExt;
    std::fs::symlink_metadata(p).unwrap().permissions().mode() & 0o777
}

/// Each directory made here, parents included, is 0700, whatever the umask leaves.
#[cfg(unix)]
#[test]
fn a_missing_directory_and_its_parents_are_made_0700() {
    let top = temp_dir("made");
    let dir = top.join("a").join("b");
    private_dir(&dir).unwrap();
    for d in [&top, &top.join("a"), &dir] {
        assert_eq!(unix_mode(d), 0o700, "{}", d.display());
    }
    std::fs::remove_dir_all(&top).unwrap();
}

/// A directory of the user's that is there with any access for group or others (every
/// combination of those six bits) is made 0700; one that is the owner's alone keeps its
/// mode.
#[cfg(unix)]
#[test]
fn an_existing_directory_open_to_others_is_made_0700() {
    use std::os::unix::fs::PermissionsExt;
    let dir = temp_dir("tighten");
    std::fs::create_dir_all(&dir).unwrap();
    for others in 0..=0o077 {
        let before = 0o700 | others;
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(before)).unwrap();
        private_dir(&dir).unwrap();
        assert_eq!(unix_mode(&dir), 0o700, "{before:o}");
    }
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o500)).unwrap();
    private_dir(&dir).unwrap();
    assert_eq!(
        unix_mode(&dir),
        0o500,
        "a directory the owner's alone is left as it is"
    );
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o700)).unwrap();
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A state directory that is a symlink is used where it points, and its target, open to
/// others, keeps its mode: nothing is changed through a link. A link to no directory, and a
/// file, are refused.
#[cfg(unix)]
#[test]
fn a_symlink_is_left_alone() {
    use std::os::unix::fs::PermissionsExt;
    let top = temp_dir("link");
    let target = top.join("target");
    std::fs::create_dir_all(&target).unwrap();
    std::fs::set_permissions(&target, std::fs::Permissions::from_mode(0o755)).unwrap();
    let link = top.join("link");
    std::os::unix::fs::symlink(&target, &link).unwrap();
    private_dir(&link).unwrap();
    assert_eq!(unix_mode(&target), 0o755);
    assert!(std::fs::symlink_metadata(&link).unwrap().is_symlink());

    let dangling = top.join("dangling");
    std::os::unix::fs::symlink(top.join("nowhere"), &dangling).unwrap();
    let e = private_dir(&dangling).unwrap_err();
    assert!(e.contains("a symlink to no directory"), "{e}");
    assert!(!top.join("nowhere").exists());

    let file = top.join("file");
    std::fs::write(&file, b"").unwrap();
    let e = private_dir(&file).unwrap_err();
    assert!(e.contains("not a directory"), "{e}");
    std::fs::remove_dir_all(&top).unwrap();
}

/// A directory of another user (here `nobody`, 65534) open to others is left as it is. Only
/// root can give a directory away, so the test says so and passes as any other user.
#[cfg(unix)]
#[test]
fn another_users_directory_is_left_alone() {
    use std::os::unix::fs::PermissionsExt;
    if !rustix::process::geteuid().is_root() {
        eprintln!("skipped: only root can make a directory of another user");
        return;
    }
    let dir = temp_dir("theirs");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755)).unwrap();
    std::os::unix::fs::chown(&dir, Some(65534), Some(65534)).unwrap();
    private_dir(&dir).unwrap();
    assert_eq!(unix_mode(&dir), 0o755);
    std::fs::remove_dir_all(&dir).unwrap();
}
