//! Names of generated statics.
//!
//! A linkme slice's name becomes a linker section name, so it must be unique in the whole binary,
//! not just in its module: it is mangled with the crate name, the op's function name and the line.

use proc_macro2::Span;
use syn::Ident;

fn sanitized(text: &str) -> String {
    text.chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .collect()
}

/// The kernel slice of the op declared by `fn_ident` at `line` of the crate being compiled.
pub fn kernel_slice(fn_ident: &Ident, line: usize) -> Ident {
    // Cargo sets CARGO_CRATE_NAME for every rustc it runs; the macro runs inside that rustc.
    let krate = std::env::var("CARGO_CRATE_NAME").unwrap_or_else(|_| "unknown".to_owned());
    Ident::new(
        &format!(
            "__SWITCHYARD_KERNELS_{}_{}_{line}",
            sanitized(&krate),
            sanitized(&fn_ident.to_string())
        ),
        Span::call_site(),
    )
}
