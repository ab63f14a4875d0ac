//! Names of generated statics.
//!
//! A linkme slice's name becomes a linker section name, so it must be unique in the whole binary,
//! not just in its module: two crates (or two versions of one crate) may declare ops of one name,
//! on the same line of files of the same name. The name keeps the op's function name, readable in
//! a symbol table, and adds a hash of everything that places the declaration: crate name and
//! version, the attribute's and the function name's file, line and column.

use proc_macro2::Span;
use syn::Ident;

fn sanitized(text: &str) -> String {
    text.chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .collect()
}

/// FNV-1a, 64 bits: stable across compilers and runs (std's hashers promise neither), and ample
/// for telling apart the ops of one binary.
pub fn fnv1a(parts: &[&str]) -> u64 {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for part in parts {
        // A separator, so that ("ab", "c") and ("a", "bc") differ.
        for byte in part.bytes().chain([0xff]) {
            hash ^= u64::from(byte);
            hash = hash.wrapping_mul(0x0100_0000_01b3);
        }
    }
    hash
}

/// `file:line:column` of a span, when running inside rustc (empty in unit tests).
fn place(span: Span) -> String {
    if !proc_macro::is_available() {
        return String::new();
    }
    let span = span.unwrap();
    format!("{}:{}:{}", span.file(), span.line(), span.column())
}

/// The kernel slice of the op declared by `fn_ident`, in the crate being compiled.
pub fn kernel_slice(fn_ident: &Ident) -> Ident {
    // Cargo sets these for every rustc it runs; the macro runs inside that rustc.
    let var = |name: &str| std::env::var(name).unwrap_or_default();
    let krate = var("CARGO_CRATE_NAME");
    let version = var("CARGO_PKG_VERSION");
    let name = fn_ident.to_string();
    let hash = fnv1a(&[
        &krate,
        &version,
        &place(Span::call_site()),
        &place(fn_ident.span()),
        &name,
    ]);
    Ident::new(
        &format!(
            "__SWITCHYARD_KERNELS_{}_{hash:016x}",
            sanitized(name.trim_start_matches("r#"))
        ),
        Span::call_site(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_part_counts() {
        let base = fnv1a(&["krate", "1.0.0", "src/a.rs:3:1", "src/a.rs:4:8", "mul"]);
        assert_ne!(
            base,
            fnv1a(&["krate", "1.0.1", "src/a.rs:3:1", "src/a.rs:4:8", "mul"])
        );
        assert_ne!(
            base,
            fnv1a(&["krate", "1.0.0", "src/b.rs:3:1", "src/a.rs:4:8", "mul"])
        );
        assert_ne!(
            base,
            fnv1a(&["krate", "1.0.0", "src/a.rs:3:1", "src/a.rs:4:9", "mul"])
        );
        assert_ne!(fnv1a(&["ab", "c"]), fnv1a(&["a", "bc"]));
    }
}
