//! The one error type of dispatch and of kernels; `kernel.rs` adapts a kernel's own error type
//! to it (in this module's layer, because `ErrorKind::KernelFailed` holds its `KernelSource`).

mod kernel;

use std::fmt;

use crate::dtype::{ColumnSet, DTypeColumn};
use crate::dtype::{UserDType, UserDTypeDecl};
use crate::key::{DispatchKey, DispatchKeySet};

pub use kernel::{KernelSource, kernel_result};

/// Where something was written: the module path (which starts with the crate name), file and line.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Debug)]
pub struct Location {
    /// `module_path!()` at the definition: `crate::module`.
    pub module: &'static str,
    /// `file!()` at the definition.
    pub file: &'static str,
    /// `line!()` at the definition.
    pub line: u32,
}

/// The [`Location`] where it is written: for the library's own registration statics.
macro_rules! location_here {
    () => {
        $crate::error::Location {
            module: module_path!(),
            file: file!(),
            line: line!(),
        }
    };
}
pub(crate) use location_here;

impl Location {
    /// The crate name: the first segment of the module path.
    pub fn crate_name(&self) -> &'static str {
        self.module.split("::").next().unwrap_or(self.module)
    }
}

impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.file, self.line)
    }
}

/// What went wrong; see [`DispatchError::kind`].
#[derive(Clone, PartialEq, Debug)]
#[non_exhaustive]
pub enum ErrorKind {
    /// The slot that the call's keys selected has no kernel.
    MissingKernel {
        /// The op's name.
        op: &'static str,
        /// The op's Rust item by its path from its crate's root (`my_crate::ops::cube`), for
        /// the `#[kernel(op = …)]` the message suggests.
        item: String,
        /// The key the dispatcher tried.
        key: DispatchKey,
        /// The call's key set after thread-local includes and excludes.
        call_keys: DispatchKeySet,
        /// The column the call's dtypes selected.
        column: DTypeColumn,
        /// For each of the call's keys at which the op has kernels, the columns they serve.
        served: Vec<(DispatchKey, ColumnSet)>,
        /// The keys at which the op does have kernels.
        available: DispatchKeySet,
    },
    /// Nothing to dispatch on: no argument carried a key, or every key was excluded.
    NoDispatchKeys {
        /// The op's name.
        op: &'static str,
        /// The arguments' keys before thread-local excludes.
        arg_keys: DispatchKeySet,
    },
    /// Tensors from different device families in one call.
    DeviceMismatch {
        /// The op's name.
        op: &'static str,
        /// The device families involved (see [`crate::families`]), highest priority first.
        families: Vec<DispatchKeySet>,
    },
    /// Two kernels registered for one (op, key, CPU variant).
    DuplicateKernel {
        /// The op's name.
        op: &'static str,
        /// The contested key.
        key: crate::KernelKey,
        /// The kernel names and where each was registered, in sorted order.
        first: (&'static str, Location),
        /// See `first`.
        second: (&'static str, Location),
    },
    /// Two fallbacks registered for one key.
    DuplicateFallback {
        /// The contested key.
        key: DispatchKey,
        /// The fallback names and where each was registered, in sorted order.
        first: (&'static str, Location),
        /// See `first`.
        second: (&'static str, Location),
    },
    /// A boxed call with the wrong number of arguments.
    BoxedArity {
        /// The op's name.
        op: &'static str,
        /// The op's schema.
        schema: &'static str,
        /// How many arguments the op takes.
        expected: usize,
        /// How many the stack held.
        found: usize,
    },
    /// A boxed argument (or result) of the wrong type.
    BoxedType {
        /// The op's name.
        op: &'static str,
        /// The op's schema.
        schema: &'static str,
        /// The parameter's name, or `"result"`.
        argument: &'static str,
        /// What was expected and found.
        mismatch: TypeMismatch,
    },
    /// An op declared `#[op(unboxed)]` reached a boxed call or a boxed fallback.
    Unboxed {
        /// The op's name.
        op: &'static str,
        /// The boxed fallback's key, if a fallback was the cause.
        key: Option<DispatchKey>,
    },
    /// `find_op`-style lookup of a name that no linked op has.
    UnknownOp {
        /// The name asked for.
        name: String,
        /// Linked ops with a similar name.
        similar: Vec<&'static str>,
    },
    /// `find_op`-style lookup of a bare name (no namespace) that ops of several namespaces have.
    AmbiguousOp {
        /// The name asked for.
        name: String,
        /// The full names of the ops that have it, sorted.
        candidates: Vec<&'static str>,
    },
    /// Two ops declared with one full name.
    DuplicateOp {
        /// The contested name.
        op: &'static str,
        /// Where each op was declared.
        first: Location,
        /// See `first`.
        second: Location,
    },
    /// The call carries a [`UserDType`] slot that two declarations claim
    /// ([`declare_dtype!`](crate::declare_dtype)): which dtype its tensors hold is ambiguous.
    UserDTypeConflict {
        /// The op's name.
        op: &'static str,
        /// The slot claimed twice.
        dtype: UserDType,
        /// The first declaration, by where it is written.
        first: UserDTypeDecl,
        /// The second.
        second: UserDTypeDecl,
    },
    /// Arguments whose shapes the op cannot take.
    Shape {
        /// The op's name.
        op: &'static str,
        /// What is wrong, with the shapes.
        message: String,
    },
    /// A kernel that ran and failed for another reason (a dtype or feature it lacks, a device
    /// that is not available, …).
    Kernel {
        /// The op's name.
        op: &'static str,
        /// What went wrong.
        message: String,
    },
    /// A kernel (or an op's body) returned its own error type: that error is this one's
    /// [`source`](std::error::Error::source), and the message prints its chain.
    KernelFailed {
        /// The op's name.
        op: &'static str,
        /// The key the failing kernel was registered at (`CompositeImplicit` for an op's body).
        key: crate::KernelKey,
        /// The kernel's error.
        source: kernel::KernelSource,
    },
    /// An element count or byte size that does not fit: the product of a shape (or an output's
    /// `m·n`) beyond `usize::MAX`, or its byte size beyond `isize::MAX`, the largest allocation.
    SizeOverflow {
        /// The op's name.
        op: &'static str,
        /// The shapes the size was computed from.
        shapes: Vec<Vec<usize>>,
        /// What overflowed, and which limit.
        what: String,
    },
    /// The allocator could not provide memory for a result.
    OutOfMemory {
        /// The op's name.
        op: &'static str,
        /// How many bytes were asked for.
        bytes: usize,
    },
}

/// Why a call could not run. Plain op calls panic with this error's message; the `try_` form of
/// every op returns it.
///
/// The error is one pointer wide, so `Result<Tensor, DispatchError>` is a (tag, pointer) pair that
/// travels in registers.
#[derive(Clone, PartialEq)]
pub struct DispatchError {
    kind: Box<ErrorKind>,
}

impl DispatchError {
    /// Wraps a kind.
    #[cold]
    pub fn new(kind: ErrorKind) -> Self {
        DispatchError {
            kind: Box::new(kind),
        }
    }

    /// A shape error raised by a kernel of `op`.
    #[cold]
    pub fn shape(op: &'static str, message: impl Into<String>) -> Self {
        Self::new(ErrorKind::Shape {
            op,
            message: message.into(),
        })
    }

    /// Any other failure of a kernel of `op`.
    #[cold]
    pub fn kernel(op: &'static str, message: impl Into<String>) -> Self {
        Self::new(ErrorKind::Kernel {
            op,
            message: message.into(),
        })
    }

    /// An element count or byte size computed from `shapes` that does not fit (see
    /// [`ErrorKind::SizeOverflow`]); `what` says which and the limit it passed.
    #[cold]
    pub fn size_overflow(op: &'static str, shapes: &[&[usize]], what: impl Into<String>) -> Self {
        Self::new(ErrorKind::SizeOverflow {
            op,
            shapes: shapes.iter().map(|s| s.to_vec()).collect(),
            what: what.into(),
        })
    }

    /// An allocation of `bytes` for a result of `op` that failed.
    #[cold]
    pub fn out_of_memory(op: &'static str, bytes: usize) -> Self {
        Self::new(ErrorKind::OutOfMemory { op, bytes })
    }

    /// What went wrong.
    pub fn kind(&self) -> &ErrorKind {
        &self.kind
    }

    /// The op the error is about.
    pub fn op(&self) -> &'static str {
        match *self.kind {
            ErrorKind::MissingKernel { op, .. }
            | ErrorKind::NoDispatchKeys { op, .. }
            | ErrorKind::DeviceMismatch { op, .. }
            | ErrorKind::DuplicateKernel { op, .. }
            | ErrorKind::DuplicateOp { op, .. }
            | ErrorKind::UserDTypeConflict { op, .. }
            | ErrorKind::BoxedArity { op, .. }
            | ErrorKind::BoxedType { op, .. }
            | ErrorKind::Unboxed { op, .. }
            | ErrorKind::Shape { op, .. }
            | ErrorKind::Kernel { op, .. }
            | ErrorKind::KernelFailed { op, .. }
            | ErrorKind::SizeOverflow { op, .. }
            | ErrorKind::OutOfMemory { op, .. } => op,
            ErrorKind::DuplicateFallback { .. } => "(every op)",
            ErrorKind::UnknownOp { .. } => "(unknown op)",
            ErrorKind::AmbiguousOp { .. } => "(ambiguous op name)",
        }
    }

    /// Panics with this error's message; what a plain (non-`try_`) op call does on failure.
    #[cold]
    #[inline(never)]
    #[track_caller]
    pub fn panic(self) -> ! {
        panic!("{self}")
    }
}

impl fmt::Debug for DispatchError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Debug shows the message too: `unwrap()` on a `try_` result should read well.
        write!(f, "DispatchError({self})")
    }
}

impl std::error::Error for DispatchError {
    /// The error a kernel returned, for [`ErrorKind::KernelFailed`]: `downcast_ref` reaches the
    /// kernel's own type.
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match &*self.kind {
            ErrorKind::KernelFailed { source, .. } => Some(source.error()),
            _ => None,
        }
    }
}

