//! What `op = …` names, where the kernel's own source file can tell: rustc's error for an
//! unresolved name suggests `cargo add` and says nothing of ops, so a name that cannot be in
//! scope is reported here instead, in our words; and an op's `name` string (`op = "nc::twice"`,
//! or its full name `my_crate::twice` for an op declared without a namespace: the form dumps and
//! errors print) is resolved to the item that the file declares with it. A full name that the
//! file neither declares nor can resolve as a path (its namespace is no name here) is reported
//! with the item path to write.
//!
//! Only a conclusive reading is acted on: a file with a glob import, an `include!` or a
//! `macro_rules!`, one that cannot be read, or a doctest (its code is in a comment of the file),
//! is left to rustc (whose error then carries no `cargo add`: see `expand.rs`).

use std::cell::RefCell;
use std::collections::HashMap;
use std::path::PathBuf;
use std::rc::Rc;
use std::time::SystemTime;

use proc_macro2::{Delimiter, Ident, Span, TokenStream, TokenTree};

use crate::namespace;

/// What the kernel's file says about its `op = …`.
pub enum Scope {
    /// The op's `name` string, declared in this file on the item named here.
    NamedItem(Ident),
    /// A namespaced op name (`ns::x`) that no op of this file has, whose namespace is no name
    /// in this file either: not a path that resolves here. With the crate's own namespace.
    NameElsewhere {
        namespace: String,
        bare: String,
        crate_namespace: Option<String>,
    },
    /// The single-segment name cannot be in scope: nothing in the file declares or imports it.
    /// With the ops this file declares, for "did you mean".
    Unknown(Vec<String>),
    /// The single-segment name is a function this file declares without `#[op]`.
    NotAnOp,
    /// The file cannot tell (or the name is there): rustc resolves it.
    Unclear,
}

/// Reads the file of `span` for `first` (the path's first segment, when the path is one
/// segment) and `string` (the value, when it was a string).
pub fn lookup(span: Span, single: Option<&str>, string: Option<&str>) -> Scope {
    let Some(cached) = file_facts(span) else {
        return Scope::Unclear;
    };
    let Some(file) = &cached.facts else {
        return Scope::Unclear;
    };
    let crate_namespace = namespace::crate_namespace();
    // An op's name as written (`name = "twin"`), or its full name (`my_crate::twin`).
    let full = |name: &Option<String>, item: &str| {
        let name = name.as_deref().unwrap_or(item);
        match &crate_namespace {
            Some(ns) if !name.contains("::") => format!("{ns}::{name}"),
            _ => name.to_owned(),
        }
    };
    if let Some(string) = string
        && let Some((_, item)) = file
            .ops
            .iter()
            .find(|(name, item)| name.as_deref() == Some(string) || full(name, item) == string)
    {
        return Scope::NamedItem(Ident::new(item, span));
    }
    let count = |map: &HashMap<String, usize>, name: &str| map.get(name).copied().unwrap_or(0);
    if let Some((ns, bare)) = string.and_then(|string| string.split_once("::"))
        && !file.glob
        && !bare.contains("::")
        && !matches!(ns, "crate" | "self" | "super" | "Self" | "")
        && count(&file.idents, ns) == 0
    {
        return Scope::NameElsewhere {
            namespace: ns.to_owned(),
            bare: bare.to_owned(),
            crate_namespace,
        };
    }
    match single {
        Some(name)
            // Declared here without `#[op]`, and named nowhere else (not imported, not called).
            if count(&file.plain_fns, name) > 0
                && !file.ops.iter().any(|(_, op)| op == name)
                && count(&file.idents, name) == count(&file.plain_fns, name) =>
        {
            Scope::NotAnOp
        }
        Some(name) if !file.glob && count(&file.idents, name) == 0 => {
            Scope::Unknown(file.ops.iter().map(|(_, op)| op.clone()).collect())
        }
        _ => Scope::Unclear,
    }
}

/// A file's facts, read once per version of the file: a crate whose one file holds thousands of
/// kernels (the benches' generated ops) would otherwise tokenize that file once per kernel.
struct Cached {
    /// Each line (0-based) as written.
    lines: Vec<String>,
    /// Whether each line (0-based) starts inside a comment.
    comment_lines: Vec<bool>,
    /// `None` when the file cannot tell (see the module docs).
    facts: Option<FileFacts>,
}

/// A file's path, modification time and length: a long-lived macro server (an IDE's) reads a
/// file again once it changes.
type FileVersion = (PathBuf, Option<SystemTime>, u64);

thread_local! {
    static FILES: RefCell<HashMap<FileVersion, Rc<Cached>>> = RefCell::new(HashMap::new());
}

