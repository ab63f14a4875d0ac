//! Attribute arguments, the syntax the three attributes share: `name = value` pairs (a bare `flag`
//! is `flag = true`), each name known and given once; and the readers that the parse phases use to
//! turn a value into a typed field (a string, a path, a flag, `crate = path`). A value of the wrong
//! shape is reported on it here; what the value means is checked later, by the validate phases.

use proc_macro2::{Span, TokenStream};
use syn::ext::IdentExt;
use syn::parse::{Parse, ParseStream, Parser};
use syn::punctuated::Punctuated;
use syn::{Expr, ExprLit, ExprPath, Ident, Lit, LitStr, Path, Token};

use crate::ctxt::Errors;

/// One `name = value` argument (or a bare `flag`, which means `flag = true`), spans kept.
pub struct Arg {
    pub name: Ident,
    pub value: Expr,
}

impl Parse for Arg {
    fn parse(input: ParseStream<'_>) -> syn::Result<Self> {
        // `parse_any` so that `crate = …` parses although `crate` is a keyword.
        let name = Ident::parse_any(input)?;
        // A bare flag (`#[op(unboxed)]`, `#[op(mixes_devices)]`) reads as `flag = true`.
        if input.peek(Token![,]) || input.is_empty() {
            let value = syn::parse_quote_spanned!(name.span()=> true);
            return Ok(Arg { name, value });
        }
        input.parse::<Token![=]>()?;
        let value = input.parse()?;
        Ok(Arg { name, value })
    }
}

/// The arguments of one attribute, with each name present at most once.
pub struct Args {
    args: Vec<Arg>,
}

impl Args {
    /// Parses `tokens` as the arguments of `#[attr(…)]`. Unknown and repeated names are reported
    /// on their token and dropped.
    pub fn parse(tokens: TokenStream, attr: &str, allowed: &[&str], errors: &mut Errors) -> Args {
        let parsed = match Punctuated::<Arg, Token![,]>::parse_terminated.parse2(tokens) {
            Ok(parsed) => parsed,
            Err(error) => {
                errors.push(error);
                return Args { args: Vec::new() };
            }
        };
        let mut args: Vec<Arg> = Vec::new();
        for arg in parsed {
            let name = arg.name.unraw().to_string();
            if !allowed.contains(&name.as_str()) {
                errors.spanned(
                    &arg.name,
                    format!(
                        "unknown argument `{name}` in `#[{attr}]`; expected one of: {}",
                        list(allowed)
                    ),
                );
            } else if args.iter().any(|a| a.name == arg.name) {
                errors.spanned(
                    &arg.name,
                    format!("duplicate argument `{name}` in `#[{attr}]`"),
                );
            } else {
                args.push(arg);
            }
        }
        Args { args }
    }

    /// Removes and returns the argument called `name`.
    pub fn take(&mut self, name: &str) -> Option<Arg> {
        let index = self.args.iter().position(|a| a.name == name)?;
        Some(self.args.remove(index))
    }
}

/// `` `a`, `b`, `c` ``
pub fn list(names: &[&str]) -> String {
    names
        .iter()
        .map(|n| format!("`{n}`"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The value without the invisible group that a `macro_rules!` fragment (`$x:path`,
/// `$x:literal`) arrives in.
fn ungrouped(value: &Expr) -> &Expr {
    match value {
        Expr::Group(group) => ungrouped(&group.expr),
        other => other,
    }
}

/// The value as a string literal, if it is one.
pub fn as_str(value: &Expr) -> Option<&LitStr> {
    match ungrouped(value) {
        Expr::Lit(ExprLit {
            lit: Lit::Str(s), ..
        }) => Some(s),
        _ => None,
    }
}

/// A string of comma-separated entries (`cpu = "avx2,fma"`, `dtypes = "f32,f64"`): the string
/// and its entries as written (trimmed; an empty one stays, for the validate phase to report), or
/// `None` when the value is not a string, reported on it with `expected`.
pub fn comma_list(arg: &Arg, expected: &str, errors: &mut Errors) -> Option<(LitStr, Vec<String>)> {
    let Some(lit) = as_str(&arg.value) else {
        errors.spanned(&arg.value, expected);
        return None;
    };
    let entries = lit
        .value()
        .split(',')
        .map(|e| e.trim().to_owned())
        .collect();
    Some((lit.clone(), entries))
}

/// The value as a path, if it is one.
pub fn as_path(value: &Expr) -> Option<&Path> {
    match ungrouped(value) {
        Expr::Path(ExprPath {
            qself: None, path, ..
        }) => Some(path),
        _ => None,
    }
}

/// A flag argument: `flag` or `flag = true` is the span of its name; absent, `flag = false`, or a
/// value that is not a `bool` (reported) is `None`.
pub fn flag(args: &mut Args, name: &str, attr: &str, errors: &mut Errors) -> Option<Span> {
    let arg = args.take(name)?;
    match ungrouped(&arg.value) {
        Expr::Lit(ExprLit {
            lit: Lit::Bool(b), ..
        }) => b.value.then(|| arg.name.span()),
        other => {
            errors.spanned(
                other,
                format!("`{name}` in `#[{attr}]` is a flag: write `{name}` or `{name} = false`"),
            );
            None
        }
    }
}

/// The `crate = path` option: where generated code finds switchyard (for re-exporters). `None`
/// when absent, or when not a path (reported): generated code then names `::switchyard`.
pub fn crate_path(args: &mut Args, errors: &mut Errors) -> Option<Path> {
    let arg = args.take("crate")?;
    let path = as_path(&arg.value).cloned();
    if path.is_none() {
        errors.spanned(
            &arg.value,
            "`crate` takes a path to the switchyard crate, e.g. `crate = ::my_reexport::switchyard`",
        );
    }
    path
}
