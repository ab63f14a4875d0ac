//! `cpu = "avx2,fma"` in `#[kernel]`: the CPU features a kernel variant needs, checked here, and
//! the safe entry generated for a `#[target_feature]` kernel.

use proc_macro2::{Span, TokenStream};
use quote::{format_ident, quote};
use syn::{Attribute, FnArg, Ident, ItemFn, LitStr};

use crate::args::{self, Args, list};
use crate::ctxt::Errors;
use crate::keys;

// ---- ast ----

/// The features `cpu = …` accepts, each with its `CpuFeatures` constant.
///
/// **Invariant:** equals `switchyard::cpu::FEATURE_NAMES`; `tests/tests/simd_dispatch.rs`
/// registers a variant needing each one, so a name missing at runtime fails to compile.
const FEATURES: &[(&str, &str)] = &[
    ("sse2", "SSE2"),
    ("sse3", "SSE3"),
    ("ssse3", "SSSE3"),
    ("sse4.1", "SSE4_1"),
    ("sse4.2", "SSE4_2"),
    ("popcnt", "POPCNT"),
    ("avx", "AVX"),
    ("avx2", "AVX2"),
    ("fma", "FMA"),
    ("f16c", "F16C"),
    ("bmi1", "BMI1"),
    ("bmi2", "BMI2"),
    ("avx512f", "AVX512F"),
    ("avx512cd", "AVX512CD"),
    ("avx512bw", "AVX512BW"),
    ("avx512dq", "AVX512DQ"),
    ("avx512vl", "AVX512VL"),
    ("neon", "NEON"),
];

/// The aarch64 features; every other one is x86.
const AARCH64: &[&str] = &["neon"];

/// A parsed `cpu = "…"`: the features named, in the order written. `reported` when the value
/// had a mistake, already reported: the kernel is not generated, and no other rule is checked
/// against an incomplete list.
pub struct CpuAttr {
    features: Vec<&'static str>,
    reported: bool,
}

// ---- validate ----

fn names() -> Vec<&'static str> {
    FEATURES.iter().map(|(name, _)| *name).collect()
}

fn folded(name: &str) -> String {
    name.chars()
        .filter(char::is_ascii_alphanumeric)
        .map(|c| c.to_ascii_lowercase())
        .collect()
}

/// `cpu` is optional; when given it is a string of known features, for the CPU SIMD key.
pub fn parse(args: &mut Args, errors: &mut Errors) -> Option<CpuAttr> {
    let arg = args.take("cpu")?;
    let Some(lit) = args::as_str(&arg.value) else {
        errors.spanned(
            &arg.value,
            "`cpu` in `#[kernel]` takes a string of CPU features, e.g. `cpu = \"avx2,fma\"`",
        );
        return Some(CpuAttr {
            features: Vec::new(),
            reported: true,
        });
    };
    not_for_other_keys(args, &arg.name, errors);
    let Some(features) = features(lit, errors) else {
        return Some(CpuAttr {
            features: Vec::new(),
            reported: true,
        });
    };
    one_architecture(lit, &features, errors);
    Some(CpuAttr {
        features,
        reported: false,
    })
}

// Variants are chosen among the CPU SIMD kernels; a GPU or naive kernel that needs CPU features
// would be a kernel that silently disappears on some machines. (A key given by path is a
// downstream key whose device the macro cannot know; it is allowed.)
fn not_for_other_keys(args: &Args, cpu: &Ident, errors: &mut Errors) {
    let key = args
        .peek("key")
        .and_then(|arg| args::as_path(&arg.value))
        .and_then(|path| path.get_ident())
        .and_then(|ident| keys::builtin(&ident.to_string()));
    if let Some(key) = key.filter(|key| *key != "CpuSimd") {
        errors.spanned(
            cpu,
            format!(
                "`cpu` in `#[kernel]` selects among CPU SIMD variants, so it needs `key = CpuSimd`, \
                 not `{key}`"
            ),
        );
    }
}

// Each name must be one the runtime detects: a misspelled feature would never be detected, and
// the variant would silently never run.
fn features(lit: &LitStr, errors: &mut Errors) -> Option<Vec<&'static str>> {
    let value = lit.value();
    let mut found = Vec::new();
    let mut ok = true;
    for written in value.split(',').map(str::trim) {
        match FEATURES.iter().find(|(name, _)| *name == written) {
            Some((name, _)) if found.contains(name) => {
                errors.spanned(
                    lit,
                    format!("CPU feature `{name}` is listed twice in `cpu`"),
                );
                ok = false;
            }
            Some((name, _)) => found.push(*name),
            None if written.is_empty() => {
                errors.spanned(
                    lit,
                    "`cpu` in `#[kernel]` lists CPU features separated by commas, e.g. \
                     `cpu = \"avx2,fma\"`; this one has an empty entry",
                );
                ok = false;
            }
            None => {
                let hint = FEATURES
                    .iter()
                    .find(|(name, _)| folded(name) == folded(written))
                    .map(|(name, _)| format!(" (did you mean `{name}`?)"))
                    .unwrap_or_default();
                errors.spanned(
                    lit,
                    format!(
                        "unknown CPU feature `{written}` in `cpu`{hint}; expected one of: {}",
                        list(&names())
                    ),
                );
                ok = false;
            }
        }
    }
    ok.then_some(found)
}

