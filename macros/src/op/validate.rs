//! The rules an `#[op]` must follow, one function per rule, each reporting on the offending
//! token. Rules on the attribute leave the op generated (with the default in place of a rejected
//! value); rules on the signature mean it cannot be.

use syn::{FnArg, Signature};

use super::ast::{NAME_TAKES, OpAttr, OpFn, plain};
use crate::ctxt::Errors;
use crate::sig;

/// Every rule on the attribute.
pub fn attr(attr: &OpAttr, errors: &mut Errors) {
    name_not_empty(attr, errors);
}

/// The rules on the attribute that depend on the function.
pub fn attr_with_fn(attr: &OpAttr, op: &OpFn, errors: &mut Errors) {
    error_needs_body(attr, op, errors);
}

/// Every rule on the function's signature.
pub fn signature(op: &OpFn, errors: &mut Errors) {
    sig::check_common(&op.sig, "an `#[op]`", errors);
    not_result(&op.sig, errors);
    plain_params(&op.sig, errors);
}

// The name identifies the op in `find_op`, dumps and errors: an empty one identifies nothing.
fn name_not_empty(attr: &OpAttr, errors: &mut Errors) {
    if let Some(name) = attr.name.as_ref().filter(|name| name.value().is_empty()) {
        errors.spanned(name, NAME_TAKES);
    }
}

// `error = …` is the type of the body's error: a declaration has no body to fail.
fn error_needs_body(attr: &OpAttr, op: &OpFn, errors: &mut Errors) {
    if let (Some(error), None) = (&attr.error, &op.body) {
        errors.spanned(error, "`error = …` names the error type of the op's body, and this op has no body: give it one, or leave `error` out");
    }
}

// Every op already has a `try_` form; a `Result` return would nest errors.
fn not_result(sig: &Signature, errors: &mut Errors) {
    if sig::returns_result(&sig.output) {
        errors.spanned(&sig.output, "`#[op]` cannot return `Result`: every op already has a `try_` form returning `Result<_, DispatchError>`; declare the plain return type");
    }
}

// Parameters name the schema and are forwarded by name, so each must be a plain identifier.
fn plain_params(sig: &Signature, errors: &mut Errors) {
    for arg in &sig.inputs {
        let FnArg::Typed(typed) = arg else { continue };
        if plain(&typed.pat).is_none() {
            errors.spanned(&typed.pat, "`#[op]` parameters must be plain names such as `x: &Tensor`: they name the op's schema");
        }
    }
}
