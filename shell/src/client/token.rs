//! The access token `redmark call --url` presents: `--token`, `REDMARK_TOKEN`, the output of
//! `--token-command`, or one fetched by the client-credentials grant (`--client-id` with
//! `--client-secret` or `REDMARK_CLIENT_SECRET`) from the issuer the server's metadata names.

use std::process::Stdio;

use super::args::ServerArgs;
use super::grant;
use super::shell::{shell_command, SHELL};
use super::trace::trace;
use super::transport::TransportError;

/// The environment variable holding a token when `--token` is absent.
pub const TOKEN_ENV: &str = "REDMARK_TOKEN";
/// The environment variable holding the client secret when `--client-secret` is absent.
pub const SECRET_ENV: &str = "REDMARK_CLIENT_SECRET";
/// Longest token a command may print.
pub const MAX_TOKEN_OUTPUT: usize = 16 * 1024;

/// The bearer token to send to `url`, if any.
pub fn bearer(s: &ServerArgs, url: &str) -> Result<Option<String>, TransportError> {
    let io = TransportError::Io;
    if let Some(t) = &s.token {
        return Ok(Some(t.trim().to_owned()));
    }
    if let Some(cmd) = &s.token_command {
        return run_command(cmd).map(Some).map_err(io);
    }
    if let Some(id) = &s.client_id {
        let secret = match &s.client_secret {
            Some(s) => s.clone(),
            None => std::env::var(SECRET_ENV).map_err(|_| {
                io(format!(
                    "--client-id needs --client-secret or {SECRET_ENV} in the environment"
                ))
            })?,
        };
        let creds = grant::Credentials {
            id,
            secret: &secret,
            scope: s.scope.as_deref(),
        };
        trace(" ", &format!("client-credentials grant for {url}"));
        return grant::client_credentials(url, &creds)
            .map(Some)
            .map_err(|e| io(format!("getting a token: {e}")));
    }
    Ok(std::env::var(TOKEN_ENV)
        .ok()
        .map(|t| t.trim().to_owned())
        .filter(|t| !t.is_empty()))
}

/// Runs `cmd` through the platform's shell (`sh -c`, `cmd.exe /C`: client/shell.rs) and takes
/// its first line of output as the token.
fn run_command(cmd: &str) -> Result<String, String> {
    let out = shell_command(cmd, false)
        .stdin(Stdio::null())
        .stderr(Stdio::inherit())
        .output()
        .map_err(|e| format!("--token-command: cannot run {SHELL}: {e}"))?;
    if !out.status.success() {
        return Err(format!("--token-command {cmd:?} failed ({})", out.status));
    }
    if out.stdout.len() > MAX_TOKEN_OUTPUT {
        return Err(format!(
            "--token-command printed more than {MAX_TOKEN_OUTPUT} bytes"
        ));
    }
    let text = String::from_utf8_lossy(&out.stdout);
    let token = text.lines().next().unwrap_or("").trim();
    if token.is_empty() {
        return Err(format!("--token-command {cmd:?} printed no token"));
    }
    Ok(token.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_token_command_gives_its_first_line() {
        assert_eq!(run_command("printf 'abc\\nrest'").unwrap(), "abc");
        assert!(run_command("true")
            .unwrap_err()
            .contains("printed no token"));
        assert!(run_command("exit 3").unwrap_err().contains("failed"));
    }
}
