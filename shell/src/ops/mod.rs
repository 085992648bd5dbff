//! The operator's two paths on `--http`: `/healthz` for a load balancer ([`health`], [`http`])
//! and `/metrics` for Prometheus (served from [`crate::metrics`], which the host, the
//! committer and the listeners count into). See docs/operators.md, "Health and metrics";
//! `redmark backup` is [`crate::backup`].

pub mod health;
pub mod http;
