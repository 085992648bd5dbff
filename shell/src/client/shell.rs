//! A command line (`--stdio CMD`, `--token-command CMD`) run as the platform's shell runs it:
//! `sh -c` on Unix, `cmd.exe /D /S /C` on Windows (so `npx …`, `.cmd` files and `%VARS%` work
//! as typed in a Command Prompt).

use std::process::Command;

/// The shell that runs a command line, as messages name it.
#[cfg(not(windows))]
pub const SHELL: &str = "sh";
/// The shell that runs a command line, as messages name it.
#[cfg(windows)]
pub const SHELL: &str = "cmd.exe";

/// A command that runs `line` through `sh -c`; with `replace`, the shell `exec`s it, so the
/// child is the program itself (stopping the child stops it).
#[cfg(not(windows))]
pub fn shell_command(line: &str, replace: bool) -> Command {
    let mut cmd = Command::new(SHELL);
    cmd.arg("-c");
    if replace {
        cmd.arg(format!("exec {line}"));
    } else {
        cmd.arg(line);
    }
    cmd
}

/// A command that runs `line` through `%ComSpec%` (else `cmd.exe`) as `/D /S /C "line"`: no
/// AutoRun, and the line passed on exactly as written (`/S` strips only the outer quotes).
/// cmd has no `exec`: `replace` changes nothing, and the program is cmd's child.
#[cfg(windows)]
pub fn shell_command(line: &str, _replace: bool) -> Command {
    use std::os::windows::process::CommandExt;
    let shell = std::env::var_os("ComSpec")
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| SHELL.into());
    let mut cmd = Command::new(shell);
    cmd.raw_arg(format!("/D /S /C \"{line}\""));
    cmd
}

#[cfg(all(test, not(windows)))]
mod tests {
    use super::*;

    #[test]
    fn a_line_runs_through_sh_and_exec_only_when_asked() {
        let out = shell_command("echo $((1 + 2)) && echo two", false)
            .output()
            .unwrap();
        assert_eq!(String::from_utf8_lossy(&out.stdout), "3\ntwo\n");
        let cmd = shell_command("srv --x", true);
        let args: Vec<_> = cmd.get_args().collect();
        assert_eq!(args, ["-c", "exec srv --x"]);
    }
}
