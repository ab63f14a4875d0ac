//! Expands a validated `#[op]`: the callable, its `try_` form, and the op's module.
//!
//! Hygiene: everything that mentions the op's types (aliases, table, adapters) lives in a hidden
//! module two levels below the op, `mul::__switchyard`, which sees the op's scope through
//! `use super::super::*` and declares only mangled names, so a user type named `Signature`, `K` or
//! `KernelFn` keeps its meaning there; `self::` and `super::` paths in the types are rewritten to
//! reach the same items from there. `mul` itself re-exports the public names and declares nothing
//! that a type is resolved against. Generated locals and parameters have mixed-site spans, so an
//! op parameter named `keys` or `kernel` stays the user's.

use proc_macro2::{Span, TokenStream};
use quote::{format_ident, quote};
use syn::punctuated::Punctuated;
use syn::visit_mut::VisitMut;
use syn::{Ident, LitStr, PathSegment, ReturnType, Token, Type};

use super::ast::{OpAttr, OpFn};
use super::spans::{local, through};
use super::{boxing, composite};
use crate::private::{location, private};
use crate::{mangle, namespace, schema, sig};

/// The op, from its validated attribute and function.
pub fn op(attr: &OpAttr, op: &OpFn) -> TokenStream {
    let OpFn {
        attrs, vis, sig, ..
    } = op;
    let private = &private(attr.krate.as_ref());
    let name = &op.name(attr);
    let unique = namespace::unique_in_crate(name, op.name_span(attr));
    let params = &op.params();
    let ident = &sig.ident;
    let try_ident = format_ident!("try_{}", ident);
    let slice = mangle::kernel_slice(ident);
    let names: Vec<&Ident> = params.iter().map(|p| p.name).collect();
    let inputs = &sig.inputs;
    let output = &sig.output;
    let output_ty = match output {
        ReturnType::Default => quote!(()),
        ReturnType::Type(_, ty) => quote!(#ty),
    };
    let result = quote!(::core::result::Result<#output_ty, #private::DispatchError>);
    // The same types, as the hidden module must spell them.
    let types: Vec<Type> = params.iter().map(|p| nested(p.ty)).collect();
    let (inner_output, inner_ret) = match output {
        ReturnType::Default => (quote!(()), quote!()),
        ReturnType::Type(arrow, ty) => {
            let ty = nested(ty);
            (quote!(#ty), quote!(#arrow #ty))
        }
    };
    let inner_result = quote!(::core::result::Result<#inner_output, #private::DispatchError>);
    let keyset = quote!(#private::DispatchKeySet);
    let schema_names: Vec<(String, &Type)> =
        params.iter().map(|p| (p.name.to_string(), p.ty)).collect();
    let schema = LitStr::new(
        &schema::schema(name, &schema_names, output),
        Span::call_site(),
    );
    let name_lit = LitStr::new(name, Span::call_site());
    let item_lit = LitStr::new(&ident.to_string(), Span::call_site());
    let arity = params.len();
    let (arg_keys, kernel, keys, depth) = (
        local("arg_keys"),
        local("kernel"),
        local("keys"),
        local("depth"),
    );
    // Each argument's keys, spanned on its type so a type that is not `DispatchArg` is reported there.
    let key_terms = params.iter().map(|p| {
        let (ty, name) = (p.ty, p.name);
        let dispatch_keys = through(ty, &quote!(#private::DispatchArg), "dispatch_keys");
        quote!(| #dispatch_keys(&#name))
    });
    let (composite_fn, composite) = composite::kernel(attr, op, name, &output_ty, private);
    let (boxing_fns, boxing) = if attr.unboxed.is_some() {
        (TokenStream::new(), quote!(::core::option::Option::None))
    } else {
        boxing::adapters(params, &types, &inner_output, &inner_result, private)
    };
    let doc_try = format!(
        "Fallible form of [`{ident}()`]: returns the dispatch or kernel error instead of panicking."
    );
    let doc_mod = format!(
        "Dispatch internals of op `{name}`: [`redispatch`](self::redispatch), [`handle`](self::handle), \
         [`register`](self::register), and the [`Signature`](self::Signature) every \
         `#[kernel(op = {ident})]` must have."
    );
    let location = location(private, ident.span());
    // An op that may mix devices calls table methods without the mismatch check, so the ordinary
    // hot path tests no flag.
    let mixes_devices = attr.mixes_devices.is_some();
    let (probe, lookup) = if mixes_devices {
        (quote!(probe_mixed), quote!(lookup_mixed))
    } else {
        (quote!(probe), quote!(lookup))
    };
    quote! {
        #(#attrs)*
        #[inline]
        #[track_caller]
        #vis fn #ident(#inputs) #output {
            #private::unwrap_or_panic(#try_ident(#(#names),*))
        }

        #[doc = #doc_try]
        #[inline]
        #vis fn #try_ident(#inputs) -> #result {
            let #arg_keys = #keyset::EMPTY #(#key_terms)*;
            match #ident::__OP.#probe(#arg_keys) {
                ::core::option::Option::Some((#kernel, #keys)) => #kernel(#keys, #(#names),*),
                ::core::option::Option::None => #ident::__cold_call(#arg_keys, #(#names),*),
            }
        }

        #composite_fn

        #unique

        #[doc = #doc_mod]
        #vis mod #ident {
            /// The signature of a plain kernel of this op. A kernel may also return
            /// `Result<_, DispatchError>` ([`FallibleSignature`]), and may take the call's
            /// `DispatchKeySet` first, to redispatch ([`KeyedSignature`], [`KernelFn`]).
            pub type Signature = self::__switchyard::__SwitchyardSignature;
            /// The signature of a kernel that can fail.
            pub type FallibleSignature = self::__switchyard::__SwitchyardFallibleSignature;
            /// The signature of a kernel that takes the call's keys first, to redispatch below
            /// its own key.
            pub type KeyedSignature = self::__switchyard::__SwitchyardKeyedSignature;
            /// The form every kernel is adapted to: keys first, `Result` out. What the op's table
            /// stores and what [`register`] takes.
            pub type KernelFn = self::__switchyard::__SwitchyardKernelFn;

            pub use self::__switchyard::{
                __switchyard_handle as handle, __switchyard_redispatch as redispatch,
                __switchyard_register as register,
                __switchyard_register_dtypes as register_dtypes,
                __switchyard_register_override as register_override,
                __switchyard_register_variant as register_variant,
            };

            #[doc(hidden)]
            pub use self::__switchyard::{
                #slice as __KERNELS, __SWITCHYARD_OP as __OP,
                __SwitchyardFallibleKernel as __FallibleKernel, __SwitchyardKernel as __Kernel,
                __SwitchyardKeyedFallibleKernel as __KeyedFallibleKernel,
                __SwitchyardKeyedKernel as __KeyedKernel, __switchyard_cold_call as __cold_call,
                __switchyard_lift as __lift, __switchyard_lift_fallible as __lift_fallible,
                __switchyard_lift_keyed as __lift_keyed,
                __SwitchyardAnyErrorSignature as __AnyErrorSignature,
                __SwitchyardKeyedAnyErrorSignature as __KeyedAnyErrorSignature,
                __SwitchyardAnyErrorKernel as __AnyErrorKernel,
                __SwitchyardKeyedAnyErrorKernel as __KeyedAnyErrorKernel,
                __switchyard_lift_any as __lift_any, __switchyard_lift_keyed_any as __lift_keyed_any,
            };

            /// Everything that names the op's types, where those types mean what they mean at
            /// the op: only mangled names are declared here.
            #[doc(hidden)]
            pub mod __switchyard {
                #[allow(unused_imports)]
                use super::super::*;

                pub type __SwitchyardSignature = fn(#(#types),*) #inner_ret;
                pub type __SwitchyardFallibleSignature = fn(#(#types),*) -> #inner_result;
                pub type __SwitchyardKeyedSignature = fn(#keyset, #(#types),*) #inner_ret;
                pub type __SwitchyardKernelFn = fn(#keyset, #(#types),*) -> #inner_result;
                pub type __SwitchyardAnyErrorSignature<__SwitchyardE> =
                    fn(#(#types),*) -> ::core::result::Result<#inner_output, __SwitchyardE>;
                pub type __SwitchyardKeyedAnyErrorSignature<__SwitchyardE> =
                    fn(#keyset, #(#types),*) -> ::core::result::Result<#inner_output, __SwitchyardE>;

                #[cfg(not(target_family = "wasm"))]
                #[allow(unsafe_code)] // linkme's `link_section`
                #[#private::linkme::distributed_slice]
                #[linkme(crate = #private::linkme)]
                pub static #slice: [#private::KernelRegistration<__SwitchyardKernelFn>];

                // WebAssembly, which linkme does not serve: a list filled by constructors.
                #[cfg(target_family = "wasm")]
                pub static #slice: #private::CtorSlice<#private::KernelRegistration<__SwitchyardKernelFn>> =
                    #private::CtorSlice::new();

                #boxing_fns

                pub static __SWITCHYARD_OP: #private::OpTable<__SwitchyardKernelFn> =
                    #private::OpTable::new(
                        #private::OpInfo {
                            name: #name_lit,
                            schema: #schema,
                            location: #location,
                            item: #item_lit,
                            arity: #arity,
                            mixes_devices: #mixes_devices,
                        },
                        &#slice,
                        #composite,
                        #boxing,
                    );

                #[allow(unsafe_code)] // linkme's `link_section`
                #[cfg_attr(not(target_family = "wasm"), #private::linkme::distributed_slice(#private::OPS))]
                #[cfg_attr(not(target_family = "wasm"), linkme(crate = #private::linkme))]
                static __SWITCHYARD_ENTRY: &'static dyn #private::ErasedOp = &__SWITCHYARD_OP;
                #[cfg(target_family = "wasm")]
                #private::submit!(#private::OPS, __SWITCHYARD_ENTRY);

                /// Calls the kernel for exactly `keys`, ignoring thread-local includes and
                /// excludes: how a kernel continues below its own key
                /// (`keys.below(DispatchKey::AutogradCpu)`).
                #[inline]
                pub fn __switchyard_redispatch(#keys: #keyset, #(#names: #types),*) -> #inner_result {
                    match __SWITCHYARD_OP.probe_exact(#keys) {
                        ::core::option::Option::Some(#kernel) => #kernel(#keys, #(#names),*),
                        ::core::option::Option::None => {
                            __switchyard_cold_redispatch(#keys, #(#names),*)
                        }
                    }
                }

                /// The call when the fast probe found no kernel: builds the table on first use,
                /// or returns the error that explains the failure. Out of line, so that the hot
                /// path reaches it by a tail call and keeps no stack frame of its own.
                #[cold]
                #[inline(never)]
                pub fn __switchyard_cold_call(#arg_keys: #keyset, #(#names: #types),*) -> #inner_result {
                    let (#kernel, #keys) = __SWITCHYARD_OP.#lookup(#arg_keys)?;
                    let #depth = #private::trace_depth();
                    #kernel(#keys, #(#names),*)
                }

                #[cold]
                #[inline(never)]
                pub fn __switchyard_cold_redispatch(#keys: #keyset, #(#names: #types),*) -> #inner_result {
                    let #kernel = __SWITCHYARD_OP.redispatch(#keys)?;
                    let #depth = #private::trace_depth();
                    #kernel(#keys, #(#names),*)
                }

                /// A handle to this op: name, schema, registrations, computed table, boxed calls.
                pub fn __switchyard_handle() -> #private::OpHandle {
                    #private::OpHandle::new(&__SWITCHYARD_OP)
                }

                /// Registers `kernel` for this op at `key` (a runtime key or an alias) until the
                /// returned guard drops. A kernel that would conflict with another at `key`
                /// (linked or registered, e.g. a SIMD kernel at `CpuSimd`) is refused, naming
                /// both: replace it deliberately with `register_override`.
                #[track_caller]
                pub fn __switchyard_register(
                    key: impl ::core::convert::Into<#private::KernelKey>,
                    name: &'static str,
                    kernel: __SwitchyardKernelFn,
                ) -> ::core::result::Result<#private::Registration, #private::DispatchError> {
                    __switchyard_register_dtypes(key, #private::ColumnSet::BUILTIN, name, kernel)
                }

                /// Registers `kernel` at `key` for the dtypes in `dtypes` only (a `DType`, a
                /// `DTypeColumn` or a `ColumnSet`, e.g. `ColumnSet::parse("f32,mixed")?`) until
                /// the returned guard drops: calls whose column it does not serve fall through
                /// to the next key that does. Refused like `register` on a conflict in a
                /// column it serves.
                #[track_caller]
                pub fn __switchyard_register_dtypes(
                    key: impl ::core::convert::Into<#private::KernelKey>,
                    dtypes: impl ::core::convert::Into<#private::ColumnSet>,
                    name: &'static str,
                    kernel: __SwitchyardKernelFn,
                ) -> ::core::result::Result<#private::Registration, #private::DispatchError> {
                    __SWITCHYARD_OP.register(
                        key.into(),
                        dtypes.into(),
                        name,
                        kernel,
                        false,
                        ::core::panic::Location::caller(),
                    )
                }

                /// Registers `kernel` at `key` until the returned guard drops, replacing every
                /// other registration there (linked or registered) while it lives; the table dump
                /// shows both. Two overrides at one key are refused.
                #[track_caller]
                pub fn __switchyard_register_override(
                    key: impl ::core::convert::Into<#private::KernelKey>,
                    name: &'static str,
                    kernel: __SwitchyardKernelFn,
                ) -> ::core::result::Result<#private::Registration, #private::DispatchError> {
                    __SWITCHYARD_OP.register(
                        key.into(),
                        #private::ColumnSet::ALL,
                        name,
                        kernel,
                        true,
                        ::core::panic::Location::caller(),
                    )
                }

                /// Registers a CPU variant at `CpuSimd` until the returned guard drops: installed
                /// only where the running CPU has every feature in `cpu`, refused where it never
                /// can run.
                ///
                /// # Safety
                ///
                /// Calling `kernel` must be sound on every CPU that has the features in `cpu`.
                #[track_caller]
                #[allow(unsafe_code)]
                pub unsafe fn __switchyard_register_variant(
                    name: &'static str,
                    kernel: __SwitchyardKernelFn,
                    cpu: #private::CpuFeatures,
                ) -> ::core::result::Result<#private::Registration, #private::DispatchError> {
                    // SAFETY: the caller's contract is the one `register_variant` requires.
                    unsafe {
                        __SWITCHYARD_OP.register_variant(
                            name,
                            kernel,
                            cpu,
                            ::core::panic::Location::caller(),
                        )
                    }
                }

                pub trait __SwitchyardKernel {
                    const KERNEL: __SwitchyardSignature;
                }

                pub trait __SwitchyardFallibleKernel {
                    const KERNEL: __SwitchyardFallibleSignature;
                }

                pub trait __SwitchyardKeyedKernel {
                    const KERNEL: __SwitchyardKeyedSignature;
                }

                pub trait __SwitchyardKeyedFallibleKernel {
                    const KERNEL: __SwitchyardKernelFn;
                }

                // A kernel returning `Result<_, E>` for any error type: its error becomes a
                // `DispatchError` naming the op and `KEY`, in the kernel's own adapter.
                pub trait __SwitchyardAnyErrorKernel {
                    type Error: #private::KernelError;
                    const KEY: #private::KernelKey;
                    const KERNEL: __SwitchyardAnyErrorSignature<Self::Error>;
                }

                pub trait __SwitchyardKeyedAnyErrorKernel {
                    type Error: #private::KernelError;
                    const KEY: #private::KernelKey;
                    const KERNEL: __SwitchyardKeyedAnyErrorSignature<Self::Error>;
                }

                // Adapters from each kernel form to `KernelFn`. The kernel is a constant, so each
                // is a direct (inlinable) call.

                #[inline]
                pub fn __switchyard_lift<__SwitchyardK: __SwitchyardKernel>(
                    _: #keyset,
                    #(#names: #types),*
                ) -> #inner_result {
                    ::core::result::Result::Ok((__SwitchyardK::KERNEL)(#(#names),*))
                }

                #[inline]
                pub fn __switchyard_lift_fallible<__SwitchyardK: __SwitchyardFallibleKernel>(
                    _: #keyset,
                    #(#names: #types),*
                ) -> #inner_result {
                    (__SwitchyardK::KERNEL)(#(#names),*)
                }

                #[inline]
                pub fn __switchyard_lift_any<__SwitchyardK: __SwitchyardAnyErrorKernel>(
                    _: #keyset,
                    #(#names: #types),*
                ) -> #inner_result {
                    #private::kernel_result((__SwitchyardK::KERNEL)(#(#names),*), #name_lit, __SwitchyardK::KEY)
                }

                #[inline]
                pub fn __switchyard_lift_keyed_any<__SwitchyardK: __SwitchyardKeyedAnyErrorKernel>(
                    #keys: #keyset,
                    #(#names: #types),*
                ) -> #inner_result {
                    #private::kernel_result((__SwitchyardK::KERNEL)(#keys, #(#names),*), #name_lit, __SwitchyardK::KEY)
                }

                #[inline]
                pub fn __switchyard_lift_keyed<__SwitchyardK: __SwitchyardKeyedKernel>(
                    #keys: #keyset,
                    #(#names: #types),*
                ) -> #inner_result {
                    ::core::result::Result::Ok((__SwitchyardK::KERNEL)(#keys, #(#names),*))
                }
            }
        }
    }
}

/// For a signature that breaks a rule (reported): the function alone, with an unreachable body,
/// so that call sites stay quiet.
pub fn stub(op: &OpFn) -> TokenStream {
    let OpFn {
        attrs, vis, sig, ..
    } = op;
    let mut sig = sig.clone();
    sig::drop_variadic(&mut sig);
    quote! {
        #(#attrs)*
        #[allow(unused_variables)]
        #vis #sig { ::core::unreachable!("this op failed to compile") }
    }
}

/// Rewrites `self::` and `super::` paths for use two modules below the op's own.
struct Deepen;

impl VisitMut for Deepen {
    fn visit_path_mut(&mut self, path: &mut syn::Path) {
        if path.leading_colon.is_none()
            && let Some(first) = path.segments.first()
            && (first.ident == "self" || first.ident == "super")
        {
            let span = first.ident.span();
            // `self::T` is `super::super::T` two modules down; `super::T` gains the same two.
            let keep_first = first.ident == "super";
            let old = std::mem::take(&mut path.segments);
            let mut segments = Punctuated::<PathSegment, Token![::]>::new();
            for _ in 0..2 {
                segments.push(PathSegment::from(Ident::new("super", span)));
            }
            segments.extend(old.into_iter().skip(usize::from(!keep_first)));
            path.segments = segments;
        }
        syn::visit_mut::visit_path_mut(self, path);
    }
}

/// `ty`, written for the op's hidden module.
fn nested(ty: &Type) -> Type {
    let mut ty = ty.clone();
    Deepen.visit_type_mut(&mut ty);
    ty
}
