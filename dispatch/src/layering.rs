//! The layering of `dispatch/src`, checked: every module names (`use crate::…`, a `crate::…` or
//! `super::…` path) only modules at or below its own layer, in the order that ARCHITECTURE.md's
//! "Layering" section lists, lowest first. A file inside a listed module belongs to that
//! module's layer (`cpu/tests.rs` to `cpu`, `table/hot.rs` to `table::hot`). Paths into the crate
//! root (`crate::Tensor`) count as imports of the module the root re-exports them from.
//!
//! The check reads the sources as tokens (comments and literals skipped), so it sees imports and
//! paths, not method calls: a method defined in a higher layer and called from a lower one (on a
//! type declared lower) escapes it.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// Upward imports allowed, each with why: none. Any upward import fails the test; so would an
/// entry here that no longer occurs.
const PENDING: &[(&str, &str, &str)] = &[];

/// The layers, lowest first: the first backquoted name of each `- ` line of ARCHITECTURE.md's
/// "Layering" section.
fn layers() -> Vec<String> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../ARCHITECTURE.md");
    let text = std::fs::read_to_string(&path).expect("ARCHITECTURE.md is beside dispatch/");
    let section = text
        .split("\n## ")
        .find(|s| s.starts_with("Layering\n"))
        .expect("ARCHITECTURE.md has a `## Layering` section");
    section
        .lines()
        .filter_map(|line| line.strip_prefix("- `")?.split('`').next())
        .map(str::to_owned)
        .collect()
}

/// Every `.rs` file under `dir`, with its module path (`table/hot.rs` → `["table", "hot"]`;
/// `lib.rs` → `[]`).
fn sources(dir: &Path, module: &[String], out: &mut Vec<(Vec<String>, String)>) {
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .expect("dispatch/src is readable")
        .map(|e| e.expect("a directory entry").path())
        .collect();
    entries.sort();
    for path in entries {
        let name = path
            .file_stem()
            .and_then(|n| n.to_str())
            .unwrap_or_default();
        let mut inner = module.to_vec();
        if path.is_dir() {
            inner.push(name.to_owned());
            sources(&path, &inner, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            if !(name == "mod" || module.is_empty() && name == "lib") {
                inner.push(name.to_owned());
            }
            let text = std::fs::read_to_string(&path).expect("a readable source file");
            out.push((inner, text));
        }
    }
}

/// The source as tokens: identifiers, `::`, and single punctuation characters; comments,
/// string and character literals and whitespace dropped.
fn tokens(src: &str) -> Vec<&str> {
    let b = src.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let rest = &src[i..];
        if rest.starts_with("//") {
            i += rest.find('\n').unwrap_or(rest.len());
        } else if rest.starts_with("/*") {
            i += rest.find("*/").map_or(rest.len(), |end| end + 2);
        } else if b[i] == b'"' {
            i += 1;
            while i < b.len() && b[i] != b'"' {
                i += if b[i] == b'\\' { 2 } else { 1 };
            }
            i += 1;
        } else if b[i] == b'\'' {
            // A character literal, or the quote of a lifetime.
            let ch = rest[1..].chars().next().unwrap_or(' ');
            if ch == '\\' {
                i += 2 + rest[2..].find('\'').map_or(rest.len(), |end| end + 1);
            } else if rest[1 + ch.len_utf8()..].starts_with('\'') {
                i += 2 + ch.len_utf8();
            } else {
                out.push("'");
                i += 1;
            }
        } else if b[i].is_ascii_alphanumeric() || b[i] == b'_' {
            let start = i;
            while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_') {
                i += 1;
            }
            let ident = &src[start..i];
            // A raw string: `r"…"`, `r#"…"#`, `br"…"`.
            let hashes = src[i..].bytes().take_while(|&c| c == b'#').count();
            if matches!(ident, "r" | "br") && src[i + hashes..].starts_with('"') {
                let close = format!("\"{}", "#".repeat(hashes));
                let body = i + hashes + 1;
                i = body + src[body..].find(&close).map_or(src.len() - body, |end| end) + 1;
                i += hashes;
            } else {
                out.push(ident);
            }
        } else if rest.starts_with("::") {
            out.push("::");
            i += 2;
        } else {
            if b[i].is_ascii_punctuation() {
                out.push(&src[i..i + 1]);
            }
            i += rest.chars().next().map_or(1, char::len_utf8);
        }
    }
    out
}