impl fmt::Display for DispatchError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &*self.kind {
            ErrorKind::MissingKernel {
                op,
                item,
                key,
                call_keys,
                column,
                served,
                available,
            } => {
                // Dtypes are named when they matter: the call carries some, or a kernel at one of
                // its keys serves only some columns.
                let typed = *column != DTypeColumn::Untyped
                    || served
                        .iter()
                        .any(|(_, columns)| !columns.is_all() && *columns != ColumnSet::BUILTIN);
                if typed {
                    let what = match column {
                        DTypeColumn::Untyped => "untyped calls".to_owned(),
                        DTypeColumn::Mixed => {
                            format!("mixed dtypes ({})", call_keys.dtype_names())
                        }
                        one => format!("dtype {one}"),
                    };
                    write!(
                        f,
                        "op `{op}`: no kernel for {what} at dispatch key `{key}` (call keys \
                         {call_keys}); "
                    )?;
                } else {
                    write!(
                        f,
                        "op `{op}`: no kernel for dispatch key `{key}` (call keys {call_keys}); "
                    )?;
                }
                // The call's keys have kernels, but none for its column: the dtype is the cause.
                let dtype_miss =
                    !served.is_empty() && !served.iter().any(|(_, columns)| columns.has(*column));
                if dtype_miss {
                    for (i, (at, columns)) in served.iter().enumerate() {
                        let lead = if i == 0 { "kernels at" } else { "; at" };
                        write!(f, "{lead} `{at}` serve {columns}")?;
                    }
                    write!(
                        f,
                        ". Likely cause: no kernel at these keys serves {column}; convert the \
                         arguments to a dtype one serves, or register a kernel whose `dtypes` \
                         include `{column}`"
                    )?;
                    // A user dtype is named by its constant, not by a string.
                    if let Some(dtype) = column.user_dtype() {
                        write!(
                            f,
                            " by its constant (`dtypes = [MY_DTYPE]` with `MY_DTYPE: UserDType = \
                             UserDType::{}`)",
                            dtype.slot_name()
                        )?;
                    }
                    return Ok(());
                }
                // A user dtype is served by the kernels that name it: none at any key here.
                if let Some(dtype) = column.user_dtype() {
                    return write!(
                        f,
                        "{column} is a user dtype, served only by kernels that name it, and none \
                         of this op's does. Register one with `dtypes = [MY_DTYPE]` (`MY_DTYPE: \
                         UserDType = UserDType::{}`), or `dtypes = \"all\"` for a kernel that \
                         reads no elements (a view)",
                        dtype.slot_name()
                    );
                }
                if !available.intersects(DispatchKeySet::BACKENDS) {
                    if available.is_empty() {
                        write!(f, "the op has no kernels registered at all")?;
                    } else {
                        // Kernels at layers' keys (autocast, modes) pass the call on.
                        write!(
                            f,
                            "the op has no kernels registered at all for a backend (only at \
                             {available})"
                        )?;
                    }
                    write!(
                        f,
                        ". Likely cause: the crate that provides its kernels is not linked into \
                         this binary; name it once, e.g. `use my_kernels as _;` (the linker drops \
                         crates that no code names)"
                    )?;
                    // wasm-ld loads a library's code only where something calls into it, so a
                    // crate that is only named is dropped all the same; LTO hands it every crate
                    // of a binary, but a library module (a cdylib, as wasm-bindgen builds) still
                    // leaves out a crate that nothing calls (its kernels come with any one call).
                    #[cfg(target_family = "wasm")]
                    write!(
                        f,
                        ". On WebAssembly naming it is not enough (the linker keeps only code \
                         that is called): build with `lto = \"thin\"` or `lto = true` in the \
                         profile, and in a library module (a cdylib) also call one function of \
                         that crate"
                    )?;
                    return Ok(());
                }
                write!(f, "kernels exist for: {available}. Likely cause: ")?;
                match key.group() {
                    crate::KeyGroup::Backend => write!(
                        f,
                        "the arguments are on a device ({}) for which no linked backend implements \
                         `{op}`; move them to a device that has a kernel, or link the backend crate",
                        crate::family_name(crate::family_of(*key))
                    ),
                    crate::KeyGroup::Autograd => write!(
                        f,
                        "an argument requires grad (it carries `{key}`), and `{op}` has no \
                         derivative; add one with {} \
                         (one kernel serves every backend), or compute it without autograd \
                         (under `no_grad()`, or on detached arguments); switchyard's tensors also \
                         offer `autograd::warn_not_implemented()`, which makes this a warning",
                        derivative_kernel(item)
                    ),
                    _ => write!(
                        f,
                        "`{key}` is active (a thread-local include or an argument's key) but \
                         nothing is registered for it; register a kernel for `{key}`, or exclude it"
                    ),
                }
            }
            ErrorKind::NoDispatchKeys { op, arg_keys } => write!(
                f,
                "op `{op}`: no dispatchable arguments (argument keys {arg_keys}, after \
                 thread-local includes and excludes: {{}}), and the op has no composite kernel \
                 (a body or a `CompositeExplicit` kernel) to run without one; pass a tensor or a \
                 `Device`, or lift the exclude guard that removed every key"
            ),
            ErrorKind::DeviceMismatch { op, families } => {
                let names: Vec<_> = families.iter().map(|f| crate::family_name(*f)).collect();
                write!(
                    f,
                    "op `{op}`: arguments are on different devices ({}); move them to one device first",
                    names.join(" and ")
                )
            }
            ErrorKind::DuplicateKernel {
                op,
                key,
                first,
                second,
            } => {
                write!(
                    f,
                    "op `{op}`: two kernels registered for dispatch key `{key}`: `{}` at {} and `{}` \
                     at {}; ",
                    first.0, first.1, second.0, second.1
                )?;
                if first.1.crate_name() != second.1.crate_name() {
                    f.write_str(
                        "they come from different crates (the CPU variants of one key come from one \
                         crate), so one would silently lose. ",
                    )?;
                }
                f.write_str(
                    "Remove one, or declare the one that should win with `overrides` \
                     (`#[kernel(…, overrides)]`, or `op::register_override` at run time)",
                )
            }
            ErrorKind::DuplicateOp { op, first, second } => {
                let (namespace, bare) = op.rsplit_once("::").unwrap_or(("", op));
                let (a, b) = (first.crate_name(), second.crate_name());
                write!(
                    f,
                    "two ops are named `{op}`: one declared in crate `{a}` at {first}, one in crate \
                     `{b}` at {second}; op names must be unique in a binary"
                )?;
                if a == b {
                    write!(f, " (give one of them another `name`)")
                } else if a == namespace || b == namespace {
                    let other = if a == namespace { b } else { a };
                    write!(
                        f,
                        " (namespace `{namespace}` is crate `{namespace}`'s: declare the op of \
                         crate `{other}` in its own, `#[op(name = \"{other}::{bare}\")]`, or \
                         leave `name` out: an op takes its crate's name as namespace)"
                    )
                } else {
                    write!(
                        f,
                        " (namespace `{namespace}` is claimed by both: declare each in its \
                         crate's, `#[op(name = \"{a}::{bare}\")]` in crate `{a}` or \
                         `#[op(name = \"{b}::{bare}\")]` in crate `{b}`, or leave `name` out: an \
                         op takes its crate's name as namespace)"
                    )
                }
            }
            ErrorKind::UserDTypeConflict {
                op,
                dtype,
                first,
                second,
            } => write!(
                f,
                "op `{op}`: the call carries user dtype slot `{}`, which two declarations claim: \
                 {first}, and {second}; a slot belongs to one dtype: move one declaration to a free \
                 slot (`UserDType::PrivateUse1..4`) or remove it",
                dtype.slot_name()
            ),
            ErrorKind::DuplicateFallback { key, first, second } => write!(
                f,
                "two fallbacks registered for dispatch key `{key}`: `{}` at {} and `{}` at {}; \
                 remove one (each key takes at most one fallback)",
                first.0, first.1, second.0, second.1
            ),
            ErrorKind::BoxedArity {
                op,
                schema,
                expected,
                found,
            } => write!(
                f,
                "op `{op}`: boxed call with {found} argument(s), but `{schema}` takes {expected}"
            ),
            ErrorKind::BoxedType {
                op,
                schema,
                argument,
                mismatch,
            } => write!(
                f,
                "op `{op}`: boxed `{argument}` has the wrong type: {mismatch} (schema `{schema}`)"
            ),
            ErrorKind::Unboxed { op, key: None } => write!(
                f,
                "op `{op}` is declared `#[op(unboxed)]`: it cannot be called boxed; call it typed"
            ),
            ErrorKind::Unboxed { op, key: Some(key) } => write!(
                f,
                "op `{op}` is declared `#[op(unboxed)]`, so the boxed fallback at `{key}` cannot \
                 serve it; exclude `{key}`, register a kernel of the op for it, or make the op boxable"
            ),
            ErrorKind::AmbiguousOp { name, candidates } => write!(
                f,
                "op name `{name}` is ambiguous: linked ops of several namespaces have it ({}); \
                 name one by its full name, e.g. `{}`",
                candidates
                    .iter()
                    .map(|c| format!("`{c}`"))
                    .collect::<Vec<_>>()
                    .join(", "),
                candidates.first().copied().unwrap_or_default()
            ),
            ErrorKind::UnknownOp { name, similar } => {
                write!(f, "no op named `{name}` is linked into this binary")?;
                if similar.is_empty() {
                    write!(f, "; `switchyard::dump()` lists every op")
                } else {
                    write!(f, "; similar names: {}", similar.join(", "))
                }
            }
            ErrorKind::Shape { op, message } => write!(f, "op `{op}`: shape error: {message}"),
            ErrorKind::Kernel { op, message } => write!(f, "op `{op}`: {message}"),
            ErrorKind::KernelFailed { op, key, source } => {
                write!(
                    f,
                    "op `{op}`: the kernel at `{key}` failed: {}",
                    source.error()
                )?;
                // The chain, so that a plain call's panic says what caused the failure.
                let mut cause = source.error().source();
                while let Some(error) = cause {
                    write!(f, ": {error}")?;
                    cause = error.source();
                }
                Ok(())
            }
            ErrorKind::SizeOverflow { op, shapes, what } => {
                let shapes: Vec<String> = shapes.iter().map(|s| format!("{s:?}")).collect();
                let noun = if shapes.len() == 1 { "shape" } else { "shapes" };
                write!(
                    f,
                    "op `{op}`: size overflow with {noun} {}: {what}",
                    shapes.join(" and ")
                )
            }
            ErrorKind::OutOfMemory { op, bytes } => write!(
                f,
                "op `{op}`: out of memory: the allocator refused {bytes} bytes ({}) for the result",
                Binary(*bytes)
            ),
        }
    }
}