// No CPU has both x86 and aarch64 features: such a variant could never run.
fn one_architecture(lit: &LitStr, features: &[&str], errors: &mut Errors) {
    let arm = features.iter().any(|f| AARCH64.contains(f));
    let x86 = features.iter().any(|f| !AARCH64.contains(f));
    if arm && x86 {
        errors.spanned(
            lit,
            "`cpu` mixes x86 and aarch64 features: no CPU has both, so this variant could never run",
        );
    }
}

/// The features each `#[target_feature(enable = "…")]` of the function enables, with the string
/// each came from.
fn target_features(attrs: &[Attribute], errors: &mut Errors) -> Vec<(String, LitStr)> {
    let mut enabled = Vec::new();
    for attr in attrs.iter().filter(|a| a.path().is_ident("target_feature")) {
        let parsed = attr.parse_nested_meta(|meta| {
            if meta.path.is_ident("enable") {
                let lit: LitStr = meta.value()?.parse()?;
                for feature in lit.value().split(',') {
                    enabled.push((feature.trim().to_owned(), lit.clone()));
                }
            }
            Ok(())
        });
        if let Err(error) = parsed {
            errors.push(error);
        }
    }
    enabled
}

/// Whether the function has `#[target_feature]`.
pub fn has_target_feature(function: &ItemFn) -> bool {
    function
        .attrs
        .iter()
        .any(|a| a.path().is_ident("target_feature"))
}

// A `#[target_feature]` kernel is called through an `unsafe` entry whose proof is that dispatch
// installs it only where every feature in `cpu` was detected; so `cpu` must list every feature
// `#[target_feature]` enables, or the proof would not cover them.
pub fn check_target_features(function: &ItemFn, cpu: Option<&CpuAttr>, errors: &mut Errors) {
    let enabled = target_features(&function.attrs, errors);
    if !has_target_feature(function) {
        return;
    }
    let Some(cpu) = cpu else {
        let attr = function
            .attrs
            .iter()
            .find(|a| a.path().is_ident("target_feature"));
        let message = "a `#[target_feature]` kernel needs `cpu = \"…\"` in `#[kernel]`, listing \
                       the features it enables: dispatch installs it only on CPUs that have them";
        match attr {
            Some(attr) => errors.spanned(attr, message),
            None => errors.at(Span::call_site(), message),
        }
        return;
    };
    if cpu.reported {
        // `cpu` is there but wrong, and reported: its list says nothing about `#[target_feature]`.
        return;
    }
    for (feature, lit) in enabled {
        if !cpu.features.contains(&feature.as_str()) {
            errors.spanned(
                &lit,
                format!(
                    "`#[target_feature]` enables `{feature}`, which `cpu` in `#[kernel]` does not \
                     list; add it there, so that the kernel is installed only on CPUs that have it"
                ),
            );
        }
    }
}

// ---- expand ----

/// `CpuFeatures::AVX2.union(CpuFeatures::FMA)`, or the empty set without `cpu`.
pub fn features_expr(cpu: Option<&CpuAttr>, private: &TokenStream) -> TokenStream {
    let constants = cpu.into_iter().flat_map(|cpu| &cpu.features).map(|name| {
        let (_, constant) = FEATURES
            .iter()
            .find(|(n, _)| n == name)
            .expect("features were validated");
        let constant = Ident::new(constant, Span::call_site());
        quote!(.union(#private::CpuFeatures::#constant))
    });
    quote!(#private::CpuFeatures::empty() #(#constants)*)
}

/// The safe entry of a `#[target_feature]` kernel (which cannot become a function pointer): a
/// plain function of the same signature that calls it. Returns the entry and its name.
pub fn entry(function: &ItemFn) -> (TokenStream, Ident) {
    let kernel = &function.sig.ident;
    let entry = format_ident!("__switchyard_entry_{}", kernel);
    let params: Vec<Ident> = (0..function.sig.inputs.len())
        .map(|i| format_ident!("__arg{}", i))
        .collect();
    let types = function.sig.inputs.iter().map(|arg| match arg {
        FnArg::Typed(typed) => &*typed.ty,
        FnArg::Receiver(_) => unreachable!("receivers were rejected"),
    });
    let output = &function.sig.output;
    let tokens = quote! {
        /// The safe entry of a `#[target_feature]` kernel, installed in the op's table only after
        /// runtime detection found every feature in its `cpu = "…"`.
        #[inline]
        #[allow(non_snake_case)]
        fn #entry(#(#params: #types),*) #output {
            // SAFETY: this entry is nameable only inside the anonymous `const` block the macro
            // generates; it reaches the outside only as the kernel of a registration made with
            // `KernelRegistration::with_cpu`, whose kernel field is private and read only by the
            // op's table build, which installs it only when the running CPU was detected to have
            // every feature of `cpu = "…"`; the macro checked that `cpu` includes every feature
            // `#[target_feature]` enables.
            unsafe { #kernel(#(#params),*) }
        }
    };
    (tokens, entry)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hints_fold_case_and_separators() {
        assert_eq!(folded("SSE4_1"), folded("sse4.1"));
        assert_eq!(folded("AVX-512F"), "avx512f");
    }
}
