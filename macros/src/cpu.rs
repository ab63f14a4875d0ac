//! `cpu = "avx2,fma"` in `#[kernel]`: the CPU features a kernel variant needs (parsed into a
//! [`CpuArg`], checked one rule per function), and what they expand to, including the safe entry
//! generated for a `#[target_feature]` kernel.

use proc_macro2::{Span, TokenStream};
use quote::{format_ident, quote};
use syn::{Attribute, FnArg, Ident, ItemFn, LitStr};

use crate::args::{self, Args, list};
use crate::ctxt::Errors;
use crate::keys::KeyRef;

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
    ("simd128", "SIMD128"),
];

/// The aarch64 features.
const AARCH64: &[&str] = &["neon"];
/// The wasm32 features; every one in neither list is x86.
const WASM32: &[&str] = &["simd128"];

/// The architecture a known feature belongs to.
fn architecture(feature: &str) -> &'static str {
    if AARCH64.contains(&feature) {
        "aarch64"
    } else if WASM32.contains(&feature) {
        "wasm32"
    } else {
        "x86"
    }
}

// ---- ast ----

/// A parsed `cpu = …`, spans kept.
pub struct CpuArg {
    /// The `cpu` token: where a rule about the option as a whole is reported.
    name: Ident,
    /// The string, and its comma-separated entries as written (trimmed); `None` when the value
    /// was not a string (reported): then no rule is checked against it.
    list: Option<(LitStr, Vec<String>)>,
}

impl CpuArg {
    /// `cpu` is optional; when given, its value must be a string.
    pub fn parse(args: &mut Args, errors: &mut Errors) -> Option<CpuArg> {
        let arg = args.take("cpu")?;
        let list = args::comma_list(
            &arg,
            "`cpu` in `#[kernel]` takes a string of CPU features, e.g. `cpu = \"avx2,fma\"`",
            errors,
        );
        Some(CpuArg {
            name: arg.name,
            list,
        })
    }

    /// The known features listed, in the order written (each once).
    fn known(&self) -> Vec<&'static str> {
        let mut found = Vec::new();
        for entry in self.list.iter().flat_map(|(_, entries)| entries) {
            if let Some(name) = feature(entry).filter(|name| !found.contains(name)) {
                found.push(name);
            }
        }
        found
    }
}

/// The feature called `written`, if it is one `cpu` accepts.
fn feature(written: &str) -> Option<&'static str> {
    FEATURES
        .iter()
        .map(|(name, _)| *name)
        .find(|name| *name == written)
}

fn names() -> Vec<&'static str> {
    FEATURES.iter().map(|(name, _)| *name).collect()
}

fn folded(name: &str) -> String {
    name.chars()
        .filter(char::is_ascii_alphanumeric)
        .map(|c| c.to_ascii_lowercase())
        .collect()
}

// ---- validate ----

/// Every rule on `cpu` itself. Returns the features it lists, or `None` when the list is wrong
/// (reported): then the rules that compare against the list are not checked.
pub fn check(cpu: &CpuArg, key: Option<&KeyRef>, errors: &mut Errors) -> Option<Vec<&'static str>> {
    let (lit, entries) = cpu.list.as_ref()?;
    only_with_cpu_simd(cpu, key, errors);
    let before = errors.len();
    no_empty_entry(lit, entries, errors);
    known_features(lit, entries, errors);
    no_repeated_feature(lit, entries, errors);
    if errors.len() != before {
        return None;
    }
    let features = cpu.known();
    one_architecture(lit, &features, errors);
    Some(features)
}

// Variants are chosen among the CPU SIMD kernels; a GPU or naive kernel that needs CPU features
// would be a kernel that silently disappears on some machines. (A key given by path is a
// downstream key whose device the macro cannot know; it is allowed.)
fn only_with_cpu_simd(cpu: &CpuArg, key: Option<&KeyRef>, errors: &mut Errors) {
    if let Some(key) = key
        .and_then(KeyRef::runtime)
        .filter(|key| *key != "CpuSimd")
    {
        errors.spanned(
            &cpu.name,
            format!(
                "`cpu` in `#[kernel]` selects among CPU SIMD variants, so it needs `key = CpuSimd`, \
                 not `{key}`"
            ),
        );
    }
}

