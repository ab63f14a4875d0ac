//! Writes `many_ops.rs` into `OUT_DIR`: 2,000 ops with one naive kernel each, which the
//! `table_build/2000_ops` bench builds the tables of (`benches/semantics.rs` includes the file).
//! Generated rather than written out, since a `macro_rules!` repetition cannot invent the 2,000
//! distinct names that ops must have. The ops are `unboxed` and take one argument, which keeps
//! the release build of the bench binary about a third shorter; a table build does the same work
//! either way (a boxed fallback's slot resolves to `FallbackUnboxed` instead of the fallback).

use std::fmt::Write as _;

/// How many ops the bench declares.
const OPS: usize = 2000;

fn main() {
    let mut out = String::new();
    for i in 0..OPS {
        let _ = writeln!(
            out,
            "#[op(name = \"many::op{i:04}\", unboxed)]\n\
             pub fn op{i:04}(x: &Tensor) -> usize;\n\
             #[kernel(op = op{i:04}, key = CpuNaive)]\n\
             fn op{i:04}_naive(x: &Tensor) -> usize {{\n    \
                 x.dim()\n\
             }}"
        );
    }
    let dir = std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR for build scripts");
    let path = std::path::Path::new(&dir).join("many_ops.rs");
    std::fs::write(&path, out).expect("OUT_DIR is writable");
    println!("cargo::rerun-if-changed=build.rs");
}