/// The `#[kernel]` attribute that registers a derivative for the op whose Rust item is `item`
/// (`c::ops::cube`), in the two spellings that compile: from the op's own crate and from another.
pub fn derivative_kernel(item: &str) -> String {
    match item.split_once("::") {
        Some((krate, within)) => format!(
            "`#[kernel(op = crate::{within}, key = Autograd)]` in crate `{krate}` (from another \
             crate: `op = {item}`)"
        ),
        None => format!("`#[kernel(op = {item}, key = Autograd)]`"),
    }
}

/// A byte count in binary units, for messages: `4 TiB`, `1.5 GiB`, `12 bytes`.
struct Binary(usize);

impl fmt::Display for Binary {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        const UNITS: [&str; 6] = ["KiB", "MiB", "GiB", "TiB", "PiB", "EiB"];
        let mut value = self.0 as f64;
        if value < 1024.0 {
            return write!(f, "{} bytes", self.0);
        }
        let mut unit = 0;
        value /= 1024.0;
        while value >= 1024.0 && unit + 1 < UNITS.len() {
            value /= 1024.0;
            unit += 1;
        }
        // One decimal, dropped when it is zero: `4 TiB`, `1.5 GiB`.
        let text = format!("{value:.1}");
        write!(f, "{} {}", text.trim_end_matches(".0"), UNITS[unit])
    }
}

