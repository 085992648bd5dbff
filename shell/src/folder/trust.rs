//! Whom a process that finds its store in use talks to: only an owner of its own user, by the
//! store file's owner (the file whose lock makes the owner) and by the peer credentials of the
//! folder's socket (`SO_PEERCRED` on Linux, `getpeereid` on macOS and the BSDs); anything else
//! is refused before a line is sent.

use std::io;
use std::os::fd::AsFd;
use std::os::unix::fs::MetadataExt;
use std::path::Path;

use crate::store::redb::STORE_FILE;

/// This process's (effective) user.
pub fn my_uid() -> u32 {
    nix::unistd::geteuid().as_raw()
}

/// The user of the process at the other end of the Unix socket `s`.
pub fn peer_uid(s: &impl AsFd) -> io::Result<u32> {
    #[cfg(any(target_os = "linux", target_os = "android"))]
    {
        use nix::sys::socket::{getsockopt, sockopt::PeerCredentials};
        Ok(getsockopt(s, PeerCredentials)?.uid())
    }
    #[cfg(any(
        target_vendor = "apple",
        target_os = "freebsd",
        target_os = "dragonfly",
        target_os = "netbsd",
        target_os = "openbsd"
    ))]
    {
        Ok(nix::unistd::getpeereid(s)?.0.as_raw())
    }
    #[cfg(not(any(
        target_os = "linux",
        target_os = "android",
        target_vendor = "apple",
        target_os = "freebsd",
        target_os = "dragonfly",
        target_os = "netbsd",
        target_os = "openbsd"
    )))]
    {
        let _ = s;
        Err(io::Error::new(
            io::ErrorKind::Unsupported,
            "this platform does not say who is at the other end of a Unix socket",
        ))
    }
}

/// Refuses an owner of store folder `at`, reached on `s`, that is not user `me`: the store
/// file must be `me`'s and so must the process listening on the folder's socket.
pub fn check_owner(at: &Path, s: &impl AsFd, me: u32) -> Result<(), String> {
    check_store_file(at, me)?;
    check_peer(at, peer_uid(s), me)
}

/// Refuses a store file (the one whose lock makes the owner) that is not user `me`'s.
fn check_store_file(at: &Path, me: u32) -> Result<(), String> {
    let store = at.join(STORE_FILE);
    let uid = std::fs::metadata(&store)
        .map_err(|e| format!("cannot read {}: {e}", store.display()))?
        .uid();
    if uid != me {
        return Err(refusal(
            &store.display().to_string(),
            "belongs to",
            uid,
            me,
            at,
        ));
    }
    Ok(())
}

/// Refuses the process on the folder's socket unless its user, `peer`, is `me`.
fn check_peer(at: &Path, peer: io::Result<u32>, me: u32) -> Result<(), String> {
    let sock = super::socket_path(at);
    let peer = peer.map_err(|e| {
        format!(
            "refusing to pass messages through {}: cannot tell which user listens on it ({e})",
            sock.display()
        )
    })?;
    if peer != me {
        let what = format!("the process listening on {}", sock.display());
        return Err(refusal(&what, "runs as", peer, me, at));
    }
    Ok(())
}

/// The one-line refusal of an owner whose `what` `is` user `uid`, not `me`.
fn refusal(what: &str, is: &str, uid: u32, me: u32, at: &Path) -> String {
    format!(
        "refusing to pass messages to the process holding the store in {dir}: {what} {is} uid \
         {uid}, not this process's user (uid {me}), so another user may be posing as its \
         owner; stop that process, and make the folder yours alone (owned by you, `chmod 700 \
         {dir}`)",
        dir = at.display()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_socket_of_our_own_is_ours() {
        let (a, _b) = std::os::unix::net::UnixStream::pair().unwrap();
        assert_eq!(peer_uid(&a).unwrap(), my_uid());
    }

    #[test]
    fn an_owner_of_another_user_is_refused_in_one_line() {
        let at = Path::new("/data");
        assert!(check_peer(at, Ok(1000), 1000).is_ok());
        let e = check_peer(at, Ok(65534), 1000).unwrap_err();
        assert!(
            e.contains("/data/redmark.sock runs as uid 65534")
                && e.contains("(uid 1000)")
                && e.contains("chmod 700 /data")
                && !e.contains('\n'),
            "{e}"
        );
        let unknown = io::Error::new(io::ErrorKind::Unsupported, "no way to tell");
        let e = check_peer(at, Err(unknown), 1000).unwrap_err();
        assert!(
            e.contains("cannot tell which user") && e.contains("no way to tell"),
            "{e}"
        );
    }

    #[test]
    fn a_store_file_of_another_user_is_refused() {
        let dir = std::env::temp_dir().join(format!("redmark-trust-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        assert!(
            check_store_file(&dir, my_uid()).is_err(),
            "no store file: refused"
        );
        std::fs::write(dir.join(STORE_FILE), b"").unwrap();
        assert!(check_store_file(&dir, my_uid()).is_ok());
        let other = my_uid().wrapping_add(1);
        let e = check_store_file(&dir, other).unwrap_err();
        assert!(
            e.contains(&format!("bookings.redb belongs to uid {}", my_uid())),
            "{e}"
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
