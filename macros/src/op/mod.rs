//! `#[op(name = "mul")] pub fn mul(x: &Tensor, y: &Tensor) -> Tensor;`
//!
//! Expands to the callable `mul`, the fallible `try_mul`, and a module `mul` holding the op's
//! public surface: `redispatch`, `handle`, `register` and the signature types kernels are checked
//! against. A body, if present, becomes the op's composite kernel.
//!
//! Phases: `ast.rs` parses the attribute and the function, keeping spans; `validate.rs` checks
//! one rule per function; `expand.rs` generates the op from the validated structs, with
//! `boxing.rs` (boxed-call adapters), `composite.rs` (the body as a kernel) and `spans.rs` (where
//! errors in generated code land, hygienic locals).

mod ast;
mod boxing;
mod composite;
mod expand;
mod spans;
mod validate;

use proc_macro2::TokenStream;
use quote::quote;

use crate::ctxt::Errors;
pub use ast::is_mut_reference;
use ast::{OpAttr, OpFn};

pub fn expand(attr: TokenStream, item: TokenStream) -> TokenStream {
    let mut errors = Errors::new();
    let attr = OpAttr::parse(attr, &mut errors);
    let op = match OpFn::parse_item(item) {
        Ok(op) => op,
        Err(tokens) => {
            let compile_errors = errors.finish();
            return quote!(#compile_errors #tokens);
        }
    };
    // An error in the attribute leaves the op generated (a rejected value falls back to its
    // default), so that its kernels and callers compile and the mistake is reported once. A
    // signature that breaks a rule cannot be generated: then only the function is emitted.
    validate::attr(&attr, &op, &mut errors);
    let before = errors.len();
    validate::signature(&op, &mut errors);
    let signature_ok = errors.len() == before;
    let compile_errors = errors.finish();
    let generated = if signature_ok {
        expand::op(&attr, &op)
    } else {
        expand::stub(&op)
    };
    quote!(#compile_errors #generated)
}

/// An op in a crate without the engine's name (`engine_name.rs`): the error (said once per
/// crate) and the function alone, so that its callers compile.
pub fn without_engine(error: Option<syn::Error>, item: TokenStream) -> TokenStream {
    let error = error.map(|e| e.to_compile_error());
    match OpFn::parse_item(item) {
        Ok(op) => {
            let stub = expand::stub(&op);
            quote!(#error #stub)
        }
        Err(tokens) => quote!(#error #tokens),
    }
}