fn is_ident(token: &str) -> bool {
    token.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
}

/// The paths of one `use` tree or path starting at `toks[i]`, under `prefix`
/// (`a::{b, c::d}` → `a::b`, `a::c::d`); returns where it ends.
fn tree(toks: &[&str], mut i: usize, prefix: Vec<String>, out: &mut Vec<Vec<String>>) -> usize {
    match toks.get(i) {
        Some(&"{") => {
            i += 1;
            while i < toks.len() && toks[i] != "}" {
                i = tree(toks, i, prefix.clone(), out);
                if toks.get(i) == Some(&",") {
                    i += 1;
                }
            }
            i + 1
        }
        Some(&"*") => {
            out.push(prefix);
            i + 1
        }
        Some(token) if is_ident(token) => {
            let mut path = prefix;
            path.push((*token).to_owned());
            match toks.get(i + 1) {
                Some(&"::") => tree(toks, i + 2, path, out),
                Some(&"as") => {
                    out.push(path);
                    i + 3
                }
                _ => {
                    out.push(path);
                    i + 1
                }
            }
        }
        _ => {
            out.push(prefix);
            i
        }
    }
}

/// Every path into the crate that a file of module `module` names, as a path from the crate
/// root: `crate::…` paths, and `super::…` resolved (inline modules such as `mod tests { … }`
/// included). `$crate::…` in macros is left out: it is resolved where the macro is used.
fn crate_paths(module: &[String], toks: &[&str]) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    let mut depth = 0usize;
    // Inline modules open around the current token: (brace depth inside, name).
    let mut inline: Vec<(usize, &str)> = Vec::new();
    let mut i = 0;
    while i < toks.len() {
        let next = toks.get(i + 1).copied();
        match toks[i] {
            "mod" if toks.get(i + 2) == Some(&"{") => {
                depth += 1;
                inline.push((depth, next.unwrap_or_default()));
                i += 3;
                continue;
            }
            "{" => depth += 1,
            "}" => {
                if inline.last().is_some_and(|(d, _)| *d == depth) {
                    inline.pop();
                }
                depth = depth.saturating_sub(1);
            }
            "crate" if next == Some("::") && (i == 0 || toks[i - 1] != "$") => {
                i = tree(toks, i + 2, Vec::new(), &mut out);
                continue;
            }
            "super" if next == Some("::") => {
                let mut base: Vec<String> = module.to_vec();
                base.extend(inline.iter().map(|(_, name)| (*name).to_owned()));
                while toks.get(i) == Some(&"super") && toks.get(i + 1) == Some(&"::") {
                    base.pop();
                    i += 2;
                }
                i = tree(toks, i, base, &mut out);
                continue;
            }
            _ => {}
        }
        i += 1;
    }
    out
}

/// What the crate root's names stand for: the module that defines or re-exports them, or
/// `None` for another crate's (`op`, re-exported from `switchyard_macros`).
type RootNames<'a> = BTreeMap<String, Option<&'a str>>;

/// The layer (a listed module) a path from the crate root lands in: its longest listed prefix;
/// for a name of the root, the module it comes from (`lib` for the root's own items), or `None`
/// for another crate's.
fn layer_of<'a>(path: &[String], layers: &'a [String], root: &RootNames<'a>) -> Option<&'a str> {
    let listed = |n: usize| {
        let joined = path[..n].join("::");
        layers.iter().find(|l| **l == joined).map(String::as_str)
    };
    if let Some(layer) = (1..=path.len()).rev().find_map(listed) {
        return Some(layer);
    }
    match path.first().and_then(|name| root.get(name)) {
        Some(from) => *from,
        None => listed_lib(layers),
    }
}

fn listed_lib(layers: &[String]) -> Option<&str> {
    layers.iter().find(|l| *l == "lib").map(String::as_str)
}

