//! Procedural macros of [switchyard](https://docs.rs/switchyard). Use them through the
//! `switchyard` crate, which re-exports them; this crate's generated code names only
//! `::switchyard::__private_v1`.
//!
//! Each macro runs in three phases: it parses its attribute and item into a small AST that keeps
//! spans (`op/ast.rs`, `kernel/ast.rs`, `FallbackAttr`), checks one rule per function
//! (`op/validate.rs`, `kernel/validate.rs`, and the shared rules of `keys.rs`, `cpu.rs`,
//! `dtypes.rs`, `sig.rs`), and expands last, from the validated AST (`op/expand.rs`, `kernel/expand.rs`), so
//! every misuse is reported on the offending token and no rule is checked during expansion.

#![forbid(unsafe_code)]

mod args;
mod cpu;
mod ctxt;
mod dtypes;
mod engine_name;
mod fallback;
mod kernel;
mod keys;
mod mangle;
mod namespace;
mod op;
mod private;
mod schema;
mod sig;

use proc_macro::TokenStream;

/// Declares an operator. Documented where it is re-exported: `switchyard::op`.
#[proc_macro_attribute]
pub fn op(args: TokenStream, item: TokenStream) -> TokenStream {
    let args = args.into();
    if let Some(error) = engine_name::missing(&args) {
        return op::without_engine(error, item.into()).into();
    }
    op::expand(args, item.into()).into()
}

/// Registers a kernel of an operator for one dispatch key. Documented where it is re-exported:
/// `switchyard::kernel`.
#[proc_macro_attribute]
pub fn kernel(args: TokenStream, item: TokenStream) -> TokenStream {
    let args = args.into();
    if let Some(error) = engine_name::missing(&args) {
        return without_engine(error, item.into()).into();
    }
    kernel::expand(args, item.into()).into()
}

/// Registers a boxed kernel for every op at one dispatch key. Documented where it is re-exported:
/// `switchyard::fallback`.
#[proc_macro_attribute]
pub fn fallback(args: TokenStream, item: TokenStream) -> TokenStream {
    let args = args.into();
    if let Some(error) = engine_name::missing(&args) {
        return without_engine(error, item.into()).into();
    }
    fallback::expand(args, item.into()).into()
}

/// A kernel or fallback in a crate without the engine's name: the error (said once per crate)
/// and the function as written.
fn without_engine(
    error: Option<syn::Error>,
    item: proc_macro2::TokenStream,
) -> proc_macro2::TokenStream {
    let error = error.map(|e| e.to_compile_error());
    quote::quote!(#error #item)
}