/// A boxed value of the wrong type (built from the value by `boxing`).
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct TypeMismatch {
    /// The type that was needed.
    pub expected: &'static str,
    /// What the value held instead.
    pub found: String,
}

impl fmt::Display for TypeMismatch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "expected {}, found {}", self.expected, self.found)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn error_is_one_pointer_and_result_stays_small() {
        assert_eq!(size_of::<DispatchError>(), size_of::<usize>());
        // A one-pointer tensor handle's result is a (tag, pointer) pair, returned in two
        // registers (the tensor crate checks its own `Tensor`).
        assert_eq!(
            size_of::<Result<std::sync::Arc<u8>, DispatchError>>(),
            2 * size_of::<usize>()
        );
    }

    #[test]
    fn missing_kernel_with_no_kernels_blames_linking() {
        let err = DispatchError::new(ErrorKind::MissingKernel {
            op: "mul",
            item: "my_crate::mul".to_owned(),
            key: DispatchKey::CpuSimd,
            call_keys: DispatchKeySet::CPU,
            column: DTypeColumn::Untyped,
            served: Vec::new(),
            available: DispatchKeySet::EMPTY,
        });
        let text = err.to_string();
        assert!(text.contains("op `mul`"), "{text}");
        assert!(text.contains("not linked"), "{text}");
        assert!(text.contains("use my_kernels as _;"), "{text}");
    }
}
