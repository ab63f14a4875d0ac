//! The adapters between an op's typed kernels and boxed calls: `__call_unboxed` (a boxed call of
//! a typed slot) and `__via_boxed` (a typed call of a boxed fallback's slot).

use proc_macro2::{Span, TokenStream};
use quote::{quote, quote_spanned};
use syn::spanned::Spanned;
use syn::{Ident, LitStr, Type};

use super::ast::Param;
use super::spans::{first_span, local, through};

/// The adapters between typed kernels and boxed calls, and the table's `Option<Boxing>`. Each
/// conversion, and each local it fills, is spanned on its type, so an unboxable type is reported
/// there, once.
pub fn adapters(
    params: &[Param<'_>],
    types: &[Type],
    output_ty: &TokenStream,
    result: &TokenStream,
    private: &TokenStream,
) -> (TokenStream, TokenStream) {
    let names: Vec<&Ident> = params.iter().map(|p| p.name).collect();
    // Locals that hold an argument's (un)boxed form carry its type's span, with nothing of the
    // expansion: an unboxable type is then one error, which rustc reports once however many
    // expressions hit it. (Mangled rather than mixed-site: a mixed-site span would add a
    // backtrace note, and the two diagnostics would no longer be deduplicated.)
    let on = |ty: &Type, name: String| Ident::new(&format!("__switchyard_{name}"), ty.span());

    let holders: Vec<Ident> = types
        .iter()
        .enumerate()
        .map(|(i, ty)| on(ty, format!("holder{i}")))
        .collect();
    let (kernel, keys, stack) = (local("kernel"), local("keys"), local("stack"));
    // Arguments come off the stack last first (a lent `&Tensor` borrowed as it was lent); their
    // errors are reported first to last.
    let take_holders = types.iter().zip(&holders).rev().map(|(ty, holder)| {
        let take = through(ty, &quote!(#private::Unbox<'_>), "take");
        quote_spanned!(ty.span()=> let #holder = #take(#stack);)
    });
    let unbox_holders = params.iter().zip(types).zip(&holders).map(|((p, ty), holder)| {
        let param = LitStr::new(&p.name.to_string(), ty.span());
        let mismatch = on(ty, "mismatch".to_owned());
        // `mut`: the argument is taken from its holder by `&mut` (a `&mut T` writes it).
        quote_spanned! {ty.span()=>
            let mut #holder = #holder
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
            quote_spanned!(ty.span()=> let #name: #ty = #unbox(&mut #holder);)
        });
    // Arguments go on the stack lent where their type lends itself (`&Tensor`: no reference
    // count), boxed otherwise.
    let box_args = params.iter().zip(types).map(|(p, ty)| {
        let name = p.name;
        let lend = through(ty, &quote!(#private::Unbox<'_>), "lend");
        quote_spanned!(ty.span()=> #lend(&#name, &mut #stack);)
    });

    let output_span = first_span(output_ty);
    let output_local = |name: &str| Ident::new(name, Span::mixed_site().located_at(output_span));
    let (result_at, value_at, stack_at, mismatch_at) = (
        output_local("result"),
        output_local("value"),
        output_local("stack"),
        output_local("mismatch"),
    );
    // Written (`&mut`) arguments: handed back under the result (see `Stack`), in order.
    let written: Vec<(&Param<'_>, &Type, usize)> = params
        .iter()
        .zip(types)
        .enumerate()
        .filter(|(_, (p, _))| p.is_written())
        .map(|(i, (p, ty))| (p, ty, i))
        .collect();
    let push_written = written.iter().map(|&(_, ty, i)| {
        let holder = &holders[i];
        let boxed = through(ty, &quote!(#private::Unbox<'_>), "written");
        quote_spanned!(ty.span()=> #stack.push(#boxed(&#holder));)
    });
    let written_locals: Vec<Ident> = written
        .iter()
        .map(|&(_, ty, i)| on(ty, format!("written{i}")))
        .collect();
    let take_written = if written.is_empty() {
        TokenStream::new()
    } else {
        let names = written
            .iter()
            .map(|(p, ty, _)| LitStr::new(&p.name.to_string(), ty.span()));
        // The written values lie under the result, in parameter order: popped last first,
        // their errors reported first to last.
        let takes = written
            .iter()
            .zip(&written_locals)
            .rev()
            .map(|(&(_, ty, _), local)| {
                let take = through(ty, &quote!(#private::Unbox<'_>), "take");
                quote_spanned!(ty.span()=> let #local = #take(&mut #stack);)
            });
        let unboxes = written.iter().zip(&written_locals).map(|(&(p, ty, _), local)| {
            let param = LitStr::new(&p.name.to_string(), ty.span());
            let mismatch = on(ty, "mismatch".to_owned());
            quote_spanned! {ty.span()=>
                let #local = #local
                    .map_err(|#mismatch| #private::boxed_type(__SWITCHYARD_OP.info(), #param, #mismatch))?;
            }
        });
        quote! {
            #private::check_written(&#stack, __SWITCHYARD_OP.info(), &[#(#names),*])?;
            let #value_at = #private::pop_result(&mut #stack, __SWITCHYARD_OP.info())?;
            #(#takes)*
            #(#unboxes)*
        }
    };
    let assign_written = written
        .iter()
        .zip(&written_locals)
        .map(|(&(p, _, _), local)| {
            let name = p.name;
            quote!(*#name = #local;)
        });
    let push_result = quote_spanned! {output_span=>
        #private::push_result(#stack, || <#output_ty as #private::BoxedResult>::into_boxed(#result_at));
    };
    let unbox_result = quote_spanned! {output_span=>
        <#output_ty as #private::BoxedResult>::unboxed(#value_at)
            .map_err(|#mismatch_at| #private::boxed_type(__SWITCHYARD_OP.info(), "result", #mismatch_at))
    };
    // Without written arguments, the result is unboxed as the function's tail; with them, all of
    // the call's values are unboxed before the caller's arguments are assigned, so that an error
    // leaves them as they were.
    let finish = if written.is_empty() {
        quote_spanned! {output_span=>
            #private::take_result(
                &mut #stack,
                __SWITCHYARD_OP.info(),
                |#stack_at| <#output_ty as #private::BoxedResult>::unboxed_from(#stack_at),
                |#value_at| <#output_ty as #private::BoxedResult>::unboxed(#value_at),
            )
        }
    } else {
        quote! {
            #take_written
            let #result_at = #unbox_result?;
            #(#assign_written)*
            ::core::result::Result::Ok(#result_at)
        }
    };
    let fns = quote! {
        /// Boxed call of a typed kernel: pops the arguments, unboxes them, calls, boxes the
        /// written (`&mut`) arguments and the result.
        pub fn __switchyard_call_unboxed(
            #kernel: __SwitchyardKernelFn,
            #keys: #private::DispatchKeySet,
            #stack: &mut #private::Stack<'_>,
        ) -> ::core::result::Result<(), #private::DispatchError> {
            #private::check_args(#stack, __SWITCHYARD_OP.info())?;
            #(#take_holders)*
            #(#unbox_holders)*
            #(#unbox_args)*
            let #result_at = #kernel(#keys, #(#names),*)?;
            #(#push_written)*
            #push_result
            ::core::result::Result::Ok(())
        }

        /// The typed slot of a boxed fallback: lends or boxes the arguments, runs the fallback,
        /// unboxes its result (and the written arguments, assigned only once everything
        /// unboxed).
        // The result's conversions are called in closures, not passed as paths, so that an
        // unboxable result type is one error, on the type.
        #[allow(clippy::redundant_closure)]
        pub fn __switchyard_via_boxed(#keys: #private::DispatchKeySet, #(#names: #types),*) -> #result {
            let mut #stack = #private::Stack::new();
            #(#box_args)*
            __SWITCHYARD_OP.continue_boxed(#keys, &mut #stack)?;
            #finish
        }
    };
    let option = quote!(::core::option::Option::Some(#private::Boxing {
        call_unboxed: __switchyard_call_unboxed,
        via_boxed: __switchyard_via_boxed,
    }));
    (fns, option)
}
