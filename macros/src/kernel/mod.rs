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
    let attr = KernelAttr::parse(attr, &mut errors);
    validate::kernel(&attr, &function, &mut errors);
    match (errors.finish(), &attr.op, &attr.key) {
        (None, Some(op), Some(key)) => expand::registration(&function, &attr, op, key),
        (compile_errors, op, _) => {
            let function = expand::unregistered(function, op.as_ref());
            quote!(#compile_errors #function)
        }
    }
}
