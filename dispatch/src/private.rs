//! Not public API. Used by generated code.
//!
//! The macros name only `::switchyard::__private_v1`; the version in the path makes a mismatch
//! between macro and runtime versions a compile error instead of a miscompilation.

pub use linkme;

pub use crate::alias::{AliasKey, KernelKey};
pub use crate::arg::DispatchArg;
pub use crate::boxing::{BoxedResult, FromValue, Stack, TypeMismatch, Unbox};
pub use crate::cpu::CpuFeatures;
pub use crate::error::{DispatchError, ErrorKind, Location};
pub use crate::handle::OpHandle;
pub use crate::key::{DispatchKey, DispatchKeySet};
pub use crate::registry::{
    BoxedKernel, FallbackKind, FallbackRegistration, KernelMeta, KernelRegistration,
    SWITCHYARD_FALLBACKS as FALLBACKS, SWITCHYARD_OPS as OPS,
};
pub use crate::runtime::Registration;
pub use crate::table::{Boxing, ErasedOp, OpInfo, OpTable};
pub use crate::trace_log::enter as trace_depth;

/// The error for a boxed argument (or result) of the wrong type.
#[cold]
pub fn boxed_type(info: &OpInfo, argument: &'static str, mismatch: TypeMismatch) -> DispatchError {
    DispatchError::new(ErrorKind::BoxedType {
        op: info.name,
        schema: info.schema,
        argument,
        mismatch,
    })
}

/// Unwraps a plain op call's result, panicking with the error's message at the caller.
#[inline(always)]
#[track_caller]
pub fn unwrap_or_panic<T>(result: Result<T, DispatchError>) -> T {
    match result {
        Ok(value) => value,
        Err(error) => error.panic(),
    }
}
