//! A stream's answers with one dropped: the answer to an `initialize` a folder's relay replayed.

use serde_json::{Map, Value};

use super::stream::Sink;

/// Whether `line` is a response (not a request) with the id whose JSON text is `id`.
pub fn is_answer_to(line: &[u8], id: &str) -> bool {
    let Ok(m) = serde_json::from_slice::<Map<String, Value>>(line) else {
        return false;
    };
    let answer = !m.contains_key("method") && (m.contains_key("result") || m.contains_key("error"));
    answer
        && m.get("id")
            .map_or_else(|| "null".to_owned(), Value::to_string)
            == id
}

/// A [`Sink`] that drops the first answer to one id (the replayed `initialize`'s), passing
/// everything else on.
pub struct SkipAnswer<S> {
    inner: S,
    skip: Option<String>,
}

impl<S> SkipAnswer<S> {
    /// `inner`, dropping the first answer to `skip` if set.
    pub fn new(inner: S, skip: Option<String>) -> Self {
        SkipAnswer { inner, skip }
    }
}

impl<S: Sink + Send> Sink for SkipAnswer<S> {
    async fn send(&mut self, batch: &mut Vec<u8>) -> std::io::Result<()> {
        if let Some(id) = &self.skip {
            let mut at = 0;
            while let Some(n) = batch[at..].iter().position(|b| *b == b'\n') {
                if is_answer_to(&batch[at..at + n], id) {
                    batch.drain(at..=at + n);
                    self.skip = None;
                    break;
                }
                at += n + 1;
            }
            if batch.is_empty() {
                return Ok(());
            }
        }
        self.inner.send(batch).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Collect(Vec<u8>);

    impl Sink for Collect {
        async fn send(&mut self, batch: &mut Vec<u8>) -> std::io::Result<()> {
            self.0.append(batch);
            Ok(())
        }
    }

    #[tokio::test]
    async fn the_replayed_answer_is_dropped_once() {
        let mut s = SkipAnswer::new(Collect(Vec::new()), Some("0".into()));
        let mut b =
            b"{\"id\":0,\"method\":\"x\"}\n{\"id\":0,\"result\":{}}\n{\"id\":5,\"result\":{}}\n"
                .to_vec();
        s.send(&mut b).await.unwrap();
        let mut again = b"{\"id\":0,\"result\":{}}\n".to_vec();
        s.send(&mut again).await.unwrap();
        assert_eq!(
            String::from_utf8(s.inner.0).unwrap(),
            "{\"id\":0,\"method\":\"x\"}\n{\"id\":5,\"result\":{}}\n{\"id\":0,\"result\":{}}\n"
        );
    }
}
