//! `--tokens FILE`: static bearer tokens for Streamable HTTP, each standing for a principal.

use std::collections::HashMap;
use std::path::Path;

use redmark_core::limits::MAX_PRINCIPAL;
use sha2::{Digest, Sha256};

/// Bearer tokens → principals, looked up by the token's SHA-256 (no early-exit comparison of
/// secrets).
pub struct Tokens {
    by_hash: HashMap<[u8; 32], Vec<u8>>,
}

impl Tokens {
    /// Loads a tokens file (TOML, one `principal = "token"` a line):
    ///
    /// ```toml
    /// alice = "a-long-random-secret"
    /// bob = "another-long-random-secret"
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
        for (principal, token) in table {
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
                .insert(Sha256::digest(token.as_bytes()).into(), p)
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

    /// The principal a bearer token stands for.
    pub fn principal(&self, token: &str) -> Option<&[u8]> {
        let h: [u8; 32] = Sha256::digest(token.as_bytes()).into();
        self.by_hash.get(&h).map(Vec::as_slice)
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
        assert_eq!(t.principal("0123456789abcdef-a"), Some(&b"http:alice"[..]));
        assert_eq!(t.principal("0123456789abcdef-b"), Some(&b"http:bob"[..]));
        assert_eq!(t.principal("nope"), None);
        assert!(Tokens::parse("alice = \"short\"").is_err());
        assert!(Tokens::parse("a = \"0123456789abcdef\"\nb = \"0123456789abcdef\"").is_err());
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
