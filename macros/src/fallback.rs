//! `#[fallback(key = Tracing)] fn trace(op: &OpHandle, keys: DispatchKeySet, stack: &mut Stack)
//! -> Result<(), DispatchError> { … }`
//!
//! Keeps the function as written and adds, in an anonymous `const` block, a registration in the
//! global fallback slice. The function is checked against `BoxedKernel`, with the error on its
//! own signature. Small enough for one file: parse ([`FallbackAttr`]), validate, expand.

use proc_macro2::{Span, TokenStream};
use quote::quote;
use syn::{ItemFn, LitStr, Path};

use crate::args::{self, Args};
use crate::ctxt::Errors;
use crate::keys::{self, KeyRef};
use crate::private::{location, private};
use crate::sig;

pub fn expand(attr: TokenStream, item: TokenStream) -> TokenStream {
    let function = match sig::parse_fn(item) {
        Ok(function) => function,
        Err(tokens) => return tokens,
    };
    let mut errors = Errors::new();
    let attr = FallbackAttr::parse(attr, &mut errors);
    validate(&attr, &function, &mut errors);
    match (errors.finish(), &attr.key) {
        (None, Some(key)) => registration(&function, &attr, key),
        (compile_errors, _) => {
            let mut function = function;
            sig::drop_variadic(&mut function.sig);
            quote!(#compile_errors #function)
        }
    }
}

// ---- ast ----

/// `#[fallback(key = …, crate = path)]`. `key` is `None` only when missing or malformed, which
/// is reported.
struct FallbackAttr {
    key: Option<KeyRef>,
    /// `crate = path`: where generated code finds switchyard (for re-exporters).
    krate: Option<Path>,
}

const ALLOWED: &[&str] = &["key", "crate"];

impl FallbackAttr {
    fn parse(tokens: TokenStream, errors: &mut Errors) -> FallbackAttr {
        let mut args = Args::parse(tokens, "fallback", ALLOWED, errors);
        let krate = args::crate_path(&mut args, errors);
        // `key` is required: it picks the runtime key whose slot the fallback fills in every op's
        // table.
        let key = match args.take("key") {
            Some(arg) => KeyRef::parse(&arg.value, "fallback", errors),
            None => {
                errors.at(
                    Span::call_site(),
                    "`#[fallback]` needs `key = …`: the dispatch key it serves for every op, e.g. \
                     `key = Tracing`",
                );
                None
            }
        };
        FallbackAttr { key, krate }
    }
}

// ---- validate ----

/// Every rule on the attribute and the function (the key's are in `keys.rs`, the signature's in
/// `sig.rs`).
fn validate(attr: &FallbackAttr, function: &ItemFn, errors: &mut Errors) {
    if let Some(key) = &attr.key {
        keys::not_library_key(key, errors);
        keys::not_alias_for_fallback(key, errors);
        keys::known(key, "fallback", errors);
    }
    sig::check_common(&function.sig, "a `#[fallback]`", errors);
}

// ---- expand ----

/// The function and its registration, from the validated attribute.
fn registration(function: &ItemFn, attr: &FallbackAttr, key: &KeyRef) -> TokenStream {
    let private = private(attr.krate.as_ref());
    let key = keys::dispatch_key(key, &private);
    let ident = &function.sig.ident;
    let name = LitStr::new(&ident.to_string(), ident.span());
    let reference = sig::spanned_reference(&function.sig, ident);
    let location = location(&private, ident.span());
    quote! {
        #function

        #[allow(unsafe_code)] // linkme's `link_section`
        const _: () = {
            // `*&fallback_fn` carries the user's spans, so clippy would lint it as theirs.
            #[allow(clippy::deref_addrof)]
            const __SWITCHYARD_FALLBACK: #private::BoxedKernel = #reference;

            #[cfg_attr(not(target_family = "wasm"), #private::linkme::distributed_slice(#private::FALLBACKS))]
            #[cfg_attr(not(target_family = "wasm"), linkme(crate = #private::linkme))]
            static REGISTRATION: #private::FallbackRegistration = #private::FallbackRegistration::new(
                #key,
                #private::FallbackKind::Boxed(__SWITCHYARD_FALLBACK),
                #private::KernelMeta::new(#name, #location),
            );
            // WebAssembly, which linkme does not serve: added to the list by a constructor.
            #[cfg(target_family = "wasm")]
            #private::submit!(#private::FALLBACKS, REGISTRATION);
        };
    }
}
