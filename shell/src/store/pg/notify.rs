//! Every instance's changes to every instance: `NOTIFY` in each write batch, `LISTEN` per instance.
//!
//! Every instance's changes, to every instance: a write transaction `NOTIFY`s what it changed
//! (delivered only if it commits), and each instance's listener connection `LISTEN`s and tells its
//! change hub, its own changes included.

use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use futures_util::{Stream, StreamExt};
use tokio_postgres::{AsyncMessage, Client, Config, NoTls, Transaction};
use tokio_util::sync::CancellationToken;

use crate::store::changes::{Change, Changes};

/// The PostgreSQL channel the instances tell each other's changes on.
pub const CHANNEL: &str = "redmark_changes";
/// Most bytes of one `NOTIFY` payload (PostgreSQL refuses 8000 or more): a batch that changed
/// more sends several.
pub const MAX_PAYLOAD: usize = 7_900;
/// How long the listener waits before connecting again after its connection failed (it then
/// tells its followers that anything may have changed meanwhile).
pub const RELISTEN_AFTER: Duration = Duration::from_secs(1);

/// Sends, inside a batch's transaction, a `NOTIFY` of what its writes `made` (one line a
/// change, [`Change::encode`]; delivered when the transaction commits).
pub(super) async fn notify(
    tx: &Transaction<'_>,
    made: &[Change],
) -> Result<(), tokio_postgres::Error> {
    let mut payload = String::new();
    for line in made.iter().map(Change::encode) {
        if !payload.is_empty() && payload.len() + 1 + line.len() > MAX_PAYLOAD {
            send(tx, &payload).await?;
            payload.clear();
        }
        if !payload.is_empty() {
            payload.push('\n');
        }
        payload.push_str(&line);
    }
    if !payload.is_empty() {
        send(tx, &payload).await?;
    }
    Ok(())
}

async fn send(tx: &Transaction<'_>, payload: &str) -> Result<(), tokio_postgres::Error> {
    tx.execute("SELECT pg_notify($1, $2)", &[&CHANNEL, &payload])
        .await
        .map(drop)
}

/// The messages of a listening connection.
type Messages = Pin<Box<dyn Stream<Item = Result<AsyncMessage, tokio_postgres::Error>> + Send>>;

/// Starts the instance's listener: every `NOTIFY` on [`CHANNEL`] into `hub`, until `stop`.
/// Returns once the first connection listens (or failed to: it then keeps trying), so a change
/// committed after the store opened is heard.
pub(super) async fn listen(config: Arc<Config>, hub: Arc<Changes>, stop: CancellationToken) {
    let mut now = connect(&config).await;
    tokio::spawn(async move {
        let mut first = true;
        loop {
            if let Some((client, messages)) = now.take() {
                if !first {
                    hub.publish(Change::Unknown);
                }
                tokio::select! {
                    () = stop.cancelled() => return,
                    () = forward(messages, &hub) => {}
                }
                drop(client);
            }
            first = false;
            tokio::select! {
                () = stop.cancelled() => return,
                () = tokio::time::sleep(RELISTEN_AFTER) => {}
            }
            now = connect(&config).await;
        }
    });
}

/// A connection that has run `LISTEN`, and its messages (`None`: it failed, said at debug).
async fn connect(config: &Config) -> Option<(Client, Messages)> {
    let (client, mut conn) = match config.connect(NoTls).await {
        Ok(c) => c,
        Err(e) => {
            tracing::debug!("booking store: listening for changes: {e}");
            return None;
        }
    };
    let mut messages: Messages = Box::pin(futures_util::stream::poll_fn(move |cx| {
        conn.poll_message(cx)
    }));
    let query = format!("LISTEN {CHANNEL}");
    {
        let mut listening = std::pin::pin!(client.batch_execute(&query));
        // The connection is driven by reading its messages, the LISTEN's answer among them.
        loop {
            tokio::select! {
                r = &mut listening => match r {
                    Ok(()) => break,
                    Err(e) => {
                        tracing::debug!("booking store: LISTEN: {e}");
                        return None;
                    }
                },
                m = messages.next() => if !matches!(m, Some(Ok(_))) { return None },
            }
        }
    }
    Some((client, messages))
}

/// Every notification of `messages` into `hub`, until the connection fails.
async fn forward(mut messages: Messages, hub: &Changes) {
    while let Some(m) = messages.next().await {
        match m {
            Ok(AsyncMessage::Notification(n)) if n.channel() == CHANNEL => {
                for change in n.payload().lines().filter_map(Change::decode) {
                    hub.publish(change);
                }
            }
            Ok(_) => {}
            Err(e) => {
                tracing::debug!("booking store: listening for changes: {e}");
                return;
            }
        }
    }
}
