//! What an operator runs a floor's server with: `/healthz` for a load balancer ([`health`],
//! [`http`]), counters for Prometheus at `/metrics` ([`metrics`], counted by the host, the
//! committer and the listeners), and `redmark backup` ([`backup`]). See docs/operators.md,
//! "Health and metrics" and "Backup and restore".

pub mod backup;
mod classify;
pub mod health;
pub mod http;
pub mod metrics;
