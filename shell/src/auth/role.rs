//! A caller's role and transport carried with its principal: the transports seat a principal
//! ([`seat`]: a header no authenticated principal starts with), and the host reads it back into
//! the engine's [`Access`] in one place ([`unseat`], called by `host::Cx::new`).

use redmark_core::{Access, Via};

/// Starts a seated principal: no principal the transports authenticate starts with a NUL byte
/// (`http:NAME`, an OAuth principal, `local`, the anonymous one).
const SEATED: &[u8] = b"\0seat";
/// Bytes of the header: [`SEATED`], the role, the transport.
const HEADER: usize = SEATED.len() + 2;

/// Default OAuth scope of an operator (`--operator-scope`).
pub const DEFAULT_OPERATOR_SCOPE: &str = "rooms:operate";

/// `principal` calling over `via`, an operator or not, as the host is handed it.
pub fn seat(principal: &[u8], operator: bool, via: Via) -> Vec<u8> {
    let mut p = Vec::with_capacity(HEADER + principal.len());
    p.extend_from_slice(SEATED);
    p.push(operator.into());
    p.push(via.code());
    p.extend_from_slice(principal);
    p
}

/// `seated` moved to another transport (a 2025-11-25 session's lines: [`Via::Legacy`]),
/// keeping its role; a principal not seated stays a plain user's.
pub fn reseat(seated: &[u8], via: Via) -> Vec<u8> {
    let (access, principal) = unseat(seated);
    seat(principal, access.operator, via)
}

/// The caller's access and its principal (the bytes its bookings are held by). A principal
/// not seated is a plain user's over an unsaid transport. The instance is this process's id.
pub fn unseat(seated: &[u8]) -> (Access, &[u8]) {
    let instance = std::process::id();
    match seated.strip_prefix(SEATED) {
        Some([role, via, principal @ ..]) => (
            Access {
                operator: *role == 1,
                via: Via::from_code(*via),
                instance,
            },
            principal,
        ),
        _ => (
            Access {
                instance,
                ..Access::USER
            },
            seated,
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_seated_principal_says_its_role_and_transport_and_holds_as_itself() {
        let op = seat(b"http:olga", true, Via::Http);
        let (access, principal) = unseat(&op);
        assert!(access.operator);
        assert_eq!(access.via, Via::Http);
        assert_eq!(principal, b"http:olga");
        let legacy = reseat(&op, Via::Legacy);
        let (access, principal) = unseat(&legacy);
        assert_eq!((access.operator, access.via), (true, Via::Legacy));
        assert_eq!(principal, b"http:olga");
        // Not seated: a plain user, its bytes as they are.
        let (access, principal) = unseat(b"local");
        assert_eq!((access.operator, access.via), (false, Via::Unknown));
        assert_eq!(principal, b"local");
        let (access, _) = unseat(&seat(b"local", false, Via::Tcp));
        assert_eq!((access.operator, access.via), (false, Via::Tcp));
    }
}
