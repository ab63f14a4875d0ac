//! A kernel's own error type: any `E: std::error::Error + Send + Sync + 'static` that a kernel (or
//! an op's body) returns becomes a [`DispatchError`] of kind [`ErrorKind::KernelFailed`], naming
//! the op and the key, with `E` as its [`source`](std::error::Error::source). The conversion is
//! generated into each kernel's wrapper (`kernel_result`), so the dispatcher never sees it.

use std::any::Any;
use std::error::Error;
use std::fmt;
use std::sync::Arc;

use super::{DispatchError, ErrorKind};
use crate::alias::KernelKey;

/// The error a kernel returned, shared so that [`DispatchError`] stays `Clone`; read it with
/// [`KernelSource::error`] or through [`std::error::Error::source`] and `downcast_ref`.
#[derive(Clone)]
pub struct KernelSource(Arc<dyn Error + Send + Sync + 'static>);

impl KernelSource {
    /// The kernel's error, as it returned it.
    pub fn error(&self) -> &(dyn Error + Send + Sync + 'static) {
        &*self.0
    }
}

/// Two sources are equal when they are the same error (one `DispatchError` cloned), since a
/// user's error type need not be `PartialEq`.
impl PartialEq for KernelSource {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

impl fmt::Debug for KernelSource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&*self.0, f)
    }
}

impl DispatchError {
    /// The error `error` that a kernel of `op` at `key` returned, kept as this error's
    /// [`source`](std::error::Error::source). A `DispatchError` is returned as it is.
    #[cold]
    #[inline(never)]
    pub fn kernel_failed<E>(op: &'static str, key: impl Into<KernelKey>, error: E) -> Self
    where
        E: Error + Send + Sync + 'static,
    {
        // A `DispatchError` (a `switchyard::Result` kernel) already names its op: pass it on.
        // The type test is resolved at compile time, per `E`.
        let mut slot = Some(error);
        if let Some(dispatch) = (&mut slot as &mut dyn Any).downcast_mut::<Option<DispatchError>>()
            && let Some(dispatch) = dispatch.take()
        {
            return dispatch;
        }
        let Some(error) = slot else {
            unreachable!("the slot is emptied only when it held a `DispatchError`")
        };
        DispatchError::new(ErrorKind::KernelFailed {
            op,
            key: key.into(),
            source: KernelSource(Arc::new(error)),
        })
    }
}

/// A kernel's (or an op body's) result as the table's `Result<T, DispatchError>`: what every
/// generated wrapper of a `Result`-returning kernel calls. For a `DispatchError` it is the
/// identity once inlined (the type test is resolved at compile time); any other error is boxed
/// out of line.
#[inline(always)]
pub fn kernel_result<T, E>(
    result: Result<T, E>,
    op: &'static str,
    key: KernelKey,
) -> Result<T, DispatchError>
where
    E: Error + Send + Sync + 'static,
{
    match result {
        Ok(value) => Ok(value),
        Err(error) => {
            let mut slot = Some(error);
            match (&mut slot as &mut dyn Any).downcast_mut::<Option<DispatchError>>() {
                Some(dispatch) => Err(dispatch.take().unwrap_or_else(emptied)),
                None => Err(slot.map_or_else(emptied, |error| {
                    DispatchError::kernel_failed(op, key, error)
                })),
            }
        }
    }
}

#[cold]
fn emptied() -> DispatchError {
    unreachable!("the slot was filled just before")
}
