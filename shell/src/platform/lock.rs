//! The exclusive lock on the store file, the one redb takes (`flock` on Unix, `LockFileEx` on
//! Windows; std's [`std::fs::File::try_lock`] is either), taken without waiting.

use std::fs::{File, TryLockError};
use std::io;

/// Takes the exclusive lock on `f` without waiting: `Ok(false)` if another holder has it. The
/// lock goes with `f`.
pub fn try_lock_exclusive(f: &File) -> io::Result<bool> {
    match f.try_lock() {
        Ok(()) => Ok(true),
        Err(TryLockError::WouldBlock) => Ok(false),
        Err(TryLockError::Error(e)) => Err(e),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_second_holder_is_refused_until_the_first_lets_go() {
        let path = std::env::temp_dir().join(format!("redmark-lock-{}", std::process::id()));
        let first = File::create(&path).unwrap();
        assert!(try_lock_exclusive(&first).unwrap());
        let second = File::open(&path).unwrap();
        assert!(!try_lock_exclusive(&second).unwrap());
        drop(first);
        assert!(try_lock_exclusive(&second).unwrap());
        drop(second);
        std::fs::remove_file(&path).unwrap();
    }
}
