//! `#[fallback(key = Tracing)] fn trace(op: &OpHandle, keys: DispatchKeySet, stack: &mut Stack)
//! -> Result<(), DispatchError> { … }`
//!
//! Keeps the function as written and adds, in an anonymous `const` block, a registration in the
//! global fallback slice. The function is checked against `BoxedKernel`, with the error on its
//! own signature.

use proc_macro2::{Span, TokenStream};
use quote::quote;
use syn::{ItemFn, LitStr};

use crate::args::{self, Args};
use crate::ctxt::Errors;
use crate::op::location;
use crate::{keys, sig};

const ALLOWED: &[&str] = &["key", "crate"];

// `key` picks the runtime key whose slot the fallback fills in every op's table.
fn key(args: &mut Args, private: &TokenStream, errors: &mut Errors) -> Option<TokenStream> {
    let Some(arg) = args.take("key") else {
        errors.at(
            Span::call_site(),
            "`#[fallback]` needs `key = …`: the dispatch key it serves for every op, e.g. \
             `key = Tracing`",
        );
        return None;
    };
    keys::key_expr(&arg.value, "fallback", private, errors)
}

pub fn expand(attr: TokenStream, item: TokenStream) -> TokenStream {
    let function = match sig::parse_fn(item) {
        Ok(function) => function,
        Err(tokens) => return tokens,
    };
    let mut errors = Errors::new();
    let mut args = Args::parse(attr, "fallback", ALLOWED, &mut errors);
    let krate = args::crate_path(&mut args, &mut errors);
    let private = quote!(#krate::__private_v1);
    let key = key(&mut args, &private, &mut errors);
    sig::check_common(&function.sig, "a `#[fallback]`", &mut errors);
    match (errors.finish(), key) {
        (None, Some(key)) => generate(&function, &key, &private),
        (compile_errors, _) => {
            let mut function = function;
            sig::drop_variadic(&mut function.sig);
            quote!(#compile_errors #function)
        }
    }
}

fn generate(function: &ItemFn, key: &TokenStream, private: &TokenStream) -> TokenStream {
    let ident = &function.sig.ident;
    let name = LitStr::new(&ident.to_string(), ident.span());
    let reference = sig::spanned_reference(&function.sig, ident);
    let location = location(private, ident.span());
    quote! {
        #function

        #[allow(unsafe_code)] // linkme's `link_section`
        const _: () = {
            // `*&fallback_fn` carries the user's spans, so clippy would lint it as theirs.
            #[allow(clippy::deref_addrof)]
            const __SWITCHYARD_FALLBACK: #private::BoxedKernel = #reference;

            #[#private::linkme::distributed_slice(#private::FALLBACKS)]
            #[linkme(crate = #private::linkme)]
            static REGISTRATION: #private::FallbackRegistration = #private::FallbackRegistration::new(
                #key,
                #private::FallbackKind::Boxed(__SWITCHYARD_FALLBACK),
                #private::KernelMeta::new(#name, #location),
            );
        };
    }
}
