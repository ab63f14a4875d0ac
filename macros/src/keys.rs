//! The dispatch keys a `key = …` argument may name: parsed into a [`KeyRef`], checked one rule per
//! function, and expanded to the `DispatchKey` or `KernelKey` that generated code names.
//!
//! **Invariant:** the list of runtime keys equals `switchyard::DispatchKey::ALL`. The integration
//! test `tests/tests/keys.rs` registers a kernel at every key by name, so a key missing on either
//! side fails to compile.

use proc_macro2::TokenStream;
use quote::quote;
use syn::{Expr, Ident, Path};

use crate::args::{as_path, list};
use crate::ctxt::Errors;

/// Runtime keys, as written in `DispatchKey::…`.
const KEYS: &[&str] = &[
    "Profiler",
    "Tracing",
    "Mode1",
    "Mode2",
    "Mode3",
    "Autocast",
    "AutogradMeta",
    "AutogradWgpu",
    "AutogradPrivateUse1",
    "AutogradPrivateUse2",
    "AutogradPrivateUse3",
    "AutogradCpu",
    "Custom1",
    "Custom2",
    "Custom3",
    "Custom4",
    "Fake",
    "Meta",
    "Wgpu",
    "PrivateUse1",
    "PrivateUse2",
    "PrivateUse3",
    "CpuSimd",
    "CpuNaive",
];

/// The library's own keys (`trace()` and `profile()`): named only to refuse them.
const LIBRARY: &[&str] = &["BuiltinProfile", "BuiltinTrace"];

/// Alias keys: they stand for several runtime keys; kernels may be registered for them, fallbacks
/// may not.
const ALIASES: &[&str] = &["Autograd", "CompositeImplicit", "CompositeExplicit"];

// ---- ast ----

/// A parsed `key = …`, spans kept; what a name denotes is looked up by the rules and the
/// expansion, not here.
pub enum KeyRef {
    /// One identifier: a runtime key or an alias, in either spelling (`CpuSimd`, `CPU_SIMD`).
    Name(Ident),
    /// A path of two or more segments: a `DispatchKey` constant (downstream keys), type-checked
    /// by rustc.
    Constant(Path),
}

impl KeyRef {
    /// The value of `key = …` in `#[attr]`, if it is a name or a path (anything else is reported).
    pub fn parse(value: &Expr, attr: &str, errors: &mut Errors) -> Option<KeyRef> {
        let Some(path) = as_path(value) else {
            errors.spanned(
                value,
                format!(
                    "`key` in `#[{attr}]` takes a dispatch key name such as `CpuSimd` or a path to \
                     a `DispatchKey` constant, not an expression"
                ),
            );
            return None;
        };
        Some(match path.get_ident() {
            // A SCREAMING_CASE name that is not one of ours, and not a misspelling of one, is a
            // `DispatchKey` constant in scope (`const HOST: DispatchKey = …; key = HOST`).
            Some(ident)
                if matches!(named(&ident.to_string()), Named::Unknown)
                    && is_screaming(&ident.to_string())
                    && did_you_mean(&ident.to_string(), true).is_none() =>
            {
                KeyRef::Constant(path.clone())
            }
            Some(ident) => KeyRef::Name(ident.clone()),
            None => KeyRef::Constant(path.clone()),
        })
    }

    /// The runtime key this names (`"CpuSimd"` for `CPU_SIMD`), if it names one.
    pub fn runtime(&self) -> Option<&'static str> {
        match self.named() {
            Some((_, Named::Runtime(key))) => Some(key),
            _ => None,
        }
    }

    fn named(&self) -> Option<(&Ident, Named)> {
        match self {
            KeyRef::Name(ident) => Some((ident, named(&ident.to_string()))),
            KeyRef::Constant(_) => None,
        }
    }
}

