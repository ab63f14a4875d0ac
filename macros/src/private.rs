//! What generated code names: the hidden, versioned `__private_v1` module of switchyard (or of the
//! crate a re-exporter names with `crate = path`), and the source location of a token.

use proc_macro2::{Span, TokenStream};
use quote::{quote, quote_spanned};
use syn::Path;

/// `::switchyard::__private_v1`, or `<crate>::__private_v1` with `crate = path`.
pub fn private(krate: Option<&Path>) -> TokenStream {
    match krate {
        Some(krate) => quote!(#krate::__private_v1),
        None => quote!(::switchyard::__private_v1),
    }
}

/// `Location { module, file, line }` of the token at `span`.
pub fn location(private: &TokenStream, span: Span) -> TokenStream {
    let line = quote_spanned!(span=> ::core::line!());
    quote!(#private::Location { module: ::core::module_path!(), file: ::core::file!(), line: #line })
}
