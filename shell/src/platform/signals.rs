//! The requests to stop that `serve` listens for: SIGINT and SIGTERM on Unix; Ctrl-C, Ctrl-Break
//! and the console window closing on Windows. Installed before anything is served (a signal
//! that arrives before its handler would kill the process instead of stopping it cleanly).

use tokio_util::sync::CancellationToken;

/// The stop requests, listened for.
pub struct Signals {
    #[cfg(unix)]
    int: Option<tokio::signal::unix::Signal>,
    #[cfg(unix)]
    term: Option<tokio::signal::unix::Signal>,
    #[cfg(windows)]
    ctrl_c: Option<tokio::signal::windows::CtrlC>,
    #[cfg(windows)]
    ctrl_break: Option<tokio::signal::windows::CtrlBreak>,
    #[cfg(windows)]
    close: Option<tokio::signal::windows::CtrlClose>,
}

/// Waits for the next delivery of `s`, forever if it could not be installed.
macro_rules! next {
    ($s:expr) => {
        async {
            match $s.as_mut() {
                Some(s) => {
                    s.recv().await;
                }
                None => std::future::pending::<()>().await,
            }
        }
    };
}

impl Signals {
    /// Starts listening (inside a tokio runtime).
    pub fn install() -> Self {
        #[cfg(unix)]
        {
            use tokio::signal::unix::{signal, SignalKind};
            Signals {
                int: signal(SignalKind::interrupt()).ok(),
                term: signal(SignalKind::terminate()).ok(),
            }
        }
        #[cfg(windows)]
        {
            use tokio::signal::windows::{ctrl_break, ctrl_c, ctrl_close};
            Signals {
                ctrl_c: ctrl_c().ok(),
                ctrl_break: ctrl_break().ok(),
                close: ctrl_close().ok(),
            }
        }
    }

    /// Waits for shutdown to start, or for a stop request (logged).
    pub async fn wait(mut self, shutdown: &CancellationToken) {
        #[cfg(unix)]
        tokio::select! {
            _ = shutdown.cancelled() => {}
            _ = next!(self.int) => tracing::info!("SIGINT: shutting down"),
            _ = next!(self.term) => tracing::info!("SIGTERM: shutting down"),
        }
        #[cfg(windows)]
        tokio::select! {
            _ = shutdown.cancelled() => {}
            _ = next!(self.ctrl_c) => tracing::info!("Ctrl-C: shutting down"),
            _ = next!(self.ctrl_break) => tracing::info!("Ctrl-Break: shutting down"),
            _ = next!(self.close) => tracing::info!("console closed: shutting down"),
        }
    }
}
