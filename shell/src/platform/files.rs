//! Files only their owner may read: the sealing keys, the store, the store's id marker and the
//! data folder. On Unix by mode (0600 files, a 0700 folder, and a key file others may read or a
//! folder others may write to is refused); on Windows a file inherits its folder's access list (the data folder is under the
//! user's own profile by default), and no mode is checked.

use std::fs;
use std::io;
use std::path::Path;

/// Options that create a file only its owner may read and write (mode 0600 on Unix).
pub fn private_file() -> fs::OpenOptions {
    #[cfg_attr(not(unix), allow(unused_mut))]
    let mut o = fs::OpenOptions::new();
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut o, 0o600);
    o
}

/// Creates `dir` and its parents, only its owner may enter it (mode 0700 on Unix).
pub fn create_private_dir(dir: &Path) -> io::Result<()> {
    let mut b = fs::DirBuilder::new();
    b.recursive(true);
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut b, 0o700);
    b.create(dir)
}

/// Makes an existing file at `path` only its owner's (mode 0600 on Unix; nothing elsewhere).
pub fn make_private(path: &Path) -> io::Result<()> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        fs::set_permissions(path, fs::Permissions::from_mode(0o600))
    }
    #[cfg(not(unix))]
    {
        let _ = path;
        Ok(())
    }
}

/// The permission bits group and others have on `path` (`Some(mode)` when any is set: the file
/// is not private); always `None` where there are no modes.
pub fn shared_mode(path: &Path) -> io::Result<Option<u32>> {
    let m = fs::metadata(path)?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = m.permissions().mode() & 0o777;
        Ok((mode & 0o077 != 0).then_some(mode))
    }
    #[cfg(not(unix))]
    {
        let _ = m;
        Ok(None)
    }
}

/// The permission bits of `path` when group or others may write to it (`Some(mode)`, with the
/// sticky, setuid and setgid bits); always `None` where there are no modes.
pub fn others_may_write(path: &Path) -> io::Result<Option<u32>> {
    let m = fs::metadata(path)?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = m.permissions().mode() & 0o7777;
        Ok((mode & 0o022 != 0).then_some(mode))
    }
    #[cfg(not(unix))]
    {
        let _ = m;
        Ok(None)
    }
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn private_files_and_folders_are_the_owners_alone() {
        let dir = std::env::temp_dir().join(format!("redmark-private-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        create_private_dir(&dir.join("inner")).unwrap();
        let mode = |p: &Path| fs::metadata(p).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode(&dir.join("inner")), 0o700);
        let file = dir.join("inner/f");
        private_file()
            .write(true)
            .create_new(true)
            .open(&file)
            .unwrap();
        assert_eq!(mode(&file), 0o600);
        assert_eq!(shared_mode(&file).unwrap(), None);
        fs::set_permissions(&file, fs::Permissions::from_mode(0o640)).unwrap();
        assert_eq!(shared_mode(&file).unwrap(), Some(0o640));
        make_private(&file).unwrap();
        assert_eq!(mode(&file), 0o600);
        let inner = dir.join("inner");
        assert_eq!(others_may_write(&inner).unwrap(), None);
        for (set, loose) in [(0o755, None), (0o775, Some(0o775)), (0o1777, Some(0o1777))] {
            fs::set_permissions(&inner, fs::Permissions::from_mode(set)).unwrap();
            assert_eq!(others_may_write(&inner).unwrap(), loose, "{set:o}");
        }
        fs::remove_dir_all(&dir).unwrap();
    }
}