// `cpu = ""` or `"avx2,"` is a slip, not a list of features.
fn no_empty_entry(lit: &LitStr, entries: &[String], errors: &mut Errors) {
    if entries.iter().any(String::is_empty) {
        errors.spanned(
            lit,
            "`cpu` in `#[kernel]` lists CPU features separated by commas, e.g. \
             `cpu = \"avx2,fma\"`; this one has an empty entry",
        );
    }
}

// Each name must be one the runtime detects: a misspelled feature would never be detected, and
// the variant would silently never run.
fn known_features(lit: &LitStr, entries: &[String], errors: &mut Errors) {
    for written in entries
        .iter()
        .filter(|e| !e.is_empty() && feature(e).is_none())
    {
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
    }
}

// A feature listed twice is a slip (perhaps for another feature).
fn no_repeated_feature(lit: &LitStr, entries: &[String], errors: &mut Errors) {
    let mut seen = Vec::new();
    for name in entries.iter().filter_map(|e| feature(e)) {
        if seen.contains(&name) {
            errors.spanned(
                lit,
                format!("CPU feature `{name}` is listed twice in `cpu`"),
            );
        } else {
            seen.push(name);
        }
    }
}

// No CPU has the features of two architectures (x86, aarch64, wasm32): such a variant could
// never run.
fn one_architecture(lit: &LitStr, features: &[&str], errors: &mut Errors) {
    let mut found: Vec<&str> = Vec::new();
    for arch in features.iter().map(|f| architecture(f)) {
        if !found.contains(&arch) {
            found.push(arch);
        }
    }
    // Named in a fixed order, whatever the order of the list.
    found.sort_by_key(|arch| ["x86", "aarch64", "wasm32"].iter().position(|a| a == arch));
    if let [first, second, ..] = found[..] {
        errors.spanned(
            lit,
            format!(
                "`cpu` mixes {first} and {second} features: no CPU has both, so this variant \
                 could never run"
            ),
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
// installs it only where every feature in `cpu` was detected; so it needs `cpu`, and `cpu` must
// list every feature `#[target_feature]` enables, or the proof would not cover them. `listed` is
// what `check` returned: `None` when `cpu` is absent or wrong (reported), so says nothing.
pub fn covers_target_features(
    function: &ItemFn,
    cpu: Option<&CpuArg>,
    listed: Option<&[&str]>,
    errors: &mut Errors,
) {
    let enabled = target_features(&function.attrs, errors);
    if !has_target_feature(function) {
        return;
    }
    if cpu.is_none() {
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
    }
    let Some(listed) = listed else {
        // `cpu` is there but wrong, and reported: its list says nothing about `#[target_feature]`.
        return;
    };
    for (feature, lit) in enabled {
        if !listed.contains(&feature.as_str()) {
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

/// `CpuFeatures::AVX2.union(CpuFeatures::FMA)` for a validated `cpu`, or the empty set without
/// one.
pub fn features_expr(cpu: Option<&CpuArg>, private: &TokenStream) -> TokenStream {
    let features = cpu.map(CpuArg::known).unwrap_or_default();
    let constants = features.into_iter().map(|name| {
        let (_, constant) = FEATURES
            .iter()
            .find(|(n, _)| *n == name)
            .expect("known features are in the table");
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

    #[test]
    fn each_feature_has_one_architecture() {
        assert_eq!(architecture("neon"), "aarch64");
        assert_eq!(architecture("simd128"), "wasm32");
        assert_eq!(architecture("avx2"), "x86");
        assert!(FEATURES.iter().any(|(name, _)| *name == "simd128"));
    }
}
