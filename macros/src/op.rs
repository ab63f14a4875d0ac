//! `#[op(name = "mul")] pub fn mul(x: &Tensor, y: &Tensor) -> Tensor;`
//!
//! Expands to the callable `mul`, the fallible `try_mul`, and a module `mul` holding the op's
//! table, its kernel slice, `redispatch`, `handle` and the signature types kernels are checked
//! against. A body, if present, becomes the op's composite kernel.

use proc_macro2::{Span, TokenStream};
use quote::{format_ident, quote, quote_spanned};
use syn::parse::{Parse, ParseStream};
use syn::spanned::Spanned;
use syn::{
    Attribute, Block, FnArg, Ident, LitStr, Pat, ReturnType, Signature, Token, Type, Visibility,
};

use crate::args::{self, Args};
use crate::ctxt::Errors;
use crate::{mangle, schema, sig};

// ---- ast ----

/// The annotated function: a declaration (`;`) or a definition whose body is the composite.
struct OpFn {
    attrs: Vec<Attribute>,
    vis: Visibility,
    sig: Signature,
    body: Option<Block>,
}

impl Parse for OpFn {
    fn parse(input: ParseStream<'_>) -> syn::Result<Self> {
        let attrs = input.call(Attribute::parse_outer)?;
        let vis = input.parse()?;
        let sig = input.parse()?;
        let body = if input.peek(Token![;]) {
            input.parse::<Token![;]>()?;
            None
        } else {
            Some(input.parse()?)
        };
        Ok(OpFn {
            attrs,
            vis,
            sig,
            body,
        })
    }
}

/// One parameter: a plain name and its type.
struct Param<'a> {
    name: &'a Ident,
    ty: &'a Type,
}

// ---- validate ----

const ALLOWED: &[&str] = &["name", "unboxed", "mixes_devices", "crate"];

// Parameters name the schema and are forwarded by name, so each must be a plain identifier.
fn params<'a>(sig: &'a Signature, errors: &mut Errors) -> Vec<Param<'a>> {
    let mut params = Vec::new();
    for arg in &sig.inputs {
        let FnArg::Typed(typed) = arg else { continue };
        match &*typed.pat {
            Pat::Ident(p) if p.by_ref.is_none() && p.mutability.is_none() && p.subpat.is_none() => {
                params.push(Param { name: &p.ident, ty: &typed.ty });
            }
            other => errors.spanned(other, "`#[op]` parameters must be plain names such as `x: &Tensor`: they name the op's schema"),
        }
    }
    params
}

// Every op already has a `try_` form; a `Result` return would nest errors.
fn not_result(sig: &Signature, errors: &mut Errors) {
    if sig::returns_result(&sig.output) {
        errors.spanned(&sig.output, "`#[op]` cannot return `Result`: every op already has a `try_` form returning `Result<_, DispatchError>`; declare the plain return type");
    }
}

// The name identifies the op in `find_op`, dumps and errors; it defaults to the function's name.
fn op_name(args: &mut Args, sig: &Signature, errors: &mut Errors) -> String {
    match args.take("name") {
        None => sig.ident.to_string(),
        Some(arg) => match args::as_str(&arg.value) {
            Some(lit) if !lit.value().is_empty() => lit.value(),
            _ => {
                errors.spanned(
                    &arg.value,
                    "`name` in `#[op]` takes a non-empty string, e.g. `name = \"mul\"`",
                );
                sig.ident.to_string()
            }
        },
    }
}

// ---- expand ----

