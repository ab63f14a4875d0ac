//! `#[op(name = "mul")] pub fn mul(x: &Tensor, y: &Tensor) -> Tensor;`
//!
//! Expands to the callable `mul`, the fallible `try_mul`, and a module `mul` holding the op's
//! public surface: `redispatch`, `handle`, `register` and the signature types kernels are checked
//! against. A body, if present, becomes the op's composite kernel.
//!
//! Hygiene: everything that mentions the op's types (aliases, table, adapters) lives in a hidden
//! module two levels below the op, `mul::__switchyard`, which sees the op's scope through
//! `use super::super::*` and declares only mangled names, so a user type named `Signature`, `K` or
//! `KernelFn` keeps its meaning there; `self::` and `super::` paths in the types are rewritten to
//! reach the same items from there. `mul` itself re-exports the public names and declares nothing
//! that a type is resolved against. Generated locals and parameters have mixed-site spans, so an
//! op parameter named `keys` or `kernel` stays the user's.

use proc_macro2::{Span, TokenStream};
use quote::{ToTokens, format_ident, quote, quote_spanned};
use syn::parse::ParseStream;
use syn::punctuated::Punctuated;
use syn::spanned::Spanned;
use syn::visit_mut::VisitMut;
use syn::{
    Attribute, Block, FnArg, Ident, Item, LitStr, Pat, PathSegment, ReturnType, Signature, Token,
    Type, Visibility,
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

impl syn::parse::Parse for OpFn {
    fn parse(input: ParseStream<'_>) -> syn::Result<Self> {
        let attrs = input.call(Attribute::parse_outer)?;
        let vis = input.parse()?;
        let sig = input.parse()?;
        // rustc has parsed the item already: a function ends in `;` or a body.
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

/// The item as an op; on failure, the parse error followed by the item as written if it is an
/// item that compiles without us (an `#[op]` on a struct), so that nothing else is reported
/// about it or its uses.
fn parse_op(item: TokenStream) -> Result<OpFn, TokenStream> {
    syn::parse2(item.clone()).map_err(|error| {
        let compile_error = error.to_compile_error();
        let readable = matches!(
            syn::parse2::<Item>(item.clone()),
            Ok(parsed) if !matches!(parsed, Item::Verbatim(_))
        );
        if readable {
            quote!(#compile_error #item)
        } else {
            compile_error
        }
    })
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

pub fn expand(attr: TokenStream, item: TokenStream) -> TokenStream {
    let mut errors = Errors::new();
    let mut args = Args::parse(attr, "op", ALLOWED, &mut errors);
    let op = match parse_op(item) {
        Ok(op) => op,
        Err(tokens) => {
            let compile_errors = errors.finish();
            return quote!(#compile_errors #tokens);
        }
    };
    let krate = args::crate_path(&mut args, &mut errors);
    let name = op_name(&mut args, &op.sig, &mut errors);
    let unboxed = args::flag(&mut args, "unboxed", "op", &mut errors);
    let mixes = args::flag(&mut args, "mixes_devices", "op", &mut errors);
    // Errors so far are in the attribute or after the signature: the op is still generated, so
    // that its kernels and callers compile and the mistake is reported once. A signature that
    // breaks a rule cannot be generated: then only the function is emitted.
    let before = errors.len();
    sig::check_common(&op.sig, "an `#[op]`", &mut errors);
    not_result(&op.sig, &mut errors);
    let params = params(&op.sig, &mut errors);
    let signature_ok = errors.len() == before;
    let compile_errors = errors.finish();
    if !signature_ok {
        return stub(&op, compile_errors.unwrap_or_default());
    }
    let flags = Flags { unboxed, mixes };
    let generated = generate(&op, &name, &params, flags, &quote!(#krate::__private_v1));
    quote!(#compile_errors #generated)
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

/// `#[op(unboxed, mixes_devices)]`.
#[derive(Clone, Copy)]
struct Flags {
    unboxed: bool,
    mixes: bool,
}

/// A generated local variable or parameter: mixed-site, so that it neither hides nor is hidden by
/// a parameter of the user's with the same name.
fn local(name: &str) -> Ident {
    Ident::new(name, Span::mixed_site())
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

fn generate(
    op: &OpFn,
    name: &str,
    params: &[Param<'_>],
    flags: Flags,
    private: &TokenStream,
) -> TokenStream {
    let OpFn {
        attrs, vis, sig, ..
    } = op;
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
    let (composite_fn, composite) = composite(op, &output_ty, private);
    let (boxing_fns, boxing) = if flags.unboxed {
        (TokenStream::new(), quote!(::core::option::Option::None))
    } else {
        boxing(params, &types, &inner_output, &inner_result, private)
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
    let mixes_devices = flags.mixes;
    let (probe, lookup) = if flags.mixes {
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

                #[allow(unsafe_code)] // linkme's `link_section`
                #[#private::linkme::distributed_slice]
                #[linkme(crate = #private::linkme)]
                pub static #slice: [#private::KernelRegistration<__SwitchyardKernelFn>];

                #boxing_fns

                pub static __SWITCHYARD_OP: #private::OpTable<__SwitchyardKernelFn> =
                    #private::OpTable::new(
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
                static __SWITCHYARD_ENTRY: &'static dyn #private::ErasedOp = &__SWITCHYARD_OP;

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
                    __SWITCHYARD_OP.register(
                        key.into(),
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

/// `<ty as Trait>::method`, spanned from the type's first token to its last: rustc reports a
/// missing `ty: Trait` on the whole path, which then covers exactly the type as written, so that
/// every use of the type is one and the same diagnostic (`&Window`, not `&` and `&Window`).
fn through(ty: &Type, trait_: &TokenStream, method: &str) -> TokenStream {
    let mut tokens = ty.to_token_stream().into_iter();
    let first = tokens.next().map_or(Span::call_site(), |t| t.span());
    let last = tokens.last().map_or(first, |t| t.span());
    let method = Ident::new(method, last);
    let open = quote_spanned!(first=> <);
    quote!(#open #ty as #trait_ > :: #method)
}

/// The span of the first token of `tokens` (the op's result type, where its errors belong).
fn first_span(tokens: &TokenStream) -> Span {
    tokens
        .clone()
        .into_iter()
        .next()
        .map_or(Span::call_site(), |t| t.span())
}

/// The adapters between typed kernels and boxed calls, and the table's `Option<Boxing>`. Each
/// conversion, and each local it fills, is spanned on its type, so an unboxable type is reported
/// there, once.
fn boxing(
    params: &[Param<'_>],
    types: &[Type],
    output_ty: &TokenStream,
    result: &TokenStream,
    private: &TokenStream,
) -> (TokenStream, TokenStream) {
    let names: Vec<&Ident> = params.iter().map(|p| p.name).collect();
    let arity = params.len();
    // Locals that hold an argument's (un)boxed form carry its type's span, with nothing of the
    // expansion: an unboxable type is then one error, which rustc reports once however many
    // expressions hit it. (Mangled rather than mixed-site: a mixed-site span would add a
    // backtrace note, and the two diagnostics would no longer be deduplicated.)
    let on = |ty: &Type, name: String| Ident::new(&format!("__switchyard_{name}"), ty.span());

    let values: Vec<Ident> = types
        .iter()
        .enumerate()
        .map(|(i, ty)| on(ty, format!("value{i}")))
        .collect();
    let holders: Vec<Ident> = types
        .iter()
        .enumerate()
        .map(|(i, ty)| on(ty, format!("holder{i}")))
        .collect();
    let (kernel, keys, stack) = (local("kernel"), local("keys"), local("stack"));
    // Arguments come off the stack last first.
    let values_rev: Vec<&Ident> = values.iter().rev().collect();
    let unbox_holders = params
        .iter()
        .zip(types)
        .zip(&values)
        .zip(&holders)
        .map(|(((p, ty), value), holder)| {
            let param = LitStr::new(&p.name.to_string(), ty.span());
            let mismatch = on(ty, "mismatch".to_owned());
            let unbox_holder = through(ty, &quote!(#private::Unbox<'_>), "holder");
            quote_spanned! {ty.span()=>
                let #holder = #unbox_holder(#value)
                    .map_err(|#mismatch| #private::boxed_type(__SWITCHYARD_OP.info(), #param, #mismatch))?;
            }
        });
    let unbox_args = params
        .iter()
        .zip(types)
        .zip(&holders)
        .map(|((p, ty), holder)| {
            let name = p.name;
            let unbox = through(ty, &quote!(#private::Unbox<'_>), "unbox");
            quote_spanned!(ty.span()=> let #name: #ty = #unbox(&#holder);)
        });
    let box_args = params.iter().zip(types).map(|(p, ty)| {
        let name = p.name;
        let boxed = through(ty, &quote!(#private::Unbox<'_>), "boxed");
        quote_spanned!(ty.span()=> #stack.push(#boxed(&#name));)
    });
    let output_span = first_span(output_ty);
    let output_local = |name: &str| Ident::new(name, Span::mixed_site().located_at(output_span));
    let (result_at, value_at, mismatch_at) = (
        output_local("result"),
        output_local("value"),
        output_local("mismatch"),
    );
    let push_result = quote_spanned! {output_span=>
        #stack.push(<#output_ty as #private::BoxedResult>::boxed(&#result_at));
    };
    let unbox_result = quote_spanned! {output_span=>
        <#output_ty as #private::BoxedResult>::unboxed(#value_at)
            .map_err(|#mismatch_at| #private::boxed_type(__SWITCHYARD_OP.info(), "result", #mismatch_at))
    };
    let fns = quote! {
        /// Boxed call of a typed kernel: pops the arguments, unboxes them, calls, boxes the result.
        pub fn __switchyard_call_unboxed(
            #kernel: __SwitchyardKernelFn,
            #keys: #private::DispatchKeySet,
            #stack: &mut #private::Stack,
        ) -> ::core::result::Result<(), #private::DispatchError> {
            #stack.check_args(#arity, __SWITCHYARD_OP.info().name, __SWITCHYARD_OP.info().schema)?;
            #(let #values_rev = #stack.pop_arg();)*
            #(#unbox_holders)*
            #(#unbox_args)*
            let #result_at = #kernel(#keys, #(#names),*)?;
            #push_result
            ::core::result::Result::Ok(())
        }

        /// The typed slot of a boxed fallback: boxes the arguments, runs the fallback, unboxes
        /// its result.
        pub fn __switchyard_via_boxed(#keys: #private::DispatchKeySet, #(#names: #types),*) -> #result {
            let mut #stack = #private::Stack::new();
            #(#box_args)*
            __SWITCHYARD_OP.continue_boxed(#keys, &mut #stack)?;
            let #value_at = #stack.pop_result(__SWITCHYARD_OP.info().name)?;
            #unbox_result
        }
    };
    let option = quote!(::core::option::Option::Some(#private::Boxing {
        call_unboxed: __switchyard_call_unboxed,
        via_boxed: __switchyard_via_boxed,
    }));
    (fns, option)
}

/// The composite function (the op's body, under a mangled name in the op's own scope so that the
/// body resolves names exactly as written) and the table's `Option` for it.
///
/// The body may end in a `T` or in a `Result<T, DispatchError>` (`Ok(…)`), and may use `?` on the
/// `try_` forms of other ops: the composite returns `Result<T, DispatchError>`, so `?` returns the
/// inner error from it, and `BodyResult` turns either ending into that `Result`.
fn composite(
    op: &OpFn,
    output_ty: &TokenStream,
    private: &TokenStream,
) -> (TokenStream, TokenStream) {
    let Some(body) = &op.body else {
        return (TokenStream::new(), quote!(::core::option::Option::None));
    };
    let ident = &op.sig.ident;
    let composite_ident = format_ident!("__switchyard_composite_{}", ident);
    let inputs = &op.sig.inputs;
    let value = local("value");
    let output_span = first_span(output_ty);
    let into_result = quote_spanned! {output_span=>
        <_ as #private::BodyResult<#output_ty>>::into_result(#value)
    };
    let function = quote! {
        #[doc(hidden)]
        #[allow(non_snake_case, unreachable_code)]
        fn #composite_ident(#inputs) -> ::core::result::Result<#output_ty, #private::DispatchError> {
            let #value = #body;
            #into_result
        }
    };
    let option = quote!({
        struct Composite;
        impl __SwitchyardFallibleKernel for Composite {
            const KERNEL: __SwitchyardFallibleSignature = super::super::#composite_ident;
        }
        ::core::option::Option::Some(
            __switchyard_lift_fallible::<Composite> as __SwitchyardKernelFn
        )
    });
    (function, option)
}

/// `Location { module, file, line }` of the token at `span`.
pub fn location(private: &TokenStream, span: Span) -> TokenStream {
    let line = quote_spanned!(span=> ::core::line!());
    quote!(#private::Location { module: ::core::module_path!(), file: ::core::file!(), line: #line })
}
