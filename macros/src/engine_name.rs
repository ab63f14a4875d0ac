//! Generated code names the engine `::switchyard` (or `crate = path`). A crate that depends on
//! `switchyard-dispatch` under its own name, without `crate = …`, would get half a dozen errors
//! from inside generated code ("free static item without body", "cannot find attribute
//! `linkme`"); this check reads the crate's manifest instead and reports one error, naming both
//! fixes, on the first attribute of the crate.

use std::collections::HashSet;
use std::sync::Mutex;

use proc_macro2::{Span, TokenStream, TokenTree};

/// Crates (manifest directory and crate name) already told, so that the error is said once.
static TOLD: Mutex<Option<HashSet<String>>> = Mutex::new(None);

/// What the attribute with arguments `args` must report, or `Some(None)` when the crate was told
/// already (the attribute then expands to its item alone); `None` when the engine is reachable as
/// `::switchyard` as far as the manifest shows.
pub fn missing(args: &TokenStream) -> Option<Option<syn::Error>> {
    if names_crate(args) {
        return None;
    }
    let dir = std::env::var("CARGO_MANIFEST_DIR").ok()?;
    if std::env::var("CARGO_PKG_NAME").ok()? == "switchyard" {
        return None;
    }
    let manifest = std::fs::read_to_string(format!("{dir}/Cargo.toml")).ok()?;
    if depends_as_switchyard(&manifest) || renames_in_source(&dir) {
        return None;
    }
    let krate = std::env::var("CARGO_CRATE_NAME").unwrap_or_default();
    let first = TOLD
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .get_or_insert_with(HashSet::new)
        .insert(format!("{dir}\n{krate}"));
    Some(first.then(|| {
        syn::Error::new(
            Span::call_site(),
            "switchyard's macros generate code that names the engine `::switchyard`, and this \
             crate has no dependency of that name: depend on the engine under it \
             (`switchyard = { package = \"switchyard-dispatch\", version = \"…\" }` in \
             Cargo.toml; or on the `switchyard` crate itself), or write \
             `crate = switchyard_dispatch` (the path where you reach the engine) in each \
             `#[op]`, `#[kernel]` and `#[fallback]`",
        )
    }))
}

/// Whether the attribute's arguments include `crate = …`.
fn names_crate(args: &TokenStream) -> bool {
    let tokens: Vec<TokenTree> = args.clone().into_iter().collect();
    tokens.windows(2).any(|w| {
        matches!(&w[0], TokenTree::Ident(i) if i == "crate")
            && matches!(&w[1], TokenTree::Punct(p) if p.as_char() == '=')
    })
}

/// Whether a dependency table of the manifest has a `switchyard` key (`switchyard = …`,
/// `switchyard.workspace = true`, `[dependencies.switchyard]`).
fn depends_as_switchyard(manifest: &str) -> bool {
    manifest.lines().any(|line| {
        let line = line.trim();
        let key = line
            .strip_prefix('[')
            .map(|header| {
                header
                    .trim_end_matches(']')
                    .rsplit('.')
                    .next()
                    .unwrap_or("")
            })
            .unwrap_or_else(|| line.split(['=', '.']).next().unwrap_or(""));
        key.trim().trim_matches('"') == "switchyard"
    })
}

/// Whether the crate root renames a dependency to `switchyard` (`extern crate
/// switchyard_dispatch as switchyard;`, as the tensor crate does).
fn renames_in_source(dir: &str) -> bool {
    ["src/lib.rs", "src/main.rs"].iter().any(|root| {
        std::fs::read_to_string(format!("{dir}/{root}"))
            .is_ok_and(|text| text.contains("as switchyard;"))
    })
}
