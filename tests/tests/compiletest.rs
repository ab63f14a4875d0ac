//! The compile-fail suite: each `ui/*.rs` is one misuse of `#[op]` or `#[kernel]`, named after the
//! mistake, with the error rustc must print in its `.stderr`.

#[test]
fn ui() {
    let t = trybuild::TestCases::new();
    t.compile_fail("tests/ui/*.rs");
}