pub fn expand(attr: TokenStream, item: TokenStream, line: usize) -> TokenStream {
    let mut errors = Errors::new();
    let mut args = Args::parse(attr, "op", ALLOWED, &mut errors);
    let op: OpFn = match syn::parse2(item) {
        Ok(op) => op,
        Err(error) => {
            errors.push(error);
            return errors.finish().unwrap_or_default();
        }
    };
    let krate = args::crate_path(&mut args, &mut errors);
    let name = op_name(&mut args, &op.sig, &mut errors);
    let unboxed = args::flag(&mut args, "unboxed", "op", &mut errors);
    let mixes = args::flag(&mut args, "mixes_devices", "op", &mut errors);
    sig::check_common(&op.sig, "an `#[op]`", &mut errors);
    not_result(&op.sig, &mut errors);
    let params = params(&op.sig, &mut errors);
    if let Some(compile_errors) = errors.finish() {
        return stub(&op, compile_errors);
    }
    generate(
        &op,
        &name,
        &params,
        unboxed,
        &quote!(#krate::__private_v1),
        line,
        mixes,
    )
}

/// On error: the errors, plus the function with an unreachable body so that call sites stay quiet.
fn stub(op: &OpFn, compile_errors: TokenStream) -> TokenStream {
    let OpFn {
        attrs, vis, sig, ..
    } = op;
    let mut sig = sig.clone();
    sig::drop_variadic(&mut sig);
    quote! {
        #compile_errors
        #(#attrs)*
        #[allow(unused_variables)]
        #vis #sig { ::core::unreachable!("this op failed to compile") }
    }
}

fn generate(
    op: &OpFn,
    name: &str,
    params: &[Param<'_>],
    unboxed: bool,
    private: &TokenStream,
    line: usize,
    mixes_devices: bool,
) -> TokenStream {
    let OpFn {
        attrs, vis, sig, ..
    } = op;
    let ident = &sig.ident;
    let try_ident = format_ident!("try_{}", ident);
    let slice = mangle::kernel_slice(ident, line);
    let names: Vec<&Ident> = params.iter().map(|p| p.name).collect();
    let types: Vec<&Type> = params.iter().map(|p| p.ty).collect();
    let inputs = &sig.inputs;
    let output_ty = match &sig.output {
        ReturnType::Default => quote!(()),
        ReturnType::Type(_, ty) => quote!(#ty),
    };
    let output = &sig.output;
    let result = quote!(::core::result::Result<#output_ty, #private::DispatchError>);
    let keyset = quote!(#private::DispatchKeySet);
    let schema_names: Vec<(String, &Type)> =
        params.iter().map(|p| (p.name.to_string(), p.ty)).collect();
    let schema = LitStr::new(
        &schema::schema(name, &schema_names, &sig.output),
        Span::call_site(),
    );
    let name_lit = LitStr::new(name, Span::call_site());
    let arity = params.len();
    // Each argument's keys, spanned on its type so a type that is not `DispatchArg` is reported there.
    let keys = params.iter().map(|p| {
        let (ty, name) = (p.ty, p.name);
        quote_spanned!(ty.span()=> | <#ty as #private::DispatchArg>::dispatch_keys(&#name))
    });
    let (composite_fn, composite) = composite(op);
    let (boxing_fns, boxing) = if unboxed {
        (TokenStream::new(), quote!(::core::option::Option::None))
    } else {
        boxing(params, &output_ty, &result, private)
    };
    let doc_try = format!(
        "Fallible form of [`{ident}()`]: returns the dispatch or kernel error instead of panicking."
    );
    let doc_mod = format!(
        "Dispatch internals of op `{name}`: [`redispatch`](self::redispatch), [`handle`](self::handle), \
         [`register`](self::register), and the [`Signature`](self::Signature) every \
         `#[kernel(op = \"{ident}\")]` must have."
    );
    let location = location(private, ident.span());
    // An op that may mix devices calls table methods without the mismatch check, so the ordinary
    // hot path tests no flag.
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
            let __arg_keys = #keyset::EMPTY #(#keys)*;
            match #ident::__OP.#probe(__arg_keys) {
                ::core::option::Option::Some((__kernel, __keys)) => __kernel(__keys, #(#names),*),
                ::core::option::Option::None => #ident::__cold_call(__arg_keys, #(#names),*),
            }
        }

        #composite_fn

        #[doc = #doc_mod]
        #vis mod #ident {
            #[allow(unused_imports)]
            use super::*;

            /// The signature of a plain kernel of this op. A kernel may also return
            /// `Result<_, DispatchError>` ([`FallibleSignature`]), and may take the call's
            /// `DispatchKeySet` first, to redispatch ([`KeyedSignature`], [`KernelFn`]).
            pub type Signature = fn(#(#types),*) #output;
            /// The signature of a kernel that can fail.
            pub type FallibleSignature = fn(#(#types),*) -> #result;
            /// The signature of a kernel that takes the call's keys first, to redispatch below
            /// its own key.
            pub type KeyedSignature = fn(#keyset, #(#types),*) #output;
            /// The form every kernel is adapted to: keys first, `Result` out. What the op's table
            /// stores and what [`register`] takes.
            pub type KernelFn = fn(#keyset, #(#types),*) -> #result;

            #[allow(unsafe_code)] // linkme's `link_section`
            #[#private::linkme::distributed_slice]
            #[linkme(crate = #private::linkme)]
            #[doc(hidden)]
            pub static #slice: [#private::KernelRegistration<KernelFn>];

            #[doc(hidden)]
            pub use self::#slice as __KERNELS;

            #boxing_fns

            #[doc(hidden)]
            pub static __OP: #private::OpTable<KernelFn> = #private::OpTable::new(
                #private::OpInfo {
                    name: #name_lit,
                    schema: #schema,
                    location: #location,
                    arity: #arity,
                    mixes_devices: #mixes_devices,
                },
                &#slice,
                #composite,
                #boxing,
            );

            #[allow(unsafe_code)] // linkme's `link_section`
            #[#private::linkme::distributed_slice(#private::OPS)]
            #[linkme(crate = #private::linkme)]
            static __ENTRY: &'static dyn #private::ErasedOp = &__OP;

            /// Calls the kernel for exactly `keys`, ignoring thread-local includes and excludes: how
            /// a kernel continues below its own key (`keys.below(DispatchKey::AutogradCpu)`).
            #[inline]
            pub fn redispatch(keys: #keyset, #(#names: #types),*) -> #result {
                match __OP.probe_exact(keys) {
                    ::core::option::Option::Some(__kernel) => __kernel(keys, #(#names),*),
                    ::core::option::Option::None => __cold_redispatch(keys, #(#names),*),
                }
            }

            /// The call when the fast probe found no kernel: builds the table on first use, or
            /// returns the error that explains the failure. Out of line, so that the hot path
            /// reaches it by a tail call and keeps no stack frame of its own.
            #[doc(hidden)]
            #[cold]
            #[inline(never)]
            pub fn __cold_call(__arg_keys: #keyset, #(#names: #types),*) -> #result {
                let (__kernel, __keys) = __OP.#lookup(__arg_keys)?;
                let _depth = #private::trace_depth();
                __kernel(__keys, #(#names),*)
            }

            #[doc(hidden)]
            #[cold]
            #[inline(never)]
            pub fn __cold_redispatch(keys: #keyset, #(#names: #types),*) -> #result {
                let __kernel = __OP.redispatch(keys)?;
                let _depth = #private::trace_depth();
                __kernel(keys, #(#names),*)
            }

            /// A handle to this op: name, schema, registrations, computed table, boxed calls.
            pub fn handle() -> #private::OpHandle {
                #private::OpHandle::new(&__OP)
            }

            /// Registers `kernel` for this op at `key` (a runtime key or an alias) until the
            /// returned guard drops. A kernel that would conflict with another at `key` (linked
            /// or registered, e.g. a SIMD kernel at `CpuSimd`) is refused, naming both: replace
            /// it deliberately with [`register_override`].
            #[track_caller]
            pub fn register(
                key: impl ::core::convert::Into<#private::KernelKey>,
                name: &'static str,
                kernel: KernelFn,
            ) -> ::core::result::Result<#private::Registration, #private::DispatchError> {
                __OP.register(key.into(), name, kernel, false, ::core::panic::Location::caller())
            }

            /// Registers `kernel` at `key` until the returned guard drops, replacing every other
            /// registration there (linked or registered) while it lives; the table dump shows
            /// both. Two overrides at one key are refused.
            #[track_caller]
            pub fn register_override(
                key: impl ::core::convert::Into<#private::KernelKey>,
                name: &'static str,
                kernel: KernelFn,
            ) -> ::core::result::Result<#private::Registration, #private::DispatchError> {
                __OP.register(key.into(), name, kernel, true, ::core::panic::Location::caller())
            }

            /// Registers a CPU variant at `CpuSimd` until the returned guard drops: installed
            /// only where the running CPU has every feature in `cpu`, refused where it never can
            /// run.
            ///
            /// # Safety
            ///
            /// Calling `kernel` must be sound on every CPU that has the features in `cpu`.
            #[track_caller]
            #[allow(unsafe_code)]
            pub unsafe fn register_variant(
                name: &'static str,
                kernel: KernelFn,
                cpu: #private::CpuFeatures,
            ) -> ::core::result::Result<#private::Registration, #private::DispatchError> {
                // SAFETY: the caller's contract is the one `register_variant` requires.
                unsafe {
                    __OP.register_variant(
                        #private::KernelKey::Key(#private::DispatchKey::CpuSimd),
                        name,
                        kernel,
                        cpu,
                        false,
                        ::core::panic::Location::caller(),
                    )
                }
            }

            #[doc(hidden)]
            pub trait __Kernel {
                const KERNEL: Signature;
            }

            #[doc(hidden)]
            pub trait __FallibleKernel {
                const KERNEL: FallibleSignature;
            }

            #[doc(hidden)]
            pub trait __KeyedKernel {
                const KERNEL: KeyedSignature;
            }

            #[doc(hidden)]
            pub trait __KeyedFallibleKernel {
                const KERNEL: KernelFn;
            }

            // Adapters from each kernel form to `KernelFn`. The kernel is a constant, so each is
            // a direct (inlinable) call.

            #[doc(hidden)]
            #[inline]
            pub fn __lift<K: __Kernel>(_: #keyset, #(#names: #types),*) -> #result {
                ::core::result::Result::Ok((K::KERNEL)(#(#names),*))
            }

            #[doc(hidden)]
            #[inline]
            pub fn __lift_fallible<K: __FallibleKernel>(_: #keyset, #(#names: #types),*) -> #result {
                (K::KERNEL)(#(#names),*)
            }

            #[doc(hidden)]
            #[inline]
            pub fn __lift_keyed<K: __KeyedKernel>(keys: #keyset, #(#names: #types),*) -> #result {
                ::core::result::Result::Ok((K::KERNEL)(keys, #(#names),*))
            }
        }
    }
}

/// The adapters between typed kernels and boxed calls, and the table's `Option<Boxing>`. Each
/// conversion is spanned on its type, so an unboxable type is reported there.
fn boxing(
    params: &[Param<'_>],
    output_ty: &TokenStream,
    result: &TokenStream,
    private: &TokenStream,
) -> (TokenStream, TokenStream) {
    let names: Vec<&Ident> = params.iter().map(|p| p.name).collect();
    let types: Vec<&Type> = params.iter().map(|p| p.ty).collect();
    let arity = params.len();
    let values: Vec<Ident> = (0..arity).map(|i| format_ident!("__value{}", i)).collect();
    let holders: Vec<Ident> = (0..arity).map(|i| format_ident!("__holder{}", i)).collect();
    // Arguments come off the stack last first.
    let values_rev: Vec<&Ident> = values.iter().rev().collect();
    let unbox_holders = params
        .iter()
        .zip(&values)
        .zip(&holders)
        .map(|((p, value), holder)| {
            let ty = p.ty;
            let param = LitStr::new(&p.name.to_string(), Span::call_site());
            quote_spanned! {ty.span()=>
                let #holder = <#ty as #private::Unbox<'_>>::holder(#value)
                    .map_err(|m| #private::boxed_type(__OP.info(), #param, m))?;
            }
        });
    let unbox_args = params.iter().zip(&holders).map(|(p, holder)| {
        let (ty, name) = (p.ty, p.name);
        quote_spanned!(ty.span()=> let #name: #ty = <#ty as #private::Unbox<'_>>::unbox(&#holder);)
    });
    let box_args = params.iter().map(|p| {
        let (ty, name) = (p.ty, p.name);
        quote_spanned!(ty.span()=> __stack.push(<#ty as #private::Unbox<'_>>::boxed(&#name));)
    });
    let output_span = output_ty
        .clone()
        .into_iter()
        .next()
        .map_or(Span::call_site(), |t| t.span());
    let push_result = quote_spanned! {output_span=>
        __stack.push(<#output_ty as #private::BoxedResult>::boxed(&__result));
    };
    let unbox_result = quote_spanned! {output_span=>
        <#output_ty as #private::BoxedResult>::unboxed(__value)
    };
    let fns = quote! {
        /// Boxed call of a typed kernel: pops the arguments, unboxes them, calls, boxes the result.
        #[doc(hidden)]
        pub fn __call_unboxed(
            __kernel: KernelFn,
            __keys: #private::DispatchKeySet,
            __stack: &mut #private::Stack,
        ) -> ::core::result::Result<(), #private::DispatchError> {
            __stack.check_args(#arity, __OP.info().name, __OP.info().schema)?;
            #(let #values_rev = __stack.pop_arg();)*
            #(#unbox_holders)*
            #(#unbox_args)*
            let __result = __kernel(__keys, #(#names),*)?;
            #push_result
            ::core::result::Result::Ok(())
        }

        /// The typed slot of a boxed fallback: boxes the arguments, runs the fallback, unboxes
        /// its result.
        #[doc(hidden)]
        pub fn __via_boxed(__keys: #private::DispatchKeySet, #(#names: #types),*) -> #result {
            let mut __stack = #private::Stack::new();
            #(#box_args)*
            #private::ErasedOp::redispatch_boxed(&__OP, __keys, &mut __stack)?;
            let __value = __stack.pop_result(__OP.info().name)?;
            #unbox_result
                .map_err(|m| #private::boxed_type(__OP.info(), "result", m))
        }
    };
    let option = quote!(::core::option::Option::Some(#private::Boxing {
        call_unboxed: __call_unboxed,
        via_boxed: __via_boxed,
    }));
    (fns, option)
}

/// The composite function (the op's body, under a mangled name in the op's own scope so that the
/// body resolves names exactly as written) and the table's `Option` for it.
fn composite(op: &OpFn) -> (TokenStream, TokenStream) {
    let Some(body) = &op.body else {
        return (TokenStream::new(), quote!(::core::option::Option::None));
    };
    let ident = &op.sig.ident;
    let composite_ident = format_ident!("__switchyard_composite_{}", ident);
    let inputs = &op.sig.inputs;
    let output = &op.sig.output;
    let function = quote! {
        #[doc(hidden)]
        #[allow(non_snake_case)]
        fn #composite_ident(#inputs) #output #body
    };
    let option = quote!({
        struct Composite;
        impl __Kernel for Composite {
            const KERNEL: Signature = super::#composite_ident;
        }
        ::core::option::Option::Some(__lift::<Composite> as KernelFn)
    });
    (function, option)
}

/// `Location { module, file, line }` of the token at `span`.
pub fn location(private: &TokenStream, span: Span) -> TokenStream {
    let line = quote_spanned!(span=> ::core::line!());
    quote!(#private::Location { module: ::core::module_path!(), file: ::core::file!(), line: #line })
}
