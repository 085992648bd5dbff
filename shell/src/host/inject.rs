//! The end-to-end tests' way to make a request panic inside the engine (`test-hooks` only).

/// With the `test-hooks` feature only (the end-to-end tests build the binary with it):
/// `REDMARK_TEST_PANIC=<method>` makes every request of that method panic where the engine
/// would run, so the tests can check that a panicking request is answered on every transport.
#[cfg(feature = "test-hooks")]
pub(crate) fn inject_panic(input: super::msg::Msg<'_>) {
    use std::sync::OnceLock;
    static METHOD: OnceLock<Option<String>> = OnceLock::new();
    let Some(method) = METHOD.get_or_init(|| std::env::var("REDMARK_TEST_PANIC").ok()) else {
        return;
    };
    let (super::msg::Msg::Line(b) | super::msg::Msg::Http { body: b, .. }) = input else {
        return;
    };
    if let Ok(env) = redmark_core::wire::envelope::read(b) {
        if env.method.eq_str(method) {
            panic!("REDMARK_TEST_PANIC: injected panic for {method}");
        }
    }
}

#[cfg(not(feature = "test-hooks"))]
pub(crate) fn inject_panic(_: super::msg::Msg<'_>) {}
