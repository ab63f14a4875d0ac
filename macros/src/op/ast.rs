//! What `#[op]` is given, parsed and with spans kept: the attribute ([`OpAttr`]) and the function
//! ([`OpFn`]). Only the shape of each value is checked here; the rules are in `validate.rs`.

use proc_macro2::{Span, TokenStream};
use quote::quote;
use syn::parse::{Parse, ParseStream};
use syn::{
    Attribute, Block, FnArg, Ident, Item, LitStr, Pat, Path, Signature, Token, Type, Visibility,
};

use crate::args::{self, Args};
use crate::ctxt::Errors;
use crate::namespace;

/// `#[op(name = "…", error = Type, unboxed, mixes_devices, crate = path)]`.
pub struct OpAttr {
    /// `name = "mul"` or `name = "my_lib::mul"`: the op's name in `find_op`, dumps and errors
    /// (default: the function's), in its crate's namespace unless it names one.
    pub name: Option<LitStr>,
    /// `error = MyError`: the body ends in `Result<T, MyError>`, and its error reaches callers as
    /// the `source()` of a `DispatchError`.
    pub error: Option<Type>,
    /// `unboxed`: the op cannot be called boxed, so its types need not be boxable.
    pub unboxed: Option<Span>,
    /// `mixes_devices`: the op's arguments may live on different devices (`to`).
    pub mixes_devices: Option<Span>,
    /// `crate = path`: where generated code finds switchyard (for re-exporters).
    pub krate: Option<Path>,
}

const ALLOWED: &[&str] = &["name", "error", "unboxed", "mixes_devices", "crate"];

impl OpAttr {
    /// Parses the attribute's arguments. A value of the wrong shape is reported and left out, so
    /// that the op is still generated (with the default) and its uses compile.
    pub fn parse(tokens: TokenStream, errors: &mut Errors) -> OpAttr {
        let mut args = Args::parse(tokens, "op", ALLOWED, errors);
        let krate = args::crate_path(&mut args, errors);
        let name = args.take("name").and_then(|arg| {
            let lit = args::as_str(&arg.value).cloned();
            if lit.is_none() {
                errors.spanned(&arg.value, NAME_TAKES);
            }
            lit
        });
        let error = args.take("error").and_then(|arg| {
            let ty = args::as_path(&arg.value).map(|path| {
                Type::Path(syn::TypePath {
                    qself: None,
                    path: path.clone(),
                })
            });
            if ty.is_none() {
                errors.spanned(&arg.value, ERROR_TAKES);
            }
            ty
        });
        let unboxed = args::flag(&mut args, "unboxed", "op", errors);
        let mixes_devices = args::flag(&mut args, "mixes_devices", "op", errors);
        OpAttr {
            name,
            error,
            unboxed,
            mixes_devices,
            krate,
        }
    }
}

/// What `name = …` must be; said both when it is not a string and when the string is empty.
pub const NAME_TAKES: &str = "`name` in `#[op]` takes a non-empty string, e.g. `name = \"mul\"`";

/// What `error = …` must be.
pub const ERROR_TAKES: &str = "`error` in `#[op]` takes the body's error type, e.g. `error = MyError` (a type path; name a generic type through a `type` alias)";

/// The annotated function: a declaration (`;`) or a definition whose body is the composite.
pub struct OpFn {
    pub attrs: Vec<Attribute>,
    pub vis: Visibility,
    pub sig: Signature,
    pub body: Option<Block>,
}

impl Parse for OpFn {
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

impl OpFn {
    /// The item as an op; on failure, the parse error followed by the item as written if it is
    /// an item that compiles without us (an `#[op]` on a struct), so that nothing else is
    /// reported about it or its uses.
    pub fn parse_item(item: TokenStream) -> Result<OpFn, TokenStream> {
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

    /// The parameters, each a plain name and its type; a parameter of another pattern (reported
    /// by `validate`) is left out.
    pub fn params(&self) -> Vec<Param<'_>> {
        self.sig
            .inputs
            .iter()
            .filter_map(|arg| match arg {
                FnArg::Typed(typed) => plain(&typed.pat).map(|name| Param {
                    name,
                    ty: &typed.ty,
                }),
                FnArg::Receiver(_) => None,
            })
            .collect()
    }

    /// The op's full name, `namespace::name`: `name = "…"` when given (and well formed, which is
    /// reported), else the function's, in the crate's namespace unless it names one.
    pub fn name(&self, attr: &OpAttr) -> String {
        let name = attr
            .name
            .as_ref()
            .map(LitStr::value)
            .filter(|name| namespace::well_formed(name))
            .unwrap_or_else(|| self.sig.ident.to_string());
        namespace::full(&name).unwrap_or(name)
    }

    /// Where the op's name is written: its `name` string, else its function's name.
    pub fn name_span(&self, attr: &OpAttr) -> Span {
        attr.name
            .as_ref()
            .map_or_else(|| self.sig.ident.span(), LitStr::span)
    }
}

/// The name a parameter pattern binds, if it is a plain `x` (not `mut x`, `ref x`, `(x, y)`).
pub fn plain(pat: &Pat) -> Option<&Ident> {
    match pat {
        Pat::Ident(p) if p.by_ref.is_none() && p.mutability.is_none() && p.subpat.is_none() => {
            Some(&p.ident)
        }
        _ => None,
    }
}

/// One parameter: a plain name and its type.
pub struct Param<'a> {
    pub name: &'a Ident,
    pub ty: &'a Type,
}

impl Param<'_> {
    /// Whether the op may write this argument: its type is spelled `&mut T`. A boxed call hands
    /// its value back to the caller (`boxing.rs`).
    pub fn is_written(&self) -> bool {
        is_mut_reference(self.ty)
    }
}

/// Whether `ty` is spelled `&mut T` (through parentheses or an invisible group).
pub fn is_mut_reference(ty: &Type) -> bool {
    match ty {
        Type::Reference(r) => r.mutability.is_some(),
        Type::Paren(p) => is_mut_reference(&p.elem),
        Type::Group(g) => is_mut_reference(&g.elem),
        _ => false,
    }
}
