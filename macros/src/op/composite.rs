//! An op's body as its composite kernel (PyTorch's CompositeImplicitAutograd).

use proc_macro2::TokenStream;
use quote::{format_ident, quote, quote_spanned};

use super::ast::{OpAttr, OpFn};
use super::spans::{first_span, local};

/// The composite function (the op's body, under a mangled name in the op's own scope so that the
/// body resolves names exactly as written) and the table's `Option` for it.
///
/// The body may end in a `T` or in a `Result<T, DispatchError>` (`Ok(…)`), and may use `?` on the
/// `try_` forms of other ops: the composite returns `Result<T, DispatchError>`, so `?` returns the
/// inner error from it, and `BodyResult` turns either ending into that `Result`.
///
/// With `error = E` the body is a function of its own returning `Result<T, E>` (so that `?` in it
/// converts to `E`), and its error becomes the `source()` of a `KernelFailed` error.
pub fn kernel(
    attr: &OpAttr,
    op: &OpFn,
    name: &str,
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
    let function = match &attr.error {
        None => quote! {
            #[doc(hidden)]
            #[allow(non_snake_case, unreachable_code)]
            fn #composite_ident(#inputs) -> ::core::result::Result<#output_ty, #private::DispatchError> {
                let #value = #body;
                #into_result
            }
        },
        Some(error) => {
            let body_ident = format_ident!("__switchyard_body_{}", ident);
            let names = op.params().into_iter().map(|param| param.name);
            // Spanned on the type's token, so that a type that is no error is reported there.
            let into_dispatch = quote_spanned! {first_span(&quote!(#error))=>
                #private::kernel_result::<#output_ty, #error>
            };
            quote! {
                #[doc(hidden)]
                #[allow(non_snake_case)]
                fn #composite_ident(#inputs) -> ::core::result::Result<#output_ty, #private::DispatchError> {
                    #[allow(non_snake_case, unreachable_code)]
                    fn #body_ident(#inputs) -> ::core::result::Result<#output_ty, #error> #body
                    #into_dispatch(
                        #body_ident(#(#names),*),
                        #name,
                        #private::KernelKey::Alias(#private::AliasKey::CompositeImplicit),
                    )
                }
            }
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
