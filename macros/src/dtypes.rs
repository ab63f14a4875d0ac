//! `dtypes = "f32,f64"` in `#[kernel]`: the columns of its op's table a kernel serves (parsed
//! into a [`DTypesArg`], checked one rule per function), and the `ColumnSet` it expands to.
//!
//! The list form, `dtypes = ["f32", COMPLEX64]`, also takes paths to user dtype constants
//! (`switchyard::UserDType`, declared with `declare_dtype!`): each expands to a `const` call
//! that takes a `UserDType`, spanned on the path, so a path that is not one is a type error
//! there, and an unknown one rustc's "cannot find".

use proc_macro2::TokenStream;
use quote::{quote, quote_spanned};
use syn::spanned::Spanned;
use syn::{Expr, LitStr, Path};

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
    "builtin", "all",
];

// ---- ast ----

/// A parsed `dtypes = …`, spans kept.
pub struct DTypesArg {
    /// The string, and its comma-separated entries as written (trimmed); in the list form, each
    /// string element's entries under its own literal. `None` when the value was neither
    /// (reported).
    list: Option<(LitStr, Vec<String>)>,
    /// The list form's other strings (each with its entries), after the first.
    more: Vec<(LitStr, Vec<String>)>,
    /// The list form's paths: user dtype constants.
    user: Vec<Path>,
}

const EXPECTED: &str = "`dtypes` in `#[kernel]` takes a string of dtypes, e.g. \
                        `dtypes = \"f32,f64\"`, or a list that may also name user dtype constants, \
                        e.g. `dtypes = [\"f32\", COMPLEX64]`";

impl DTypesArg {
    /// `dtypes` is optional (a kernel that declares none serves every column); when given, its
    /// value must be a string, or a list of strings and paths.
    pub fn parse(args: &mut Args, errors: &mut Errors) -> Option<DTypesArg> {
        let arg = args.take("dtypes")?;
        let Expr::Array(array) = &arg.value else {
            let list = args::comma_list(&arg, EXPECTED, errors);
            return Some(DTypesArg {
                list,
                more: Vec::new(),
                user: Vec::new(),
            });
        };
        let mut strings = Vec::new();
        let mut user = Vec::new();
        for element in &array.elems {
            if let Some(lit) = args::as_str(element) {
                let entries = lit
                    .value()
                    .split(',')
                    .map(|e| e.trim().to_owned())
                    .collect();
                strings.push((lit.clone(), entries));
            } else if let Some(path) = args::as_path(element) {
                user.push(path.clone());
            } else {
                errors.spanned(element, EXPECTED);
            }
        }
        if strings.is_empty() && user.is_empty() && array.elems.is_empty() {
            errors.spanned(
                array,
                "`dtypes` in `#[kernel]` is empty: a kernel that serves no dtype would never run",
            );
        }
        let mut strings = strings.into_iter();
        Some(DTypesArg {
            list: strings.next(),
            more: strings.collect(),
            user,
        })
    }

    /// Every string of the argument with its entries.
    fn strings(&self) -> impl Iterator<Item = &(LitStr, Vec<String>)> {
        self.list.iter().chain(&self.more)
    }
}

// ---- validate ----

/// Every rule on `dtypes`.
pub fn check(dtypes: &DTypesArg, errors: &mut Errors) {
    let mut seen: Vec<String> = Vec::new();
    for (lit, entries) in dtypes.strings() {
        no_empty_entry(lit, entries, errors);
        known_tokens(lit, entries, errors);
        no_repeated_token(lit, entries, &mut seen, errors);
    }
    no_repeated_path(&dtypes.user, errors);
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
        // A user dtype is not a string: its name is known only at link time, its constant now.
        let user = if hint.is_empty() {
            "; a dtype declared with `declare_dtype!` is named by its constant, \
             e.g. `dtypes = [MY_DTYPE]`"
        } else {
            ""
        };
        errors.spanned(
            lit,
            format!(
                "unknown dtype `{written}` in `dtypes`{hint}; expected one of: {}{user}",
                list(TOKENS)
            ),
        );
    }
}

// A token listed twice is a slip (perhaps for another dtype).
fn no_repeated_token(
    lit: &LitStr,
    entries: &[String],
    seen: &mut Vec<String>,
    errors: &mut Errors,
) {
    for entry in entries.iter().filter(|e| TOKENS.contains(&e.as_str())) {
        if seen.contains(entry) {
            errors.spanned(lit, format!("dtype `{entry}` is listed twice in `dtypes`"));
        } else {
            seen.push(entry.clone());
        }
    }
}

// A user dtype constant written twice is a slip too (paths compared as written).
fn no_repeated_path(paths: &[Path], errors: &mut Errors) {
    let written: Vec<String> = paths.iter().map(|p| quote!(#p).to_string()).collect();
    for (i, path) in paths.iter().enumerate() {
        if written[..i].contains(&written[i]) {
            errors.spanned(
                path,
                format!(
                    "user dtype `{}` is listed twice in `dtypes`",
                    written[i].replace(' ', "")
                ),
            );
        }
    }
}

// ---- expand ----

/// The `ColumnSet` expression: the built-in columns without `dtypes`, else the union of the tokens'
/// columns, each looked up by the runtime in `const` evaluation, and of the user dtypes'
/// columns, each through a `const fn` taking a `UserDType` (a type error on the user's path if
/// it names something else).
pub fn columns_expr(dtypes: Option<&DTypesArg>, private: &TokenStream) -> TokenStream {
    let Some(dtypes) = dtypes.filter(|d| d.list.is_some() || !d.user.is_empty()) else {
        return quote!(#private::ColumnSet::BUILTIN);
    };
    let tokens = dtypes.strings().flat_map(|(lit, entries)| {
        entries
            .iter()
            .map(|e| LitStr::new(e, lit.span()))
            .collect::<Vec<_>>()
    });
    let user = dtypes
        .user
        .iter()
        .map(|path| quote_spanned!(path.span()=> #private::user_dtype_columns(#path)));
    quote!(#private::ColumnSet::EMPTY #(.union(#private::dtype_token(#tokens)))* #(.union(#user))*)
}
