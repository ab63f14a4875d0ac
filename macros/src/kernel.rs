//! `#[kernel(op = "mul", key = CpuSimd)] fn mul_simd(x: &Tensor, y: &Tensor) -> Tensor { … }`
//!
//! Keeps the function as written and adds, in an anonymous `const` block, a typed registration in
//! the op's kernel slice. The function is checked against the op's `Signature` (or
//! `FallibleSignature` when it returns `Result`), with the error on the kernel's own signature.

use proc_macro2::{Span, TokenStream};
use quote::quote;
use syn::spanned::Spanned;
use syn::{ItemFn, LitStr, Path, parse_quote_spanned};

use crate::args::{self, Args};
use crate::cpu::{self, CpuAttr};
use crate::ctxt::Errors;
use crate::op::location;
use crate::{keys, sig};

// ---- ast ----

/// The parsed attribute: which op, which key, which CPU features (a variant), where switchyard
/// lives. `op` and `key` are `None` only when an error says why.
struct KernelAttr {
    op: Option<Path>,
    key: Option<TokenStream>,
    cpu: Option<CpuAttr>,
    /// `overrides`: deliberately replaces the other registrations at the key.
    overrides: bool,
    krate: Path,
}

const ALLOWED: &[&str] = &["op", "key", "cpu", "overrides", "crate"];

// ---- validate ----

// `op` names the op's item in scope: a string holding a path (`"mul"`, `"ops::mul"`) or a path.
fn op_path(args: &mut Args, errors: &mut Errors) -> Option<Path> {
    let Some(arg) = args.take("op") else {
        errors.at(
            Span::call_site(),
            "`#[kernel]` needs `op = …`: the op this kernel implements, e.g. `op = \"mul\"`",
        );
        return None;
    };
    if let Some(path) = args::as_path(&arg.value) {
        return Some(path.clone());
    }
    let parsed = args::as_str(&arg.value).map(|lit: &LitStr| lit.parse::<Path>());
    match parsed {
        Some(Ok(path)) => Some(path),
        _ => {
            errors.spanned(&arg.value, "`op` in `#[kernel]` names an op in scope: a string such as `op = \"mul\"` or a path such as `op = switchyard::ops::mul`");
            None
        }
    }
}

// `key` picks the table slot; a kernel without one would never run.
fn key(args: &mut Args, private: &TokenStream, errors: &mut Errors) -> Option<TokenStream> {
    let Some(arg) = args.take("key") else {
        errors.at(
            Span::call_site(),
            "`#[kernel]` needs `key = …`: the dispatch key it serves, e.g. `key = CpuNaive`",
        );
        return None;
    };
    keys::kernel_key_expr(&arg.value, private, errors)
}

