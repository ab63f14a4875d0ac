//! Not public API. Used by generated code.
//!
//! The macros name only `::switchyard::__private_v1`; the version in the path makes a mismatch
//! between macro and runtime versions a compile error instead of a miscompilation.

pub use linkme;

pub use crate::arg::DispatchArg;
pub use crate::cpu::CpuFeatures;
pub use crate::error::{DispatchError, Location};
pub use crate::handle::OpHandle;
pub use crate::key::{DispatchKey, DispatchKeySet};
pub use crate::registry::{KernelMeta, KernelRegistration, SWITCHYARD_OPS as OPS};
pub use crate::table::{ErasedOp, OpInfo, OpTable};

/// Unwraps a plain op call's result, panicking with the error's message at the caller.
#[inline(always)]
#[track_caller]
pub fn unwrap_or_panic<T>(result: Result<T, DispatchError>) -> T {
    match result {
        Ok(value) => value,
        Err(error) => error.panic(),
    }
}
