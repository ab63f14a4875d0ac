//! Rules on the function signature of an `#[op]` or `#[kernel]`, one function per rule.
//!
//! Each rule reports on the offending token and says why, because a kernel is stored as one
//! plain, safe function pointer and an op is called like a plain function.

use proc_macro2::{TokenStream, TokenTree};
use quote::{ToTokens, quote_spanned};
use syn::{FnArg, ItemFn, ReturnType, Signature, Type};

use crate::ctxt::Errors;

/// Every rule that ops and kernels share.
pub fn check_common(sig: &Signature, what: &str, errors: &mut Errors) {
    not_generic(sig, what, errors);
    not_async(sig, what, errors);
    not_const(sig, what, errors);
    not_unsafe(sig, what, errors);
    no_abi(sig, what, errors);
    not_variadic(sig, what, errors);
    no_receiver(sig, what, errors);
    no_impl_trait(sig, what, errors);
}

// A table slot holds one function pointer: there is no type to instantiate a generic with.
fn not_generic(sig: &Signature, what: &str, errors: &mut Errors) {
    if !sig.generics.params.is_empty() {
        errors.spanned(&sig.generics, format!(
            "{what} cannot be generic: an op has one signature and its kernels are stored as function pointers of that signature; write one per type"
        ));
    } else if let Some(clause) = &sig.generics.where_clause {
        errors.spanned(
            clause,
            format!("{what} cannot have a `where` clause: it cannot be generic"),
        );
    }
}

// Dispatch calls kernels synchronously and returns their value.
fn not_async(sig: &Signature, what: &str, errors: &mut Errors) {
    if let Some(token) = &sig.asyncness {
        errors.spanned(
            token,
            format!("{what} cannot be `async`: dispatch calls it synchronously"),
        );
    }
}

// Kernels run at dispatch time through a function pointer; `const` would promise what dispatch
// cannot keep.
fn not_const(sig: &Signature, what: &str, errors: &mut Errors) {
    if let Some(token) = &sig.constness {
        errors.spanned(
            token,
            format!("{what} cannot be `const`: it is called through dispatch at run time"),
        );
    }
}

// The table stores safe function pointers; calling an `unsafe fn` needs a proof dispatch lacks.
fn not_unsafe(sig: &Signature, what: &str, errors: &mut Errors) {
    if let Some(token) = &sig.unsafety {
        errors.spanned(token, format!(
            "{what} cannot be `unsafe`: dispatch calls it as a safe function; keep `unsafe` blocks inside the body"
        ));
    }
}

// Table slots use the Rust ABI.
fn no_abi(sig: &Signature, what: &str, errors: &mut Errors) {
    if let Some(abi) = &sig.abi {
        errors.spanned(
            abi,
            format!("{what} cannot have an `extern` ABI: dispatch uses the Rust ABI"),
        );
    }
}

// A function pointer has a fixed arity.
fn not_variadic(sig: &Signature, what: &str, errors: &mut Errors) {
    if let Some(variadic) = &sig.variadic {
        errors.spanned(
            variadic,
            format!("{what} cannot be variadic: an op has a fixed number of arguments"),
        );
    }
}

// Ops and kernels are free functions.
fn no_receiver(sig: &Signature, what: &str, errors: &mut Errors) {
    if let Some(FnArg::Receiver(receiver)) = sig.inputs.first() {
        errors.spanned(
            receiver,
            format!("{what} cannot take `self`: write a free function"),
        );
    }
}

// `impl Trait` in argument position is a hidden generic parameter.
fn no_impl_trait(sig: &Signature, what: &str, errors: &mut Errors) {
    let types = sig.inputs.iter().filter_map(|arg| match arg {
        FnArg::Typed(pat) => Some(&*pat.ty),
        FnArg::Receiver(_) => None,
    });
    let output = match &sig.output {
        ReturnType::Type(_, ty) => Some(&**ty),
        ReturnType::Default => None,
    };
    for ty in types.chain(output) {
        if let Type::ImplTrait(t) = ty {
            errors.spanned(t, format!("{what} cannot use `impl Trait`: it is stored as one function pointer; name the type"));
        }
    }
}

/// Removes a C-variadic `...` from a signature that is emitted again after an error: `not_variadic`
/// has reported it, and rustc would report it twice more.
pub fn drop_variadic(sig: &mut Signature) {
    sig.variadic = None;
}

/// Whether the return type is spelled `…Result<…>`: such a kernel may fail with a `DispatchError`.
pub fn returns_result(output: &ReturnType) -> bool {
    match output {
        ReturnType::Type(_, ty) => match &**ty {
            Type::Path(p) => p.path.segments.last().is_some_and(|s| s.ident == "Result"),
            _ => false,
        },
        ReturnType::Default => false,
    }
}

/// Whether the return type is spelled `…Result<T, E>` with `E` not spelled `…DispatchError`: a
/// kernel with its own error type, converted in its adapter. (`switchyard::Result<T>` and
/// `Result<T, DispatchError>` keep the direct path, which a redispatching layer measures.)
pub fn returns_own_error(output: &ReturnType) -> bool {
    let ReturnType::Type(_, ty) = output else {
        return false;
    };
    let Type::Path(p) = &**ty else { return false };
    let Some(last) = p.path.segments.last() else {
        return false;
    };
    let syn::PathArguments::AngleBracketed(args) = &last.arguments else {
        return false;
    };
    let types: Vec<&Type> = args
        .args
        .iter()
        .filter_map(|a| match a {
            syn::GenericArgument::Type(t) => Some(t),
            _ => None,
        })
        .collect();
    match types.as_slice() {
        [_, Type::Path(error)] => error
            .path
            .segments
            .last()
            .is_none_or(|s| s.ident != "DispatchError"),
        [_, _] => true,
        _ => false,
    }
}

/// Whether the first parameter's type is spelled `…DispatchKeySet`: such a kernel receives the
/// call's keys, to redispatch below its own key.
pub fn takes_keys_first(sig: &Signature) -> bool {
    match sig.inputs.first() {
        Some(FnArg::Typed(pat)) => match &*pat.ty {
            Type::Path(p) => p
                .path
                .segments
                .last()
                .is_some_and(|s| s.ident == "DispatchKeySet"),
            _ => false,
        },
        _ => false,
    }
}

/// `*&kernel_fn`, with `*` carrying the span of `fn` and the name that of the signature's last
/// token: rustc spans an expression from its first to its last token, so a signature mismatch is
/// underlined across the kernel's whole signature.
pub fn spanned_reference(sig: &Signature, target: &syn::Ident) -> TokenStream {
    let first = sig.fn_token.span;
    let last = sig
        .output
        .to_token_stream()
        .into_iter()
        .last()
        .as_ref()
        .map_or(sig.paren_token.span.close(), TokenTree::span);
    let mut ident = target.clone();
    ident.set_span(last);
    quote_spanned!(first=> *&#ident)
}

/// The attribute's item as a function; on failure, the parse error followed by the item as
/// written, so that nothing else is reported about it.
pub fn parse_fn(item: TokenStream) -> Result<ItemFn, TokenStream> {
    syn::parse2(item.clone()).map_err(|error| {
        let compile_error = error.to_compile_error();
        quote::quote!(#compile_error #item)
    })
}