#[test]
fn no_module_imports_a_module_above_it() {
    // The packaged crate (`cargo package`, crates.io) has no ARCHITECTURE.md beside it: the
    // check belongs to the repository, where the workspace manifest is the parent's.
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    if !root.join("ARCHITECTURE.md").exists() && !root.join("Cargo.toml").exists() {
        eprintln!("layering: not in the switchyard repository; nothing to check");
        return;
    }
    let layers = layers();
    let rank = |layer: &str| layers.iter().position(|l| l == layer);
    let mut files = Vec::new();
    sources(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("src"),
        &[],
        &mut files,
    );

    // The crate root's names: what it re-exports, and from where (`pub use key::{DispatchKey,
    // …};`), and the `#[macro_export]` macros, which live at the root wherever they are defined.
    let mut root = RootNames::new();
    for (module, text) in &files {
        let toks = tokens(text);
        for i in 0..toks.len().saturating_sub(2) {
            if toks[i] == "macro_rules" && toks[i + 1] == "!" {
                let layer = layer_of(module, &layers, &RootNames::new());
                root.insert(toks[i + 2].to_owned(), layer);
            }
        }
    }
    let lib = &files.iter().find(|(m, _)| m.is_empty()).expect("lib.rs").1;
    let toks = tokens(lib);
    for i in 0..toks.len().saturating_sub(2) {
        if toks[i] == "pub" && toks[i + 1] == "use" && toks[i + 2] != "crate" {
            let mut paths = Vec::new();
            tree(&toks, i + 2, Vec::new(), &mut paths);
            for path in paths {
                let layer = layer_of(&path[..1], &layers, &RootNames::new());
                if let Some(name) = path.last() {
                    // Not a module of ours: another crate's name.
                    root.insert(name.clone(), layer.filter(|l| *l != "lib"));
                }
            }
        }
    }

    let mut problems = Vec::new();
    let mut seen_modules = BTreeSet::new();
    let mut pending_seen = BTreeSet::new();
    for (module, text) in &files {
        let name = if module.is_empty() {
            "lib".to_owned()
        } else {
            module.join("::")
        };
        let Some(own) = layer_of(module, &layers, &RootNames::new())
            .filter(|l| module.is_empty() || *l != "lib")
        else {
            problems.push(format!(
                "`{name}` is in no layer: add it to ARCHITECTURE.md"
            ));
            continue;
        };
        seen_modules.insert(own);
        for path in crate_paths(module, &tokens(text)) {
            let Some(target) = layer_of(&path, &layers, &root) else {
                continue;
            };
            if rank(target) <= rank(own) {
                continue;
            }
            match PENDING.iter().find(|(f, t, _)| *f == own && *t == target) {
                Some(pending) => {
                    pending_seen.insert(pending.0);
                }
                None => problems.push(format!(
                    "`{name}` (layer `{own}`) names `crate::{}`, of the higher layer `{target}`",
                    path.join("::")
                )),
            }
        }
    }
    for layer in &layers {
        if !seen_modules.contains(layer.as_str()) {
            problems.push(format!(
                "ARCHITECTURE.md lists `{layer}`, which dispatch/src lacks"
            ));
        }
    }
    for (from, to, why) in PENDING {
        if !pending_seen.contains(from) {
            problems.push(format!(
                "`{from}` no longer imports `{to}` ({why}): remove it from PENDING"
            ));
        }
    }
    assert!(problems.is_empty(), "layering:\n{}", problems.join("\n"));
}

#[test]
fn the_scanner_sees_paths_and_skips_comments_and_literals() {
    let src = r##"
        use crate::a::{b, c::{d, e as f}, *}; // crate::x
        /* crate::y */ let s = "crate::\"z"; let r = r#"crate::w"#; let q = '"';
        fn g<'l>() { crate::h::i(); }
        mod tests { use super::*; }
        pub(crate) fn k() {} $crate::m::n
        use super::super::p;
    "##;
    let module = ["q".to_owned(), "file".to_owned()];
    let paths = crate_paths(&module, &tokens(src));
    let expected: [&[&str]; 7] = [
        &["a", "b"],
        &["a", "c", "d"],
        &["a", "c", "e"],
        &["a"],
        &["h", "i"],
        &["q", "file"],
        &["p"],
    ];
    assert_eq!(
        paths,
        expected.map(|p| p.iter().map(|s| s.to_string()).collect::<Vec<_>>())
    );
}
