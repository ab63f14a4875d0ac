//! The dispatch keys a `key = …` argument may name.
//!
//! **Invariant:** this list equals `switchyard::DispatchKey::ALL`. The integration test
//! `tests/tests/keys.rs` registers a kernel at every key by name, so a key missing on either side
//! fails to compile.

use proc_macro2::TokenStream;
use quote::quote;
use syn::{Expr, Path};

use crate::args::{as_path, list};
use crate::ctxt::Errors;

/// Runtime keys, as written in `DispatchKey::…`.
const KEYS: &[&str] = &[
    "Profiler",
    "Tracing",
    "Mode1",
    "Mode2",
    "Mode3",
    "AutogradWgpu",
    "AutogradPrivateUse1",
    "AutogradPrivateUse2",
    "AutogradPrivateUse3",
    "AutogradCpu",
    "Custom1",
    "Custom2",
    "Custom3",
    "Custom4",
    "Wgpu",
    "PrivateUse1",
    "PrivateUse2",
    "PrivateUse3",
    "CpuSimd",
    "CpuNaive",
];

/// The library's own keys (`trace()` and `profile()`): named only to refuse them.
const BUILTIN: &[&str] = &["BuiltinProfile", "BuiltinTrace"];

/// Alias keys: they stand for several runtime keys; kernels may be registered for them, fallbacks
/// may not.
const ALIASES: &[&str] = &["Autograd", "CompositeImplicit", "CompositeExplicit"];

/// Expands a `key = …` value of `#[kernel]` to an expression of type `KernelKey`: a runtime key
/// or an alias.
pub fn kernel_key_expr(
    value: &Expr,
    private: &TokenStream,
    errors: &mut Errors,
) -> Option<TokenStream> {
    if let Some(ident) = as_path(value).and_then(Path::get_ident) {
        let name = ident.to_string();
        if let Some(alias) = ALIASES.iter().find(|a| **a == name || screaming(a) == name) {
            let variant = syn::Ident::new(alias, ident.span());
            return Some(quote!(#private::KernelKey::Alias(#private::AliasKey::#variant)));
        }
    }
    let key = key_expr(value, "kernel", private, errors)?;
    Some(quote!(#private::KernelKey::Key(#key)))
}

/// `CpuSimd` → `CPU_SIMD`; `PrivateUse1` → `PRIVATE_USE1`.
fn screaming(name: &str) -> String {
    let mut out = String::new();
    for (i, c) in name.chars().enumerate() {
        if c.is_ascii_uppercase() && i > 0 {
            out.push('_');
        }
        out.push(c.to_ascii_uppercase());
    }
    out
}

fn folded(name: &str) -> String {
    name.chars()
        .filter(|c| *c != '_')
        .flat_map(char::to_lowercase)
        .collect()
}

/// The key a single identifier names, in either spelling.
pub fn builtin(name: &str) -> Option<&'static str> {
    KEYS.iter()
        .copied()
        .find(|k| *k == name || screaming(k) == name)
}

/// Expands a `key = …` value to an expression of type `DispatchKey`.
///
/// A single identifier must be a built-in key (`CpuSimd` or `CPU_SIMD`); a path of two or more
/// segments is taken as a `DispatchKey` constant (downstream keys) and type-checked by rustc.
pub fn key_expr(
    value: &Expr,
    attr: &str,
    private: &TokenStream,
    errors: &mut Errors,
) -> Option<TokenStream> {
    let Some(path) = as_path(value) else {
        errors.spanned(
            value,
            format!(
                "`key` in `#[{attr}]` takes a dispatch key name such as `CpuSimd` or a path to a \
             `DispatchKey` constant, not an expression"
            ),
        );
        return None;
    };
    match path.get_ident() {
        Some(ident) => builtin_key(ident, attr, private, errors),
        None => Some(constant_key(path, private)),
    }
}

fn builtin_key(
    ident: &syn::Ident,
    attr: &str,
    private: &TokenStream,
    errors: &mut Errors,
) -> Option<TokenStream> {
    let name = ident.to_string();
    if let Some(key) = builtin(&name) {
        let variant = syn::Ident::new(key, ident.span());
        return Some(quote!(#private::DispatchKey::#variant));
    }
    if let Some(builtin) = BUILTIN.iter().find(|k| **k == name || screaming(k) == name) {
        errors.spanned(
            ident,
            format!(
                "`{builtin}` is the library's own key (`switchyard::trace` and `switchyard::profile` \
                 use it); register your mode at `Tracing`, `Profiler` or `Mode1`..`Mode3` instead"
            ),
        );
        return None;
    }
    if ALIASES.iter().any(|a| *a == name || screaming(a) == name) {
        errors.spanned(
            ident,
            format!(
                "alias key `{name}` cannot be used with `#[{attr}]`: a fallback serves one runtime \
             key (e.g. `AutogradCpu`); alias keys are for `#[kernel]`"
            ),
        );
        return None;
    }
    let aliases: &[&str] = if attr == "kernel" { ALIASES } else { &[] };
    let hint = KEYS
        .iter()
        .chain(aliases)
        .find(|k| folded(k) == folded(&name))
        .map(|k| format!(" (did you mean `{k}`?)"))
        .unwrap_or_default();
    errors.spanned(
        ident,
        format!(
            "unknown dispatch key `{name}`{hint}; expected one of: {}{}, their SCREAMING_CASE forms \
         (`CPU_SIMD`), or a path to a `DispatchKey` constant",
            list(KEYS),
            if aliases.is_empty() {
                String::new()
            } else {
                format!(", the aliases {}", list(aliases))
            }
        ),
    );
    None
}

fn constant_key(path: &Path, private: &TokenStream) -> TokenStream {
    // Through a typed `const`, so a path to anything but a `DispatchKey` is a type error on it.
    quote!({
        const KEY: #private::DispatchKey = #path;
        KEY
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_spellings_resolve() {
        assert_eq!(builtin("CpuSimd"), Some("CpuSimd"));
        assert_eq!(builtin("CPU_SIMD"), Some("CpuSimd"));
        assert_eq!(builtin("PRIVATE_USE1"), Some("PrivateUse1"));
        assert_eq!(builtin("TRACING"), Some("Tracing"));
        assert_eq!(builtin("AUTOGRAD_CPU"), Some("AutogradCpu"));
        assert_eq!(builtin("Cuda"), None);
        assert_eq!(builtin("cpusimd"), None);
    }
}
