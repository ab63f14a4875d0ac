//! The rules an `#[op]` must follow, one function per rule, each reporting on the offending
//! token. Rules on the attribute leave the op generated (with the default in place of a rejected
//! value); rules on the signature mean it cannot be.

use syn::{FnArg, Signature};

use super::ast::{NAME_TAKES, OpAttr, OpFn, plain};
use crate::ctxt::Errors;
use crate::namespace;
use crate::sig;

/// Every rule on the attribute.
pub fn attr(attr: &OpAttr, op: &OpFn, errors: &mut Errors) {
    name_not_empty(attr, errors);
    name_has_one_namespace(attr, errors);
    namespace_known(attr, op, errors);
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

// A name is `x` or `ns::x`: lookup splits it there, and a bare `x` finds it.
fn name_has_one_namespace(attr: &OpAttr, errors: &mut Errors) {
    if let Some(name) = attr.name.as_ref() {
        let value = name.value();
        if !value.is_empty() && !namespace::well_formed(&value) {
            errors.spanned(name, format!("`{value}`: {}", namespace::NAME_FORM));
        }
    }
}

// Without a namespace the op takes its crate's name, which Cargo gives the macro.
fn namespace_known(attr: &OpAttr, op: &OpFn, errors: &mut Errors) {
    let given = attr.name.as_ref().map(syn::LitStr::value);
    if !given.as_deref().is_some_and(|name| name.contains("::"))
        && namespace::crate_namespace().is_none()
    {
        errors.at(
            op.name_span(attr),
            "an op without a namespace takes its crate's name, and this build does not say it \
             (`CARGO_CRATE_NAME` is set by Cargo): give the full name, e.g. \
             `#[op(name = \"my_crate::mul\")]`",
        );
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