fn file_facts(span: Span) -> Option<Rc<Cached>> {
    // Outside a macro (the crate's unit tests) there is no compiler to ask.
    if !proc_macro::is_available() {
        return None;
    }
    let span = span.unwrap();
    let path = span.local_file()?;
    let meta = std::fs::metadata(&path).ok()?;
    let key = (path, meta.modified().ok(), meta.len());
    let cached = match FILES.with(|files| files.borrow().get(&key).cloned()) {
        Some(cached) => cached,
        None => {
            let cached = Rc::new(read_file(&key.0)?);
            FILES.with(|files| files.borrow_mut().insert(key, Rc::clone(&cached)));
            cached
        }
    };
    // A doctest's spans point into the doc comment of the file that holds it: the items of the
    // test are in the comment, not in the file's tokens.
    let line = span.line().saturating_sub(1);
    if *cached.comment_lines.get(line)? || cached.facts.is_none() {
        return None;
    }
    // The file must hold the kernel's own tokens where the span says: a doctest compiled apart
    // (rustdoc's merged doctests), or generated code, may name this file at another line.
    let written = span.source_text()?;
    if !cached.lines.get(line)?.contains(written.as_str()) {
        return None;
    }
    Some(cached)
}

fn read_file(path: &std::path::Path) -> Option<Cached> {
    let text = std::fs::read_to_string(path).ok()?;
    let comment_lines = text
        .lines()
        .map(|line| {
            let line = line.trim_start();
            line.starts_with("//") || line.starts_with("/*") || line.starts_with('*')
        })
        .collect();
    // Items from another file, or a kernel a `macro_rules!` writes (its tokens are the macro's,
    // its scope the caller's): the file alone cannot tell.
    let facts = if text.contains("include!") || text.contains("macro_rules!") {
        None
    } else {
        text.parse::<TokenStream>().ok().map(|tokens| {
            let mut facts = FileFacts::default();
            facts.walk(&tokens, false);
            facts
        })
    };
    Some(Cached {
        lines: text.lines().map(str::to_owned).collect(),
        comment_lines,
        facts,
    })
}

#[derive(Default)]
struct FileFacts {
    /// How often each identifier occurs, except as the value of an `op = …`.
    idents: HashMap<String, usize>,
    /// Whether a glob import (`::*`) may bring names in.
    glob: bool,
    /// Each `#[op]` item: its `name = "…"` if given, and the function's name.
    ops: Vec<(Option<String>, String)>,
    /// How often each name follows `fn`, with or without `#[op]`.
    plain_fns: HashMap<String, usize>,
}

impl FileFacts {
    /// `in_use_list`: the group follows `::`, so a `*` in it is a glob.
    fn walk(&mut self, tokens: &TokenStream, in_use_list: bool) {
        let tokens: Vec<TokenTree> = tokens.clone().into_iter().collect();
        for (i, token) in tokens.iter().enumerate() {
            let after_path_sep =
                i >= 2 && is_punct(&tokens[i - 1], ':') && is_punct(&tokens[i - 2], ':');
            match token {
                TokenTree::Ident(ident) => {
                    let is_op_value =
                        i >= 2 && is_punct(&tokens[i - 1], '=') && is_ident(&tokens[i - 2], "op");
                    if !is_op_value {
                        *self.idents.entry(ident.to_string()).or_default() += 1;
                    }
                    if i >= 1 && is_ident(&tokens[i - 1], "fn") {
                        *self.plain_fns.entry(ident.to_string()).or_default() += 1;
                    }
                }
                TokenTree::Punct(p) if p.as_char() == '*' && (after_path_sep || in_use_list) => {
                    self.glob = true;
                }
                TokenTree::Group(group) => {
                    if group.delimiter() == Delimiter::Bracket
                        && i >= 1
                        && is_punct(&tokens[i - 1], '#')
                        && let Some(op) = op_attribute(&group.stream(), &tokens[i + 1..])
                    {
                        self.ops.push(op);
                    }
                    let use_list = group.delimiter() == Delimiter::Brace && after_path_sep;
                    self.walk(&group.stream(), use_list);
                }
                _ => {}
            }
        }
    }
}

/// `op` or `op(…)` inside `#[…]`, followed by the item: the op's `name` string if any, and the
/// function's name.
fn op_attribute(attr: &TokenStream, after: &[TokenTree]) -> Option<(Option<String>, String)> {
    let mut attr = attr.clone().into_iter();
    if !attr.next().is_some_and(|t| is_ident(&t, "op")) {
        return None;
    }
    let name = match attr.next() {
        Some(TokenTree::Group(args)) => name_argument(&args.stream()),
        None => None,
        Some(_) => return None,
    };
    let at_fn = after.iter().position(|t| is_ident(t, "fn"))?;
    match after.get(at_fn + 1)? {
        TokenTree::Ident(ident) => Some((name, ident.to_string())),
        _ => None,
    }
}

/// The string of `name = "…"` among attribute arguments.
fn name_argument(args: &TokenStream) -> Option<String> {
    let args: Vec<TokenTree> = args.clone().into_iter().collect();
    args.windows(3).find_map(|w| match w {
        [name, eq, TokenTree::Literal(lit)] if is_ident(name, "name") && is_punct(eq, '=') => {
            syn::parse_str::<syn::LitStr>(&lit.to_string())
                .ok()
                .map(|s| s.value())
        }
        _ => None,
    })
}

fn is_punct(token: &TokenTree, c: char) -> bool {
    matches!(token, TokenTree::Punct(p) if p.as_char() == c)
}

fn is_ident(token: &TokenTree, name: &str) -> bool {
    matches!(token, TokenTree::Ident(i) if i == name)
}
