//! Not public API. Used by generated code.
//!
//! The macros name only `::switchyard::__private_v1`; the version in the path makes a mismatch
//! between macro and runtime versions a compile error instead of a miscompilation.

#[cfg(not(target_family = "wasm"))]
pub use linkme;

// WebAssembly: registrations join their lists from constructors (`linked/ctors.rs`).
#[cfg(target_family = "wasm")]
pub use crate::__switchyard_submit as submit;
#[cfg(target_family = "wasm")]
pub use crate::linked::CtorSlice;

pub use crate::alias::{AliasKey, KernelKey};
pub use crate::arg::DispatchArg;
pub use crate::boxing::{BoxedResult, FromValue, Stack, TypeMismatch, Unbox};
pub use crate::cpu::CpuFeatures;
pub use crate::dtype::ColumnSet;
pub use crate::dtype::SWITCHYARD_USER_DTYPES as USER_DTYPES;
pub use crate::dtype::UserDType;
pub use crate::error::kernel_result;
pub use crate::error::{DispatchError, ErrorKind, Location, derivative_kernel};
pub use crate::family::SWITCHYARD_DEVICE_NAMES as DEVICE_NAMES;
pub use crate::handle::compute_table_uncached;
pub use crate::key::{DispatchKey, DispatchKeySet};
pub use crate::origin::KernelMeta;
pub use crate::registration::Registration;
pub use crate::registry::{
    BoxedKernel, ErasedOp, FallbackKind, FallbackRegistration, KernelRegistration, OpHandle,
    OpInfo, SWITCHYARD_FALLBACKS as FALLBACKS, SWITCHYARD_OPS as OPS,
};
pub use crate::table::{Boxing, OpTable};
pub use crate::trace_log::enter as trace_depth;

/// Whether `name` may name a user dtype (`declare_dtype!`'s compile-time check): non-empty, and
/// not a token of `dtypes = "…"`.
pub const fn user_dtype_name_is_new(name: &str) -> bool {
    crate::dtype::name_is_new(name)
}

/// The column of a user dtype named in `dtypes = [MY_DTYPE]` (generated registrations): the
/// argument's type is checked here, on the user's path.
pub const fn user_dtype_columns(dtype: UserDType) -> ColumnSet {
    dtype.columns()
}

/// The columns a `dtypes = "…"` token stands for, in `const` evaluation (generated
/// registrations): a token the runtime does not know fails to compile. The macro checks tokens
/// first, so this panics only if the macro's list and [`ColumnSet::TOKENS`] disagree.
pub const fn dtype_token(token: &str) -> ColumnSet {
    match ColumnSet::token(token) {
        Some(columns) => columns,
        None => panic!("switchyard: a `dtypes` token the macro accepts is unknown to the runtime"),
    }
}

/// Checks that `stack` holds at least the op's arguments (generated `__call_unboxed`, which then
/// pops each with `Unbox::take`).
#[inline]
pub fn check_args(stack: &Stack<'_>, info: &OpInfo) -> Result<(), DispatchError> {
    if stack.len() < info.arity {
        return Err(arity_error(stack, info));
    }
    Ok(())
}

#[cold]
#[inline(never)]
fn arity_error(stack: &Stack<'_>, info: &OpInfo) -> DispatchError {
    stack.arity_error(info.arity, info.name, info.schema)
}

/// Pushes a kernel's result, built in its slot (generated `__call_unboxed`, with the result's
/// `BoxedResult::boxed`: so the one bound an unboxable result breaks is on that trait path).
#[inline(always)]
pub fn push_result(stack: &mut Stack<'_>, boxed: impl FnOnce() -> crate::Value) {
    stack.push_with(boxed);
}

/// Takes the result a boxed fallback left (generated `__via_boxed` of an op without `&mut`
/// parameters, with the result's `BoxedResult::unboxed_from` and `unboxed`): read where it
/// lies where it can be, else popped and unboxed.
#[inline]
pub fn take_result<'s, R>(
    stack: &mut Stack<'s>,
    info: &OpInfo,
    unboxed_from: impl FnOnce(&mut Stack<'s>) -> Option<R>,
    unboxed: impl FnOnce(crate::Value) -> Result<R, TypeMismatch>,
) -> Result<R, DispatchError> {
    match unboxed_from(stack) {
        Some(result) => Ok(result),
        None => take_result_owned(stack, info, unboxed),
    }
}

