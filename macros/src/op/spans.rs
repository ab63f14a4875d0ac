//! Spans of generated tokens: where rustc reports an error in generated code (on the user's own
//! type), and locals that neither hide nor are hidden by the user's names.

use proc_macro2::{Span, TokenStream};
use quote::{ToTokens, quote, quote_spanned};
use syn::{Ident, Type};

/// A generated local variable or parameter: mixed-site, so that it neither hides nor is hidden by
/// a parameter of the user's with the same name.
pub fn local(name: &str) -> Ident {
    Ident::new(name, Span::mixed_site())
}

/// `<ty as Trait>::method`, spanned from the type's first token to its last: rustc reports a
/// missing `ty: Trait` on the whole path, which then covers exactly the type as written, so that
/// every use of the type is one and the same diagnostic (`&Window`, not `&` and `&Window`).
pub fn through(ty: &Type, trait_: &TokenStream, method: &str) -> TokenStream {
    let mut tokens = ty.to_token_stream().into_iter();
    let first = tokens.next().map_or(Span::call_site(), |t| t.span());
    let last = tokens.last().map_or(first, |t| t.span());
    let method = Ident::new(method, last);
    let open = quote_spanned!(first=> <);
    quote!(#open #ty as #trait_ > :: #method)
}

/// The span of the first token of `tokens` (the op's result type, where its errors belong).
pub fn first_span(tokens: &TokenStream) -> Span {
    tokens
        .clone()
        .into_iter()
        .next()
        .map_or(Span::call_site(), |t| t.span())
}
