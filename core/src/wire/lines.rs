//! Newline-delimited framing (stdio, TCP, UART): one JSON-RPC message per line. Shared by
//! every byte-stream transport so none of them frames on its own.

/// One framed input.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Line<'a> {
    /// A complete line (without `\n` or a trailing `\r`), possibly empty.
    Message(&'a [u8]),
    /// A line longer than the buffer; its bytes were dropped up to and including its `\n`.
    TooLong,
}

/// Accumulates bytes into lines of at most `N` bytes.
pub struct Lines<const N: usize> {
    buf: [u8; N],
    len: usize,
    /// Inside an over-long line: dropping until the next `\n`.
    dropping: bool,
    /// A complete line sits in `buf[..len]`, to be cleared on the next push.
    ready: bool,
}

impl<const N: usize> Default for Lines<N> {
    fn default() -> Self {
        Self::new()
    }
}

impl<const N: usize> Lines<N> {
    /// An empty framer.
    pub const fn new() -> Self {
        Lines {
            buf: [0; N],
            len: 0,
            dropping: false,
            ready: false,
        }
    }

    /// Takes bytes from `input` until a line completes. Returns how many bytes were consumed
    /// and the completed line, if any; call again with the rest.
    pub fn push(&mut self, input: &[u8]) -> (usize, Option<Line<'_>>) {
        if self.ready {
            self.ready = false;
            self.len = 0;
        }
        let end = line_end(input);
        if !self.dropping {
            // The run up to the `\n` (or all of `input`) in one copy, if it still fits.
            let run = &input[..end];
            match self.buf.get_mut(self.len..self.len + run.len()) {
                Some(free) => {
                    free.copy_from_slice(run);
                    self.len += run.len();
                }
                None => self.dropping = true,
            }
        }
        if end == input.len() {
            return (end, None);
        }
        if core::mem::take(&mut self.dropping) {
            self.len = 0;
            return (end + 1, Some(Line::TooLong));
        }
        self.ready = true;
        let mut line = &self.buf[..self.len];
        if let [rest @ .., b'\r'] = line {
            line = rest;
        }
        (end + 1, Some(Line::Message(line)))
    }

    /// Whether a partial line is buffered (a client that disconnects now left half a line).
    pub fn has_partial(&self) -> bool {
        !self.ready && (self.len > 0 || self.dropping)
    }
}

/// The index of the first `\n` in `b`, or `b.len()`; eight bytes a step.
fn line_end(b: &[u8]) -> usize {
    super::swar::find(b, 0, |v| super::swar::has(v, b'\n'))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_lines_across_pushes() {
        let mut l = Lines::<8>::new();
        assert_eq!(l.push(b"ab"), (2, None));
        assert!(l.has_partial());
        assert_eq!(l.push(b"c\r\nde\n"), (3, Some(Line::Message(b"abc"))));
        assert_eq!(l.push(b"de\n"), (3, Some(Line::Message(b"de"))));
        assert!(!l.has_partial());
    }

    #[test]
    fn over_long_lines_are_dropped_and_reported() {
        let mut l = Lines::<4>::new();
        assert_eq!(l.push(b"0123456789"), (10, None));
        assert_eq!(l.push(b"xx\nok\n"), (3, Some(Line::TooLong)));
        assert_eq!(l.push(b"ok\n"), (3, Some(Line::Message(b"ok"))));
        assert_eq!(l.push(b"\n"), (1, Some(Line::Message(b""))));
    }

    #[test]
    fn a_line_of_exactly_n_bytes_fits_and_one_more_does_not() {
        let mut l = Lines::<4>::new();
        assert_eq!(l.push(b"ab"), (2, None));
        assert_eq!(l.push(b"cd\n"), (3, Some(Line::Message(b"abcd"))));
        assert_eq!(l.push(b"abc"), (3, None));
        assert_eq!(l.push(b"de"), (2, None));
        assert!(l.has_partial());
        assert_eq!(l.push(b"\n"), (1, Some(Line::TooLong)));
        assert!(!l.has_partial());
    }

    #[test]
    fn line_end_finds_the_first_newline_in_any_lane() {
        for len in 0..40 {
            for at in 0..=len {
                let mut b = [b'\n' ^ 1; 40];
                if at < len {
                    b[at] = b'\n';
                    b[len - 1] = b'\n';
                }
                assert_eq!(line_end(&b[..len]), at, "len {len}, newline at {at}");
            }
        }
    }
}
