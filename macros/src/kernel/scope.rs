//! What `op = …` names, where the kernel's own source file can tell: rustc's error for an
//! unresolved name suggests `cargo add` and says nothing of ops, so a name that cannot be in
//! scope is reported here instead, in our words; and an op's `name` string (`op = "nc::twice"`,
//! the form dumps and errors print) is resolved to the item that the file declares with it.
//!
//! Only a conclusive reading is acted on: a file with a glob import, an `include!` or a
//! `macro_rules!`, or one that cannot be read (a doctest's), is left to rustc (whose error then carries no `cargo add`: see `expand.rs`).

use proc_macro2::{Delimiter, Ident, Span, TokenStream, TokenTree};

/// What the kernel's file says about its `op = …`.
pub enum Scope {
    /// The op's `name` string, declared in this file on the item named here.
    NamedItem(Ident),
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
    let Some(tokens) = file_tokens(span) else {
        return Scope::Unclear;
    };
    let mut file = FileFacts::default();
    file.walk(&tokens, false);
    if let Some(string) = string
        && let Some(item) = file
            .ops
            .iter()
            .find(|(name, _)| name.as_deref() == Some(string))
    {
        let mut ident = item.1.clone();
        ident.set_span(span);
        return Scope::NamedItem(ident);
    }
    match single {
        Some(name)
            // Declared here without `#[op]`, and named nowhere else (not imported, not called).
            if file.plain_fns.iter().any(|f| f == name)
                && !file.ops.iter().any(|(_, op)| op == name)
                && file.idents.iter().filter(|i| *i == name).count()
                    == file.plain_fns.iter().filter(|f| *f == name).count() =>
        {
            Scope::NotAnOp
        }
        Some(name) if !file.glob && !file.idents.iter().any(|i| i == name) => Scope::Unknown(
            file.ops
                .iter()
                .map(|(_, ident)| ident.to_string())
                .collect(),
        ),
        _ => Scope::Unclear,
    }
}

fn file_tokens(span: Span) -> Option<TokenStream> {
    // Outside a macro (the crate's unit tests) there is no compiler to ask.
    if !proc_macro::is_available() {
        return None;
    }
    let path = span.unwrap().local_file()?;
    let text = std::fs::read_to_string(path).ok()?;
    // Items from another file, or a kernel a `macro_rules!` writes (its tokens are the macro's,
    // its scope the caller's): the file alone cannot tell.
    if text.contains("include!") || text.contains("macro_rules!") {
        return None;
    }
    text.parse().ok()
}

#[derive(Default)]
struct FileFacts {
    /// Every identifier, except those that are the value of an `op = …`.
    idents: Vec<String>,
    /// Whether a glob import (`::*`) may bring names in.
    glob: bool,
    /// Each `#[op]` item: its `name = "…"` if given, and the function's name.
    ops: Vec<(Option<String>, Ident)>,
    /// Every function's name (`fn x`), with or without `#[op]`.
    plain_fns: Vec<String>,
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
                        self.idents.push(ident.to_string());
                    }
                    if i >= 1 && is_ident(&tokens[i - 1], "fn") {
                        self.plain_fns.push(ident.to_string());
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
fn op_attribute(attr: &TokenStream, after: &[TokenTree]) -> Option<(Option<String>, Ident)> {
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
        TokenTree::Ident(ident) => Some((name, ident.clone())),
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
