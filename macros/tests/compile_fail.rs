//! The misuse messages, pinned: each `ui/*.rs` must fail to compile with the `.stderr` beside
//! it (what the author is told to do). `TRYBUILD=overwrite` rewrites them; review the diff.

#[test]
fn misuse_is_a_compile_error_that_says_what_to_do() {
    let t = trybuild::TestCases::new();
    t.compile_fail("tests/ui/*.rs");
}
