//! Op names are `namespace::name`. An op declared without a namespace takes its crate's name (as
//! Cargo gives it to the compiler: `CARGO_CRATE_NAME`), so ops of two crates never share a name;
//! `name = "ns::x"` picks the namespace (the standard ops' is `switchyard`).
//!
//! Two ops of one full name in one crate are caught at compile time: each op exports a hidden
//! macro named after its full name, and the macros of one crate share one namespace (its root),
//! so rustc reports the second as a redefinition of the first, on the ops' own tokens. (Only
//! `#[macro_export]` places an item at the crate root from inside a module; rustc's words for the
//! clash are its own, as no item can see another op's to say ours.)

use proc_macro2::{Span, TokenStream};
use quote::quote_spanned;
use syn::Ident;

/// What an op's `name` must look like; said when it is not.
pub const NAME_FORM: &str = "an op name is `name` or `namespace::name` (one `::`, both parts \
                             non-empty), e.g. `name = \"mul\"` or `name = \"my_lib::mul\"`; \
                             without a namespace the op takes its crate's name";

/// Whether `name` is `x` or `ns::x` with both parts non-empty.
pub fn well_formed(name: &str) -> bool {
    match name.split_once("::") {
        None => !name.is_empty(),
        Some((ns, bare)) => !ns.is_empty() && !bare.is_empty() && !bare.contains("::"),
    }
}

/// The crate being compiled, as rustc names it: the default namespace.
pub fn crate_namespace() -> Option<String> {
    let var = |name: &str| std::env::var(name).ok().filter(|v| !v.is_empty());
    var("CARGO_CRATE_NAME").or_else(|| var("CARGO_PKG_NAME").map(|name| name.replace('-', "_")))
}

/// The full name of an op called `name` (given or the function's): itself when it has a
/// namespace, else in the crate's; `None` when it has none and the crate's name is unknown.
pub fn full(name: &str) -> Option<String> {
    if name.contains("::") {
        return Some(name.to_owned());
    }
    crate_namespace().map(|ns| format!("{ns}::{name}"))
}

/// The hidden, crate-wide item whose redefinition is the error for a second op of `full_name` in
/// one crate; spanned on `span` (the op's `name` string, or its function's name). The crate's own
/// namespace is spelled `crate` in it, so that the item's name (in the error) does not depend on
/// the crate's.
pub fn unique_in_crate(full_name: &str, span: Span) -> TokenStream {
    let (namespace, bare) = full_name.rsplit_once("::").unwrap_or(("", full_name));
    let own = crate_namespace().is_some_and(|own| own == namespace);
    let readable = |text: &str| -> String {
        text.chars()
            .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
            .collect()
    };
    // The readable part alone could equate two names (`a_::b`, `a::_b`); the hash cannot.
    let hash = if own {
        crate::mangle::fnv1a(&["\0crate", bare])
    } else {
        crate::mangle::fnv1a(&[namespace, bare])
    };
    let namespace = if own {
        "crate".into()
    } else {
        readable(namespace)
    };
    let ident = Ident::new(
        &format!(
            "__switchyard_op_named__{namespace}__{}__{hash:016x}",
            readable(bare)
        ),
        span,
    );
    quote_spanned! {span=>
        #[doc(hidden)]
        #[allow(non_local_definitions, unused_macros)]
        #[macro_export]
        macro_rules! #ident { () => {} }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn forms() {
        assert!(well_formed("mul"));
        assert!(well_formed("my_lib::mul"));
        assert!(well_formed("a.b::mul.out"));
        for bad in ["", "::mul", "ns::", "a::b::c", "::"] {
            assert!(!well_formed(bad), "{bad}");
        }
        assert_eq!(full("x::mul").as_deref(), Some("x::mul"));
    }
}
