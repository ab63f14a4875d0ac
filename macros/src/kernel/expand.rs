//! Expands a validated `#[kernel]` into the function and, in an anonymous `const` block, its
//! typed registration in the op's kernel slice; after an error, into the function alone.

use proc_macro2::TokenStream;
use quote::{quote, quote_spanned};
use syn::spanned::Spanned;
use syn::{ItemFn, LitStr, Path, ReturnType, parse_quote_spanned};

use super::ast::{KernelAttr, OpRef};
use crate::keys::{self, KeyRef};
use crate::private::{location, private};
use crate::{cpu, dtypes, sig};

/// On error: the function, unregistered, so that its callers and IDEs stay quiet. It still names
/// the op, so that the user's `use` of it is not reported unused (or, if the op is unknown, that
/// this is reported too); a C-variadic `...`, already reported, is dropped so rustc does not
/// report it again.
pub fn unregistered(mut function: ItemFn, op: Option<&OpRef>) -> ItemFn {
    sig::drop_variadic(&mut function.sig);
    if let Some(op) = op {
        // Names the op, so that the user's import of it counts as used, and rustc reports an
        // unknown op on its token, at import resolution (with the other errors, not after them).
        let (root, path) = rooted(&op.path);
        let statement = parse_quote_spanned!(op.span=> #[allow(unused_imports)] use #path as _;);
        function.block.stmts.insert(0, statement);
        if !root.is_empty() {
            function
                .block
                .stmts
                .insert(0, parse_quote_spanned!(op.span=> #root));
        }
    }
    function
}

/// The op's path, with its first segment imported alone first when that is a plain name: rustc
/// then reports an unknown name as "no external crate `x`", not with a `cargo add` suggestion
/// (its words for a path whose first segment is unknown). The `use` of the first segment, if
/// any, and the path to import from.
fn rooted(path: &Path) -> (TokenStream, Path) {
    let Some(first) = path.segments.first() else {
        return (TokenStream::new(), path.clone());
    };
    let plain = path.leading_colon.is_none()
        && first.arguments.is_none()
        && !matches!(
            first.ident.to_string().as_str(),
            "self" | "super" | "crate" | "Self"
        );
    if !plain {
        return (TokenStream::new(), path.clone());
    }
    // Re-imported under its own name, so that rustc's messages name it as the user wrote it.
    let ident = &first.ident;
    (
        quote_spanned!(ident.span()=> #[allow(unused_imports)] use #ident as #ident;),
        path.clone(),
    )
}

/// The function and its registration, from the validated attribute.
pub fn registration(function: &ItemFn, attr: &KernelAttr, op: &OpRef, key: &KeyRef) -> TokenStream {
    let private = private(attr.krate.as_ref());
    let (op_root, op) = rooted(&op.path);
    let key = keys::kernel_key(key, &private);
    let cpu = attr.cpu.as_ref();
    let overrides = attr.overrides.is_some();
    let ident = &function.sig.ident;
    let name = LitStr::new(&ident.to_string(), ident.span());
    let features = cpu::features_expr(cpu, &private);
    let columns = dtypes::columns_expr(attr.dtypes.as_ref(), &private);
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
    // The signature this kernel is checked against, its trait, and its adapter to `KernelFn`. A
    // kernel returning `Result<T, E>` with its own `E` is checked against that `E` (its error
    // becomes a `DispatchError` in the adapter, naming op and key).
    let keyed = sig::takes_keys_first(&function.sig);
    let fallible = sig::returns_result(&function.sig.output);
    let own_error = fallible && sig::returns_own_error(&function.sig.output);
    let (signature, kernel_trait, lift) = match (keyed, fallible, own_error) {
        (false, false, _) => (quote!(Signature), quote!(__Kernel), Some(quote!(__lift))),
        (false, true, false) => (
            quote!(FallibleSignature),
            quote!(__FallibleKernel),
            Some(quote!(__lift_fallible)),
        ),
        (false, true, true) => (
            quote!(__AnyErrorSignature),
            quote!(__AnyErrorKernel),
            Some(quote!(__lift_any)),
        ),
        (true, false, _) => (
            quote!(KeyedSignature),
            quote!(__KeyedKernel),
            Some(quote!(__lift_keyed)),
        ),
        // Already in the table's form.
        (true, true, false) => (quote!(KernelFn), quote!(__KeyedFallibleKernel), None),
        (true, true, true) => (
            quote!(__KeyedAnyErrorSignature),
            quote!(__KeyedAnyErrorKernel),
            Some(quote!(__lift_keyed_any)),
        ),
    };
    let (error_items, signature_ty) = match &function.sig.output {
        ReturnType::Type(_, output) if own_error => {
            let span = output.span();
            let error = quote_spanned!(span=> <#output as #private::KernelReturn>::Error);
            (
                quote! {
                    type Error = #error;
                    const KEY: #private::KernelKey = #key;
                },
                quote!(__SwitchyardOpSignature<Self::Error>),
            )
        }
        _ => (TokenStream::new(), quote!(__SwitchyardOpSignature)),
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
        dtypes: #columns,
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
            #op_root
            use #op::{
                KernelFn as __SwitchyardKernelFn, #signature as __SwitchyardOpSignature,
                #kernel_trait as __SwitchyardOpKernel, #lift_import
                __KERNELS as __SWITCHYARD_OP_KERNELS,
            };

            #entry

            struct __SwitchyardKernel;
            impl __SwitchyardOpKernel for __SwitchyardKernel {
                #error_items
                // `*&kernel_fn` carries the user's spans, so clippy would lint it as theirs.
                #[allow(clippy::deref_addrof)]
                const KERNEL: #signature_ty = #reference;
            }

            #[cfg_attr(not(target_family = "wasm"), #private::linkme::distributed_slice(__SWITCHYARD_OP_KERNELS))]
            #[cfg_attr(not(target_family = "wasm"), linkme(crate = #private::linkme))]
            static REGISTRATION: #private::KernelRegistration<__SwitchyardKernelFn> = #registration;
            // WebAssembly, which linkme does not serve: added to the op's list by a constructor.
            #[cfg(target_family = "wasm")]
            #private::submit!(__SWITCHYARD_OP_KERNELS, REGISTRATION);
        };
    }
}
