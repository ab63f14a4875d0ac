//! Autocast: mixed precision as a layer of the dispatcher, PyTorch's `torch.autocast`.
//!
//! While an [`autocast`] guard for a device is alive on a thread, the ops with a precision
//! policy cast their float arguments on that device before they run: the ops that gain from a
//! narrower type run in it, the numerically sensitive ones in `f32`, and ops that mix several
//! float inputs run in the widest of them. A policy is a kernel at
//! [`DispatchKey::Autocast`](switchyard::DispatchKey), which sits above autograd, so
//! autograd records the casts and gradients flow back to `f32` parameters in `f32`. An op
//! without a policy runs untouched. The standard ops' policies:
//!
//! | policy | ops |
//! |---|---|
//! | [`Policy::Lower`]: float arguments to the autocast dtype | `matmul` |
//! | [`Policy::Float32`]: float arguments to `f32` | `exp`, `log`, `sum`, `mean`, `sum_dim`, `mean_dim`, `softmax`, `log_softmax`, `cross_entropy` |
//! | [`Policy::Promote`]: float arguments to the widest of them | `add`, `sub`, `mul`, `div`, `where`, `cat`, `stack` |
//!
//! As in PyTorch, only `f32`, `f16` and `bf16` arguments are cast (`f64` is left as it is), and
//! the ops a policy kernel calls run without autocast. Training in `f16` wants a
//! [`GradScaler`] beside it (`bf16` has `f32`'s range and needs none).
//!
//! ```
//! use switchyard::{DType, Device, Tensor, autocast, ops};
//! # use switchyard_backends as _;
//!
//! let x = Tensor::from_vec(vec![1.0f32; 6], &[2, 3]).unwrap();
//! let w = Tensor::from_vec(vec![0.5f32; 12], &[3, 4]).unwrap();
//! let _bf16 = autocast::autocast(Device::Cpu, DType::BF16).unwrap();
//! let y = ops::matmul(&x, &w);
//! assert_eq!(y.dtype(), DType::BF16); // in the low precision
//! assert_eq!(ops::sum(&y).dtype(), DType::F32); // a sensitive op in f32
//! ```
//!
//! A downstream op declares its policy with a kernel at `Autocast` that casts with [`cast`] and
//! calls the op again below autocast ([`below_autocast`]):
//!
//! ```
//! use switchyard::autocast::{Policy, below_autocast, cast};
//! use switchyard::{Result, Tensor, kernel, op, ops};
//! # use switchyard_backends as _;
//!
//! /// `x·y + x`, in the low precision under autocast.
//! #[op]
//! pub fn mul_add_self(x: &Tensor, y: &Tensor) -> Tensor {
//!     ops::try_add(&ops::try_matmul(x, y)?, x)?
//! }
//!
//! #[kernel(op = mul_add_self, key = Autocast)]
//! fn mul_add_self_autocast(x: &Tensor, y: &Tensor) -> Result<Tensor> {
//!     let [x, y] = cast(Policy::Lower, [x, y])?;
//!     below_autocast(|| try_mul_add_self(&x, &y))
//! }
//! # fn main() {}
//! ```

mod policy;
mod scaler;

pub use scaler::GradScaler;

use std::cell::Cell;
use std::marker::PhantomData;

use switchyard::{DType, DispatchError, DispatchKey, DispatchKeySet, KeyGuard, with_excluded};

use crate::device::Device;
use crate::tensor::Tensor;

/// How an op's float arguments are cast under autocast.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Policy {
    /// To the autocast dtype of their device (`bf16` or `f16`): ops that gain from it
    /// (`matmul`).
    Lower,
    /// To `f32`: ops whose results lose too much in a narrow type (`exp`, `log`, sums, means,
    /// `softmax`, `cross_entropy`).
    Float32,
    /// To the widest float dtype among them: ops that combine several inputs (`add`, `where`,
    /// `cat`).
    Promote,
}

thread_local! {
    /// The autocast dtype of each device on this thread (`None`: off), by `Device::ALL` slot.
    static DTYPES: Cell<[Option<DType>; Device::ALL.len()]> =
        const { Cell::new([None; Device::ALL.len()]) };
}

/// The dtype autocast casts `device`'s tensors to on this thread, if it is on for that device.
pub fn autocast_dtype(device: Device) -> Option<DType> {
    DTYPES.try_with(|d| d.get()[device.slot()]).ok().flatten()
}