/// What a key name denotes.
#[derive(Clone, Copy)]
enum Named {
    Runtime(&'static str),
    Alias(&'static str),
    Library(&'static str),
    Unknown,
}

fn named(name: &str) -> Named {
    let find = |list: &[&'static str]| {
        list.iter()
            .copied()
            .find(|k| *k == name || screaming(k) == name)
    };
    if let Some(key) = find(KEYS) {
        Named::Runtime(key)
    } else if let Some(alias) = find(ALIASES) {
        Named::Alias(alias)
    } else if let Some(key) = find(LIBRARY) {
        Named::Library(key)
    } else {
        Named::Unknown
    }
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

/// `HOST`, `MY_KEY_2`: how a constant is named.
fn is_screaming(name: &str) -> bool {
    name.chars().any(|c| c.is_ascii_uppercase())
        && name
            .chars()
            .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_')
}

/// The key (or, for `#[kernel]`, alias) that `name` misspells: one that differs only in case and
/// underscores, or (for names of six letters or more, so that a short constant such as `GPU`
/// stays the user's) in two letters at most.
fn did_you_mean(name: &str, with_aliases: bool) -> Option<&'static str> {
    let aliases: &[&'static str] = if with_aliases { ALIASES } else { &[] };
    let name = folded(name);
    let keys = || KEYS.iter().chain(aliases).copied();
    keys().find(|k| folded(k) == name).or_else(|| {
        (name.len() >= 6)
            .then(|| keys().find(|k| crate::kernel::distance(&folded(k), &name) <= 2))
            .flatten()
    })
}

fn folded(name: &str) -> String {
    name.chars()
        .filter(|c| *c != '_')
        .flat_map(char::to_lowercase)
        .collect()
}

// ---- validate ----

// The library's own keys hold `trace()` and `profile()`; a user's registration there would take
// their slot, so users are sent to the keys that are theirs.
pub fn not_library_key(key: &KeyRef, errors: &mut Errors) {
    if let Some((ident, Named::Library(key))) = key.named() {
        errors.spanned(
            ident,
            format!(
                "`{key}` is the library's own key (`switchyard::trace` and `switchyard::profile` \
                 use it); register your mode at `Tracing`, `Profiler` or `Mode1`..`Mode3` instead"
            ),
        );
    }
}

// A fallback fills one runtime key's slot in every op's table; an alias stands for several.
pub fn not_alias_for_fallback(key: &KeyRef, errors: &mut Errors) {
    if let Some((ident, Named::Alias(_))) = key.named() {
        errors.spanned(
            ident,
            format!(
                "alias key `{ident}` cannot be used with `#[fallback]`: a fallback serves one \
                 runtime key (e.g. `AutogradCpu`); alias keys are for `#[kernel]`"
            ),
        );
    }
}

// A name must be one the runtime has: otherwise rustc would report a missing `DispatchKey`
// variant inside generated code, without the list of keys or a hint.
pub fn known(key: &KeyRef, attr: &str, errors: &mut Errors) {
    let Some((ident, Named::Unknown)) = key.named() else {
        return;
    };
    let name = ident.to_string();
    let aliases: &[&str] = if attr == "kernel" { ALIASES } else { &[] };
    let hint = did_you_mean(&name, !aliases.is_empty())
        .map(|k| format!(" (did you mean `{k}`?)"))
        .unwrap_or_default();
    errors.spanned(
        ident,
        format!(
            "unknown dispatch key `{name}`{hint}; expected one of: {}{}, their SCREAMING_CASE forms \
         (`CPU_SIMD`), or a `DispatchKey` constant in scope (`key = HOST` after \
         `const HOST: DispatchKey = DispatchKey::PrivateUse1;`, or a path such as `keys::HOST`)",
            list(KEYS),
            if aliases.is_empty() {
                String::new()
            } else {
                format!(", the aliases {}", list(aliases))
            }
        ),
    );
}

// ---- expand ----

/// A validated key of `#[kernel]`, as an expression of type `KernelKey`: a runtime key or an
/// alias.
pub fn kernel_key(key: &KeyRef, private: &TokenStream) -> TokenStream {
    if let Some((ident, Named::Alias(alias))) = key.named() {
        let variant = Ident::new(alias, ident.span());
        return quote!(#private::KernelKey::Alias(#private::AliasKey::#variant));
    }
    let key = dispatch_key(key, private);
    quote!(#private::KernelKey::Key(#key))
}

/// A validated runtime key, as an expression of type `DispatchKey`.
pub fn dispatch_key(key: &KeyRef, private: &TokenStream) -> TokenStream {
    match key {
        KeyRef::Name(ident) => {
            let Some(key) = key.runtime() else {
                unreachable!("key `{ident}` was rejected by validation, not expanded");
            };
            let variant = Ident::new(key, ident.span());
            quote!(#private::DispatchKey::#variant)
        }
        // Through a typed `const`, so a path to anything but a `DispatchKey` is a type error on it.
        KeyRef::Constant(path) => quote!({
            const KEY: #private::DispatchKey = #path;
            KEY
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn runtime(name: &str) -> Option<&'static str> {
        match named(name) {
            Named::Runtime(key) => Some(key),
            _ => None,
        }
    }

    #[test]
    fn both_spellings_resolve() {
        assert_eq!(runtime("CpuSimd"), Some("CpuSimd"));
        assert_eq!(runtime("CPU_SIMD"), Some("CpuSimd"));
        assert_eq!(runtime("PRIVATE_USE1"), Some("PrivateUse1"));
        assert_eq!(runtime("TRACING"), Some("Tracing"));
        assert_eq!(runtime("AUTOGRAD_CPU"), Some("AutogradCpu"));
        assert_eq!(runtime("Cuda"), None);
        assert_eq!(runtime("cpusimd"), None);
    }

    #[test]
    fn names_fall_in_one_class() {
        assert!(matches!(
            named("COMPOSITE_IMPLICIT"),
            Named::Alias("CompositeImplicit")
        ));
        assert!(matches!(
            named("BUILTIN_TRACE"),
            Named::Library("BuiltinTrace")
        ));
        assert!(matches!(named("Cuda"), Named::Unknown));
    }
}
