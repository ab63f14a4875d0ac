//! `#[kernel]`'s attribute, parsed and with spans kept. Only the shape of each value is checked
//! here; the rules are in `validate.rs`, and the key becomes tokens only in `expand.rs`.

use proc_macro2::{Span, TokenStream};
use syn::spanned::Spanned;
use syn::{LitStr, Path};

use crate::args::{self, Args};
use crate::cpu::CpuArg;
use crate::ctxt::Errors;
use crate::dtypes::DTypesArg;
use crate::keys::KeyRef;

/// `#[kernel(op = …, key = …, cpu = "…", dtypes = "…", overrides, crate = path)]`. `op` and `key` are `None`
/// only when missing or malformed, which is reported.
pub struct KernelAttr {
    pub op: Option<OpRef>,
    pub key: Option<KeyRef>,
    /// `cpu = "avx2,fma"`: the kernel is a CPU variant needing these features.
    pub cpu: Option<CpuArg>,
    /// `dtypes = "f32,f64"`: the dtype columns the kernel serves (all when absent).
    pub dtypes: Option<DTypesArg>,
    /// `overrides`: deliberately replaces the other registrations at the key.
    pub overrides: Option<Span>,
    /// `crate = path`: where generated code finds switchyard (for re-exporters).
    pub krate: Option<Path>,
}

/// `op = …`: the op's item in scope, written as a path (`mul`, `ops::mul`) or a string holding
/// one (`"mul"`).
pub struct OpRef {
    pub path: Path,
    /// Where the op was named: rustc's errors about an unknown op point here.
    pub span: Span,
    /// The string, when the value was one (`op = "mul"`): it may be an op's `name` instead.
    pub string: Option<String>,
}

impl OpRef {
    /// The name, when the path is one plain identifier (`relu6`, not `self::relu6`).
    pub fn single(&self) -> Option<String> {
        let ident = self.path.get_ident()?;
        let name = ident.to_string();
        (!matches!(name.as_str(), "self" | "super" | "crate" | "Self")).then_some(name)
    }
}

const ALLOWED: &[&str] = &["op", "key", "cpu", "dtypes", "overrides", "crate"];

impl KernelAttr {
    pub fn parse(tokens: TokenStream, errors: &mut Errors) -> KernelAttr {
        let mut args = Args::parse(tokens, "kernel", ALLOWED, errors);
        let krate = args::crate_path(&mut args, errors);
        let op = op(&mut args, errors);
        let key = key(&mut args, errors);
        let cpu = CpuArg::parse(&mut args, errors);
        let dtypes = DTypesArg::parse(&mut args, errors);
        let overrides = args::flag(&mut args, "overrides", "kernel", errors);
        KernelAttr {
            op,
            key,
            cpu,
            dtypes,
            overrides,
            krate,
        }
    }
}

// `op` is required: it says which op's table the kernel joins.
fn op(args: &mut Args, errors: &mut Errors) -> Option<OpRef> {
    let Some(arg) = args.take("op") else {
        errors.at(
            Span::call_site(),
            "`#[kernel]` needs `op = …`: the op this kernel implements, e.g. `op = \"mul\"`",
        );
        return None;
    };
    let string = args::as_str(&arg.value).map(LitStr::value);
    let path = match args::as_path(&arg.value) {
        Some(path) => Some(path.clone()),
        None => args::as_str(&arg.value).and_then(|lit| lit.parse::<Path>().ok()),
    };
    if path.is_none() {
        errors.spanned(&arg.value, "`op` in `#[kernel]` names an op in scope: a string such as `op = \"mul\"` or a path such as `op = switchyard::ops::mul`");
    }
    path.map(|path| OpRef {
        span: arg.value.span(),
        path,
        string,
    })
}

// `key` is required: it picks the table slot, and a kernel without one would never run.
fn key(args: &mut Args, errors: &mut Errors) -> Option<KeyRef> {
    let Some(arg) = args.take("key") else {
        errors.at(
            Span::call_site(),
            "`#[kernel]` needs `key = …`: the dispatch key it serves, e.g. `key = CpuNaive`",
        );
        return None;
    };
    KeyRef::parse(&arg.value, "kernel", errors)
}