/// While alive, autocast is on for one device on this thread (see the [module docs](self)).
/// Guards nest: dropping one restores the setting from before it.
#[must_use = "autocast is on only while this guard is alive"]
#[derive(Debug)]
pub struct AutocastGuard {
    device: Device,
    previous: Option<DType>,
    _include: KeyGuard,
    /// Thread-local: the guard belongs to the thread that made it.
    _not_send: PhantomData<*const ()>,
}

impl Drop for AutocastGuard {
    fn drop(&mut self) {
        let (device, previous) = (self.device, self.previous);
        let _ = DTYPES.try_with(|d| {
            let mut dtypes = d.get();
            dtypes[device.slot()] = previous;
            d.set(dtypes);
        });
    }
}

/// Turns autocast on for `device` on this thread, casting to `dtype` (`bf16` or `f16`), until
/// the guard drops. Errors for any other dtype.
pub fn autocast(device: Device, dtype: DType) -> Result<AutocastGuard, DispatchError> {
    if !matches!(dtype, DType::BF16 | DType::F16) {
        return Err(DispatchError::kernel(
            "autocast",
            format!("autocast casts to bf16 or f16, not {dtype}"),
        ));
    }
    let previous = DTYPES
        .try_with(|d| {
            let mut dtypes = d.get();
            let previous = dtypes[device.slot()].replace(dtype);
            d.set(dtypes);
            previous
        })
        .map_err(|_| {
            DispatchError::kernel("autocast", "the thread is ending: autocast cannot start")
        })?;
    Ok(AutocastGuard {
        device,
        previous,
        _include: switchyard::include(DispatchKeySet::AUTOCAST),
        _not_send: PhantomData,
    })
}

/// Runs `f` without autocast: how a policy kernel calls its op again once it has cast the
/// arguments (and the ops it calls then run as they are, as in PyTorch).
pub fn below_autocast<R>(f: impl FnOnce() -> R) -> R {
    with_excluded(DispatchKey::Autocast, f)
}

/// Whether autocast would cast `x`: a float tensor of `f32`, `f16` or `bf16` (not `f64`) on a
/// device where autocast is on.
fn eligible(x: &Tensor) -> Option<DType> {
    let low = autocast_dtype(x.device())?;
    matches!(x.dtype(), DType::F32 | DType::F16 | DType::BF16).then_some(low)
}

/// `xs` cast as `policy` says for the devices autocast is on for (each tensor that is not
/// eligible, and every tensor on a device without autocast, is returned as it is). The casts are
/// the `to_dtype` op, so autograd records them.
pub fn cast<const N: usize>(
    policy: Policy,
    xs: [&Tensor; N],
) -> Result<[Tensor; N], DispatchError> {
    let widest = widest(xs.iter().copied());
    let mut out: [Option<Tensor>; N] = [const { None }; N];
    for (slot, x) in out.iter_mut().zip(xs) {
        *slot = Some(cast_one(policy, x, widest)?);
    }
    Ok(out.map(|x| x.expect("every slot was filled above")))
}

/// [`cast`] for a list of tensors (`cat`, `stack`): `Promote` casts to the widest of the whole
/// list.
pub fn cast_all(policy: Policy, xs: &[Tensor]) -> Result<Vec<Tensor>, DispatchError> {
    let widest = widest(xs.iter());
    xs.iter().map(|x| cast_one(policy, x, widest)).collect()
}

fn cast_one(policy: Policy, x: &Tensor, widest: Option<DType>) -> Result<Tensor, DispatchError> {
    let target = match (policy, eligible(x)) {
        (_, None) => None,
        (Policy::Lower, Some(low)) => Some(low),
        (Policy::Float32, Some(_)) => Some(DType::F32),
        (Policy::Promote, Some(_)) => widest,
    };
    match target {
        Some(dtype) if dtype != x.dtype() => crate::ops::try_to_dtype(x, dtype),
        _ => Ok(x.clone()),
    }
}

/// The widest dtype among the eligible tensors of `xs`: `f32` if there is one, or if both `f16`
/// and `bf16` are there (neither holds the other, as PyTorch promotes them).
fn widest<'a>(xs: impl Iterator<Item = &'a Tensor>) -> Option<DType> {
    xs.filter(|x| eligible(x).is_some())
        .map(Tensor::dtype)
        .reduce(|a, b| if a == b { a } else { DType::F32 })
}
