//! The rules a `#[kernel]` must follow, one function per rule (the key's in `keys.rs`, `cpu`'s in
//! `cpu.rs`, `dtypes`' in `dtypes.rs`, the signature's in `sig.rs`), each reporting on the
//! offending token. Any error means the kernel is not registered.

use syn::ItemFn;

use super::ast::KernelAttr;
use crate::ctxt::Errors;
use crate::{cpu, dtypes, keys, sig};

/// Every rule on the attribute and the function.
pub fn kernel(attr: &KernelAttr, function: &ItemFn, errors: &mut Errors) {
    if let Some(key) = &attr.key {
        keys::not_library_key(key, errors);
        keys::known(key, "kernel", errors);
    }
    let listed = attr
        .cpu
        .as_ref()
        .and_then(|cpu| cpu::check(cpu, attr.key.as_ref(), errors));
    if let Some(dtypes) = &attr.dtypes {
        dtypes::check(dtypes, errors);
    }
    sig::check_common(&function.sig, "a `#[kernel]`", errors);
    cpu::covers_target_features(function, attr.cpu.as_ref(), listed.as_deref(), errors);
}