fn parse_attr(attr: TokenStream, errors: &mut Errors) -> KernelAttr {
    let mut args = Args::parse(attr, "kernel", ALLOWED, errors);
    let krate = args::crate_path(&mut args, errors);
    let private = quote!(#krate::__private_v1);
    let op = op_path(&mut args, errors);
    let cpu = cpu::parse(&mut args, errors);
    let key = key(&mut args, &private, errors);
    let overrides = args::flag(&mut args, "overrides", "kernel", errors);
    KernelAttr {
        op,
        key,
        cpu,
        overrides,
        krate,
    }
}

// ---- expand ----

pub fn expand(attr: TokenStream, item: TokenStream) -> TokenStream {
    let function = match sig::parse_fn(item) {
        Ok(function) => function,
        Err(tokens) => return tokens,
    };
    let mut errors = Errors::new();
    let attr = parse_attr(attr, &mut errors);
    sig::check_common(&function.sig, "a `#[kernel]`", &mut errors);
    cpu::check_target_features(&function, attr.cpu.as_ref(), &mut errors);
    match (errors.finish(), attr) {
        (
            None,
            KernelAttr {
                op: Some(op),
                key: Some(key),
                cpu,
                overrides,
                krate,
            },
        ) => generate(&function, &op, &key, cpu.as_ref(), overrides, &krate),
        (compile_errors, attr) => {
            let function = fallback(function, attr.op.as_ref());
            quote!(#compile_errors #function)
        }
    }
}

/// On error: the function, unregistered, so that its callers and IDEs stay quiet. It still names
/// the op, so that the user's `use` of it is not reported unused (or, if the op is unknown, that
/// this is reported too); a C-variadic `...`, already reported, is dropped so rustc does not
/// report it again.
fn fallback(mut function: ItemFn, op: Option<&Path>) -> ItemFn {
    sig::drop_variadic(&mut function.sig);
    if let Some(op) = op {
        // Names the op, so that the user's import of it counts as used, and rustc reports an
        // unknown op on its token, at import resolution (with the other errors, not after them).
        let statement = parse_quote_spanned!(op.span()=> #[allow(unused_imports)] use #op as _;);
        function.block.stmts.insert(0, statement);
    }
    function
}

fn generate(
    function: &ItemFn,
    op: &Path,
    key: &TokenStream,
    cpu: Option<&CpuAttr>,
    overrides: bool,
    krate: &Path,
) -> TokenStream {
    let private = quote!(#krate::__private_v1);
    let ident = &function.sig.ident;
    let name = LitStr::new(&ident.to_string(), ident.span());
    let features = cpu::features_expr(cpu, &private);
    // A `#[target_feature]` function cannot be a function pointer: register its safe entry.
    let (entry, reference) = if cpu::has_target_feature(function) {
        let (entry, entry_ident) = cpu::entry(function);
        (entry, sig::spanned_reference(&function.sig, &entry_ident))
    } else {
        (
            TokenStream::new(),
            sig::spanned_reference(&function.sig, ident),
        )
    };
    let location = location(&private, ident.span());
    // The signature this kernel is checked against, its trait, and its adapter to `KernelFn`.
    let keyed = sig::takes_keys_first(&function.sig);
    let fallible = sig::returns_result(&function.sig.output);
    let (signature, kernel_trait, lift) = match (keyed, fallible) {
        (false, false) => (quote!(Signature), quote!(__Kernel), Some(quote!(__lift))),
        (false, true) => (
            quote!(FallibleSignature),
            quote!(__FallibleKernel),
            Some(quote!(__lift_fallible)),
        ),
        (true, false) => (
            quote!(KeyedSignature),
            quote!(__KeyedKernel),
            Some(quote!(__lift_keyed)),
        ),
        // Already in the table's form.
        (true, true) => (quote!(KernelFn), quote!(__KeyedFallibleKernel), None),
    };
    // Every name this block declares is mangled: the block also holds the `#[target_feature]`
    // entry, whose types are the user's and must not resolve to these.
    let (lift_import, adapted) = match lift {
        Some(lift) => (
            quote!(#lift as __switchyard_lift,),
            quote!(__switchyard_lift::<__SwitchyardKernel>),
        ),
        None => (
            quote!(),
            quote!(<__SwitchyardKernel as __SwitchyardOpKernel>::KERNEL),
        ),
    };
    let meta = quote!(#private::KernelMeta {
        name: #name,
        location: #location,
        cpu: #features,
        overrides: #overrides,
    });
    let registration = if cpu.is_some() {
        quote! {
            // SAFETY: a kernel with `cpu = "…"` is sound on every CPU with those features: the
            // macro checked that `cpu` lists every feature its `#[target_feature]` enables.
            unsafe { #private::KernelRegistration::with_cpu(#key, #adapted, #meta) }
        }
    } else {
        quote!(#private::KernelRegistration::new(#key, #adapted, #meta))
    };
    quote! {
        #function

        #[allow(unsafe_code)] // linkme's `link_section`; a `#[target_feature]` kernel's entry
        const _: () = {
            // The op's items are imported once, so that an unknown op is one error, not one per use.
            use #op::{
                KernelFn as __SwitchyardKernelFn, #signature as __SwitchyardOpSignature,
                #kernel_trait as __SwitchyardOpKernel, #lift_import
                __KERNELS as __SWITCHYARD_OP_KERNELS,
            };

            #entry

            struct __SwitchyardKernel;
            impl __SwitchyardOpKernel for __SwitchyardKernel {
                // `*&kernel_fn` carries the user's spans, so clippy would lint it as theirs.
                #[allow(clippy::deref_addrof)]
                const KERNEL: __SwitchyardOpSignature = #reference;
            }

            #[#private::linkme::distributed_slice(__SWITCHYARD_OP_KERNELS)]
            #[linkme(crate = #private::linkme)]
            static REGISTRATION: #private::KernelRegistration<__SwitchyardKernelFn> = #registration;
        };
    }
}
