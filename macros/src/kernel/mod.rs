//! `#[kernel(op = "mul", key = CpuSimd)] fn mul_simd(x: &Tensor, y: &Tensor) -> Tensor { … }`
//!
//! Keeps the function as written and adds, in an anonymous `const` block, a typed registration in
//! the op's kernel slice. The function is checked against the op's `Signature` (or
//! `FallibleSignature` when it returns `Result`), with the error on the kernel's own signature.
//!
//! Phases: `ast.rs` parses the attribute into a [`KernelAttr`](ast::KernelAttr), keeping spans;
//! `validate.rs` checks one rule per function; `expand.rs` generates the registration from the
//! validated attribute, or, after an error, the function alone.

mod ast;
mod expand;
mod scope;
mod validate;

use proc_macro2::TokenStream;
use quote::quote;

use crate::ctxt::Errors;
use crate::sig;
use ast::KernelAttr;

pub fn expand(attr: TokenStream, item: TokenStream) -> TokenStream {
    let function = match sig::parse_fn(item) {
        Ok(function) => function,
        Err(tokens) => return tokens,
    };
    let mut errors = Errors::new();
    let mut attr = KernelAttr::parse(attr, &mut errors);
    resolve_op(&mut attr, &mut errors);
    validate::kernel(&attr, &function, &mut errors);
    match (errors.finish(), &attr.op, &attr.key) {
        (None, Some(op), Some(key)) => expand::registration(&function, &attr, op, key),
        (compile_errors, op, _) => {
            let function = expand::unregistered(function, op.as_ref());
            quote!(#compile_errors #function)
        }
    }
}

/// Reads `op = …` against the kernel's file (`scope.rs`): an op's `name` string becomes the item
/// that declares it; a name that cannot be in scope is reported in our words, and left out so
/// that rustc does not report it again.
fn resolve_op(attr: &mut KernelAttr, errors: &mut Errors) {
    let Some(op) = &mut attr.op else { return };
    let single = op.single();
    let scope = scope::lookup(op.span, single.as_deref(), op.string.as_deref());
    // A standard op's full name (`op = "switchyard::add"`) is its item in `switchyard::ops`.
    if !matches!(scope, scope::Scope::NamedItem(_))
        && attr.krate.is_none()
        && let Some(bare) = op
            .string
            .as_deref()
            .and_then(|string| string.strip_prefix("switchyard::"))
        && let Ok(bare) = syn::parse_str::<syn::Ident>(bare)
    {
        let bare = syn::Ident::new(&bare.to_string(), op.span);
        let root = syn::Ident::new("switchyard", op.span);
        let ops = syn::Ident::new("ops", op.span);
        op.path = syn::parse_quote!(#root::#ops::#bare);
        return;
    }
    match scope {
        scope::Scope::NamedItem(ident) => op.path = ident.into(),
        scope::Scope::Unknown(ops) => {
            let name = single.unwrap_or_default();
            let hint = similar(&name, &ops)
                .map(|op| format!(" (did you mean `{op}`?)"))
                .unwrap_or_default();
            let string = if op.string.is_some() {
                format!(
                    "; a string is read as that path (`op = \"{name}\"` is `op = {name}`), or as \
                     the `name = \"…\"` of an `#[op]` in this file"
                )
            } else {
                String::new()
            };
            errors.at(
                op.span,
                format!(
                    "no op `{name}` in scope{hint}: `op =` takes the Rust item declared with \
                     `#[op]` (`#[op] pub fn {name}(…) -> …;`), declared or imported here, or its \
                     path (`op = my_ops::{name}`, `op = switchyard::ops::relu`){string}"
                ),
            );
            attr.op = None;
        }
        scope::Scope::NameElsewhere {
            namespace,
            bare,
            crate_namespace,
        } => {
            let full = format!("{namespace}::{bare}");
            let fix = if crate_namespace.as_deref() == Some(namespace.as_str()) {
                format!(
                    "it is an op of this crate, declared in another file: write its path from \
                     here (`op = crate::my_ops::{bare}`), or import it (`use crate::my_ops::{bare};`) \
                     and write `op = {bare}`"
                )
            } else {
                format!(
                    "write its path (`op = {namespace}::my_ops::{bare}`, through the crate or \
                     module that declares it), or import it and write `op = {bare}`; \
                     `switchyard::find_op(\"{full}\").unwrap().item_path()` prints the path"
                )
            };
            errors.at(
                op.span,
                format!(
                    "`op = \"{full}\"` is an op's name (op `{bare}` in namespace `{namespace}`), \
                     and no `#[op]` in this file has it: `op =` takes the op's Rust item, the \
                     function declared with `#[op]`; {fix}"
                ),
            );
            attr.op = None;
        }
        scope::Scope::NotAnOp => {
            let name = single.unwrap_or_default();
            errors.at(
                op.span,
                format!(
                    "`{name}` is a plain function, not an op: `op =` takes the Rust item declared \
                     with `#[op]`; declare it with `#[op]` (its body then becomes the op's \
                     composite kernel), or name the op this kernel implements"
                ),
            );
            attr.op = None;
        }
        scope::Scope::Unclear => {}
    }
}

/// The op in `ops` that `name` most likely misspells.
fn similar<'a>(name: &str, ops: &'a [String]) -> Option<&'a str> {
    ops.iter()
        .map(|op| (distance(name, op), op))
        .filter(|(d, op)| *d <= 2.max(op.len() / 3))
        .min_by_key(|(d, _)| *d)
        .map(|(_, op)| op.as_str())
}

/// Levenshtein distance, by characters.
pub fn distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut diagonal = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let above = row[j + 1];
            row[j + 1] = (diagonal + usize::from(ca != *cb))
                .min(row[j] + 1)
                .min(above + 1);
            diagonal = above;
        }
    }
    row[b.len()]
}
