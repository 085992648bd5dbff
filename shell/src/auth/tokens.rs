//! `--tokens FILE`: static bearer tokens for Streamable HTTP, each standing for a principal.

use std::collections::HashMap;
use std::path::Path;

use redmark_core::limits::MAX_PRINCIPAL;
use sha2::{Digest, Sha256};

/// Bearer tokens → principals (and whether each is an operator's), looked up by the token's
/// SHA-256 (no early-exit comparison of secrets).
pub struct Tokens {
    by_hash: HashMap<[u8; 32], (Vec<u8>, bool)>,
}

/// The table of a tokens file whose principals are operators.
pub const OPERATORS_TABLE: &str = "operators";

impl Tokens {
    /// Loads a tokens file (TOML, one `principal = "token"` a line; those under `[operators]`
    /// are the floor's operators):
    ///
    /// ```toml
    /// alice = "a-long-random-secret"
    /// bob = "another-long-random-secret"
    ///
    /// [operators]
    /// olga = "yet-another-long-random-secret"
    /// ```
    pub fn load(path: &Path) -> Result<Tokens, String> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
        if let Ok(Some(_)) = crate::platform::files::shared_mode(path) {
            tracing::warn!(
                "{} is readable by others; run chmod 600 on it",
                path.display()
            );
        }
        Self::parse(&text).map_err(|e| format!("{}: {e}", path.display()))
    }

    fn parse(text: &str) -> Result<Tokens, String> {
        // A generic table first, and the types checked by hand: the parser's messages name no
        // values, while serde's "invalid type" messages would quote the (secret) value.
        let table: toml::Table = toml::from_str(text).map_err(|e| located(text, &e))?;
        let mut by_hash = HashMap::new();
        let mut entries: Vec<(String, toml::Value, bool)> = Vec::new();
        for (principal, token) in table {
            match token {
                toml::Value::Table(ops) if principal == OPERATORS_TABLE => {
                    entries.extend(ops.into_iter().map(|(p, t)| (p, t, true)));
                }
                token => entries.push((principal, token, false)),
            }
        }
        for (principal, token, operator) in entries {
            let Some(token) = token.as_str() else {
                return Err(format!(
                    "the token of {principal:?} is not a string (write principal = \"token\")"
                ));
            };
            if token.len() < 16 {
                return Err(format!(
                    "the token of {principal:?} is shorter than 16 characters"
                ));
            }
            if principal.is_empty() || principal.len() + 5 > MAX_PRINCIPAL {
                return Err(format!(
                    "principal {principal:?}: 1 to {} bytes",
                    MAX_PRINCIPAL - 5
                ));
            }
            let p = format!("http:{principal}").into_bytes();
            if by_hash
                .insert(Sha256::digest(token.as_bytes()).into(), (p, operator))
                .is_some()
            {
                return Err(format!("two principals share the token of {principal:?}"));
            }
        }
        if by_hash.is_empty() {
            return Err("no tokens".into());
        }
        Ok(Tokens { by_hash })
    }

    /// The principal a bearer token stands for, and whether it is an operator.
    pub fn caller(&self, token: &str) -> Option<(&[u8], bool)> {
        let h: [u8; 32] = Sha256::digest(token.as_bytes()).into();
        self.by_hash.get(&h).map(|(p, op)| (p.as_slice(), *op))
    }

    /// The SHA-256 of each token standing for `principal` (what its calendar feed keys are
    /// bound to: a changed token revokes them).
    pub fn hashes_of<'a>(&'a self, principal: &'a [u8]) -> impl Iterator<Item = &'a [u8]> + 'a {
        let theirs = move |(h, (p, _)): (&'a [u8; 32], &'a (Vec<u8>, bool))| {
            (p.as_slice() == principal).then_some(h.as_slice())
        };
        self.by_hash.iter().filter_map(theirs)
    }
}

/// A TOML error as `line N: message`, without the snippet of the file `toml` quotes by
/// default (in a tokens file, that snippet is a secret).
pub(crate) fn located(text: &str, e: &toml::de::Error) -> String {
    let message = e.message().trim_end();
    match e.span() {
        Some(span) => {
            let end = span.start.min(text.len());
            let line = 1 + text.as_bytes()[..end]
                .iter()
                .filter(|b| **b == b'\n')
                .count();
            format!("line {line}: {message}")
        }
        None => message.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_map_to_principals() {
        let t = Tokens::parse("alice = \"0123456789abcdef-a\"\nbob = \"0123456789abcdef-b\"\n")
            .unwrap();
        assert_eq!(
            t.caller("0123456789abcdef-a"),
            Some((&b"http:alice"[..], false))
        );
        assert_eq!(
            t.caller("0123456789abcdef-b"),
            Some((&b"http:bob"[..], false))
        );
        assert_eq!(t.caller("nope"), None);
        assert!(Tokens::parse("alice = \"short\"").is_err());
        assert!(Tokens::parse("a = \"0123456789abcdef\"\nb = \"0123456789abcdef\"").is_err());
    }

    #[test]
    fn tokens_under_operators_are_operators_and_old_files_stay_valid() {
        let t = Tokens::parse(
            "alice = \"0123456789abcdef-a\"\n[operators]\nolga = \"0123456789abcdef-o\"\n",
        )
        .unwrap();
        assert_eq!(
            t.caller("0123456789abcdef-a"),
            Some((&b"http:alice"[..], false))
        );
        assert_eq!(
            t.caller("0123456789abcdef-o"),
            Some((&b"http:olga"[..], true))
        );
        // A principal named "operators" with a token of its own is still a plain user.
        let t = Tokens::parse("operators = \"0123456789abcdef-p\"\n").unwrap();
        assert_eq!(
            t.caller("0123456789abcdef-p"),
            Some((&b"http:operators"[..], false))
        );
        let e = Tokens::parse("[operators]\nolga = \"short\"\n")
            .err()
            .unwrap();
        assert!(e.contains("olga"), "{e}");
    }

    #[test]
    fn a_malformed_tokens_file_never_echoes_a_token() {
        let secret = "s3cr3t-t0ken-0123456789";
        for text in [
            format!("alice = \"0123456789abcdef-a\"\nbob = \"{secret}\n"),
            format!("alice = \"0123456789abcdef-a\"\nbob = {secret}\n"),
            format!("alice = \"0123456789abcdef-a\"\nbob = \"{secret}\" junk\n"),
            format!("alice = \"0123456789abcdef-a\"\nbob = [\"{secret}\"]\n"),
            "alice = \"0123456789abcdef-a\"\nbob = 1234567890123456789\n".to_string(),
        ] {
            let e = Tokens::parse(&text).err().expect("an error");
            assert!(!e.contains(secret), "{e}");
            assert!(!e.contains("1234567890123456789"), "{e}");
            assert!(!e.contains("0123456789abcdef-a"), "{e}");
            assert!(e.contains("line 2") || e.contains("\"bob\""), "{e}");
        }
    }
}
