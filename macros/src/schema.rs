//! The schema string of an op, written from its Rust signature: `mul(x: Tensor, y: Tensor) -> Tensor`.
//!
//! Only for display (dumps, errors, handles); types are checked by rustc, not by this text.

use quote::ToTokens;
use syn::{GenericArgument, PathArguments, ReturnType, Type};

use crate::op::is_mut_reference;

/// The schema name of a parameter or return type.
pub fn type_name(ty: &Type) -> String {
    match ty {
        Type::Reference(r) => type_name(&r.elem),
        Type::Paren(p) => type_name(&p.elem),
        Type::Group(g) => type_name(&g.elem),
        Type::Slice(s) => format!("{}[]", type_name(&s.elem)),
        Type::Array(a) => format!("{}[]", type_name(&a.elem)),
        Type::Tuple(t) if t.elems.is_empty() => "()".to_owned(),
        Type::Tuple(t) => {
            let items: Vec<String> = t.elems.iter().map(type_name).collect();
            format!("({})", items.join(", "))
        }
        Type::Path(p) if p.qself.is_none() => {
            let last = p.path.segments.last().expect("paths have a segment");
            let inner = match &last.arguments {
                PathArguments::AngleBracketed(args) => args.args.iter().find_map(|a| match a {
                    GenericArgument::Type(t) => Some(type_name(t)),
                    _ => None,
                }),
                _ => None,
            };
            match (last.ident.to_string().as_str(), inner) {
                ("Option", Some(inner)) => format!("{inner}?"),
                ("Vec", Some(inner)) => format!("{inner}[]"),
                ("f32" | "f64", _) => "float".to_owned(),
                (
                    "i8" | "i16" | "i32" | "i64" | "isize" | "u8" | "u16" | "u32" | "u64" | "usize",
                    _,
                ) => "int".to_owned(),
                ("str" | "String", _) => "str".to_owned(),
                (name, _) => name.to_owned(),
            }
        }
        other => other.to_token_stream().to_string(),
    }
}

/// `name(a: T, b: U) -> R`; a parameter the op may write (`&mut T`) is `a: mut T`.
pub fn schema(name: &str, params: &[(String, &Type)], output: &ReturnType) -> String {
    let params: Vec<String> = params
        .iter()
        .map(|(n, t)| {
            let written = if is_mut_reference(t) { "mut " } else { "" };
            format!("{n}: {written}{}", type_name(t))
        })
        .collect();
    let output = match output {
        ReturnType::Default => "()".to_owned(),
        ReturnType::Type(_, ty) => type_name(ty),
    };
    format!("{name}({}) -> {output}", params.join(", "))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn name(ty: &str) -> String {
        type_name(&syn::parse_str(ty).unwrap())
    }

    #[test]
    fn names() {
        assert_eq!(name("&Tensor"), "Tensor");
        assert_eq!(name("Option<&Tensor>"), "Tensor?");
        assert_eq!(name("&[Tensor]"), "Tensor[]");
        assert_eq!(name("&[usize]"), "int[]");
        assert_eq!(name("f32"), "float");
        assert_eq!(name("&str"), "str");
        assert_eq!(name("switchyard::Device"), "Device");
        assert_eq!(name("(Tensor, Tensor)"), "(Tensor, Tensor)");
    }

    #[test]
    fn written_parameters_say_mut() {
        let (x, y): (Type, Type) = (
            syn::parse_str("&mut Tensor").unwrap(),
            syn::parse_str("&Tensor").unwrap(),
        );
        let params = [("x".to_owned(), &x), ("y".to_owned(), &y)];
        let output = syn::parse_str::<ReturnType>("-> Tensor").unwrap();
        assert_eq!(
            schema("add_", &params, &output),
            "add_(x: mut Tensor, y: Tensor) -> Tensor"
        );
    }
}
