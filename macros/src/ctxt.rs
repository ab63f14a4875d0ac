//! Collects every error of one macro invocation, so that none is lost.

use proc_macro2::TokenStream;
use std::fmt::Display;

/// Errors found so far. Dropping it without calling [`Errors::finish`] panics: an error that was
/// pushed must reach the user.
pub struct Errors {
    errors: Option<Vec<syn::Error>>,
}

impl Errors {
    pub fn new() -> Self {
        Errors {
            errors: Some(Vec::new()),
        }
    }

    /// Records an error spanning `tokens`.
    pub fn spanned(&mut self, tokens: impl quote::ToTokens, message: impl Display) {
        self.push(syn::Error::new_spanned(tokens, message));
    }

    /// Records an error at `span`.
    pub fn at(&mut self, span: proc_macro2::Span, message: impl Display) {
        self.push(syn::Error::new(span, message));
    }

    pub fn push(&mut self, error: syn::Error) {
        self.errors
            .as_mut()
            .expect("errors already finished")
            .push(error);
    }

    /// How many errors were recorded so far.
    pub fn len(&self) -> usize {
        self.errors.as_ref().map_or(0, Vec::len)
    }

    /// All errors as one `compile_error!` stream, or `None` when there were none.
    pub fn finish(mut self) -> Option<TokenStream> {
        let errors = self.errors.take().expect("errors already finished");
        errors
            .into_iter()
            .reduce(|mut all, next| {
                all.combine(next);
                all
            })
            .map(|e| e.to_compile_error())
    }
}

impl Drop for Errors {
    fn drop(&mut self) {
        if self.errors.is_some() && !std::thread::panicking() {
            panic!("switchyard-macros bug: errors dropped without being reported");
        }
    }
}
