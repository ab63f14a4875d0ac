//! `dtypes = "f32,f64"` in `#[kernel]`: the columns of its op's table a kernel serves (parsed
//! into a [`DTypesArg`], checked one rule per function), and the `ColumnSet` it expands to.

use proc_macro2::TokenStream;
use quote::quote;
use syn::LitStr;

use crate::args::{self, Args, list};
use crate::ctxt::Errors;

/// The tokens `dtypes` accepts.
///
/// **Invariant:** equals `switchyard::ColumnSet::TOKENS`. Each token expands to
/// `ColumnSet::token("…")` evaluated at compile time, so a token the runtime lacks fails to
/// compile; `tests/tests/dtypes.rs` registers a kernel with every runtime token and compares the
/// lists.
const TOKENS: &[&str] = &[
    "bool", "u8", "i32", "i64", "f16", "bf16", "f32", "f64", "float", "int", "mixed", "untyped",
    "all",
];

// ---- ast ----

/// A parsed `dtypes = …`, spans kept.
pub struct DTypesArg {
    /// The string, and its comma-separated entries as written (trimmed); `None` when the value
    /// was not a string (reported).
    list: Option<(LitStr, Vec<String>)>,
}

impl DTypesArg {
    /// `dtypes` is optional (a kernel that declares none serves every column); when given, its
    /// value must be a string.
    pub fn parse(args: &mut Args, errors: &mut Errors) -> Option<DTypesArg> {
        let arg = args.take("dtypes")?;
        let list = args::comma_list(
            &arg,
            "`dtypes` in `#[kernel]` takes a string of dtypes, e.g. `dtypes = \"f32,f64\"`",
            errors,
        );
        Some(DTypesArg { list })
    }
}

// ---- validate ----

/// Every rule on `dtypes`.
pub fn check(dtypes: &DTypesArg, errors: &mut Errors) {
    let Some((lit, entries)) = &dtypes.list else {
        return;
    };
    no_empty_entry(lit, entries, errors);
    known_tokens(lit, entries, errors);
    no_repeated_token(lit, entries, errors);
}

// `dtypes = ""` or `"f32,"` is a slip: a kernel that serves nothing would never run.
fn no_empty_entry(lit: &LitStr, entries: &[String], errors: &mut Errors) {
    if entries.iter().any(String::is_empty) {
        let what = if entries.iter().all(String::is_empty) {
            "is empty: a kernel that serves no dtype would never run"
        } else {
            "has an empty entry"
        };
        errors.spanned(
            lit,
            format!(
                "`dtypes` in `#[kernel]` lists dtypes separated by commas, e.g. \
                 `dtypes = \"f32,f64\"`; this one {what}"
            ),
        );
    }
}

// Each token must be one the runtime knows: a misspelled dtype would silently serve nothing.
fn known_tokens(lit: &LitStr, entries: &[String], errors: &mut Errors) {
    for written in entries
        .iter()
        .filter(|e| !e.is_empty() && !TOKENS.contains(&e.as_str()))
    {
        let lower = written.to_ascii_lowercase();
        let hint = TOKENS
            .iter()
            .find(|t| **t == lower || **t == lower.replace("float", "f").replace("int", "i"))
            .map(|t| format!(" (did you mean `{t}`?)"))
            .unwrap_or_default();
        errors.spanned(
            lit,
            format!(
                "unknown dtype `{written}` in `dtypes`{hint}; expected one of: {}",
                list(TOKENS)
            ),
        );
    }
}

// A token listed twice is a slip (perhaps for another dtype).
fn no_repeated_token(lit: &LitStr, entries: &[String], errors: &mut Errors) {
    let mut seen: Vec<&str> = Vec::new();
    for entry in entries.iter().filter(|e| TOKENS.contains(&e.as_str())) {
        if seen.contains(&entry.as_str()) {
            errors.spanned(lit, format!("dtype `{entry}` is listed twice in `dtypes`"));
        } else {
            seen.push(entry);
        }
    }
}

// ---- expand ----

/// The `ColumnSet` expression: every column without `dtypes`, else the union of the tokens'
/// columns, each looked up by the runtime in `const` evaluation.
pub fn columns_expr(dtypes: Option<&DTypesArg>, private: &TokenStream) -> TokenStream {
    let entries = dtypes.and_then(|d| d.list.as_ref());
    let Some((lit, entries)) = entries else {
        return quote!(#private::ColumnSet::ALL);
    };
    let tokens = entries.iter().map(|e| LitStr::new(e, lit.span()));
    quote!(#private::ColumnSet::EMPTY #(.union(#private::dtype_token(#tokens)))*)
}