#[inline(never)]
fn take_result_owned<R>(
    stack: &mut Stack<'_>,
    info: &OpInfo,
    unbox: impl FnOnce(crate::Value) -> Result<R, TypeMismatch>,
) -> Result<R, DispatchError> {
    let value = stack.pop_result(info.name)?;
    unbox(value).map_err(|mismatch| boxed_type(info, "result", mismatch))
}

/// Pops the result a boxed fallback left, or the op's error if it left none.
#[inline]
pub fn pop_result(stack: &mut Stack<'_>, info: &OpInfo) -> Result<crate::Value, DispatchError> {
    stack.pop_result(info.name)
}

/// Checks that a boxed fallback left the written value of each `&mut` parameter (`written`, in
/// order) and the result, nothing more or less (generated `__via_boxed` of an op with `&mut`
/// parameters).
#[inline]
pub fn check_written(
    stack: &Stack<'_>,
    info: &OpInfo,
    written: &[&'static str],
) -> Result<(), DispatchError> {
    stack.check_written(info.name, written)
}

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

/// What an op's body (its composite kernel) may end in: the op's result `T`, or
/// `Result<T, DispatchError>`, so that the body can use `?` on the `try_` forms of other ops and
/// end in `Ok(…)`. The generated composite returns `Result<T, DispatchError>` either way. (Not
/// `Result<T, E>` for any `E`, as kernels may: a body ending in `Ok(…)` would leave `E`
/// uninferred. A body with its own error type declares it: `#[op(error = MyError)]`.)
#[diagnostic::on_unimplemented(
    message = "an op's body must end in the op's result type `{T}` or in `Result<{T}, DispatchError>`, not `{Self}`",
    note = "a body with its own error type declares it: `#[op(error = MyError)]`, and ends in `Result<T, MyError>`",
    label = "the body ends here"
)]
pub trait BodyResult<T> {
    /// The body's value as the composite's result.
    fn into_result(self) -> Result<T, DispatchError>;
}

#[diagnostic::do_not_recommend]
impl<T> BodyResult<T> for T {
    #[inline(always)]
    fn into_result(self) -> Result<T, DispatchError> {
        Ok(self)
    }
}

#[diagnostic::do_not_recommend]
impl<T> BodyResult<T> for Result<T, DispatchError> {
    #[inline(always)]
    fn into_result(self) -> Result<T, DispatchError> {
        self
    }
}

/// The error type of a kernel's `Result` return type, as written (`switchyard::Result<T>`,
/// `Result<T, MyError>`): what a `Result`-returning kernel's registration checks its signature
/// against (`fn(…) -> Result<T, Self::Error>`), so that any error type is accepted.
#[diagnostic::on_unimplemented(
    message = "a `#[kernel]` that returns `{Self}` must return `Result<T, E>`, with `T` the op's result and `E` an error type (`DispatchError` or your own)",
    label = "not a `Result<T, E>`"
)]
pub trait KernelReturn {
    /// `E` of `Result<T, E>`.
    type Error;
}

impl<T, E> KernelReturn for Result<T, E> {
    type Error = E;
}

/// What a `Result`-returning kernel's error type must be: the bound of its registration, in our
/// words (the blanket impl is not recommended, so rustc reports this trait, not `Error`).
#[diagnostic::on_unimplemented(
    message = "a `#[kernel]`'s error type must implement `std::error::Error + Send + Sync + 'static`; `{Self}` does not",
    label = "this error type",
    note = "return `switchyard::Result<T>` with a `DispatchError` (e.g. `DispatchError::kernel(op, message)` for a message), or your own error type implementing `std::error::Error`"
)]
pub trait KernelError: std::error::Error + Send + Sync + 'static {}

#[diagnostic::do_not_recommend]
impl<E: std::error::Error + Send + Sync + 'static> KernelError for E {}

/// Unwraps a plain op call's result, panicking with the error's message at the caller.
#[inline(always)]
#[track_caller]
pub fn unwrap_or_panic<T>(result: Result<T, DispatchError>) -> T {
    match result {
        Ok(value) => value,
        Err(error) => error.panic(),
    }
}
