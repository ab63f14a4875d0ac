//! `arange_step`: PyTorch's `arange(start, end, step)`. Re-exported from [`crate::ops`].

use switchyard::{DType, DTypeKind, DispatchError, op};

use crate::{Device, Tensor};

/// `[start, start + step, start + 2·step, …]`, every value before `end` (after it, for a negative
/// `step`), in `dtype` on `device`: `⌈(end − start) / step⌉` elements, element `i` computed as
/// `start + i·step` in `f64` and converted once to `dtype` (as `to_dtype` converts), as PyTorch's
/// `arange(start, end, step, dtype=…)` on the CPU. The values are computed on the host, then moved
/// to `device`. Refused: a zero or non-finite `step`, non-finite bounds, a `step` that walks away
/// from `end`, `bool`, and an integer dtype that cannot hold every value.
///
/// ```
/// # use switchyard_backends as _; // the kernels
/// use switchyard_tensor::{DType, Device, ops};
/// let r = ops::arange_step(1.0, 2.0, 0.25, DType::F32, Device::Cpu);
/// assert_eq!(r.to_vec::<f32>(), [1.0, 1.25, 1.5, 1.75]);
/// let down = ops::arange_step(10.0, 0.0, -3.0, DType::I64, Device::Cpu);
/// assert_eq!(down.to_vec::<i64>(), [10, 7, 4, 1]);
/// ```
#[op(name = "switchyard::arange_step")]
pub fn arange_step(start: f64, end: f64, step: f64, dtype: DType, device: Device) -> Tensor {
    const OP: &str = "arange_step";
    let refuse = |why: &str| {
        DispatchError::kernel(
            OP,
            format!("arange_step({start}, {end}, {step}) in {dtype}: {why}"),
        )
    };
    if dtype == DType::Bool {
        return Err(refuse("a range of booleans has no meaning"));
    }
    if !(start.is_finite() && end.is_finite() && step.is_finite()) {
        return Err(refuse("the bounds and the step must be finite"));
    }
    if step == 0.0 {
        return Err(refuse("the step must not be zero"));
    }
    let count = ((end - start) / step).ceil();
    if count < 0.0 {
        return Err(refuse(
            "the step walks away from the end (a positive step needs end ≥ start, a negative \
             one end ≤ start)",
        ));
    }
    if count >= isize::MAX as f64 {
        return Err(refuse("the range has more elements than any tensor holds"));
    }
    let n = count as usize;
    Tensor::checked_numel(OP, &[n], DType::F64)?;
    // Reserved fallibly: a range the host cannot hold is an error, never an abort.
    let mut values: Vec<f64> = Vec::new();
    values
        .try_reserve_exact(n)
        .map_err(|_| DispatchError::out_of_memory(OP, n.saturating_mul(size_of::<f64>())))?;
    values.extend((0..n).map(|i| start + i as f64 * step));
    if dtype.kind() == DTypeKind::Int
        && let Some(v) = values.iter().find(|&&v| !fits(dtype, v))
    {
        return Err(refuse(&format!(
            "the value {v} does not fit {dtype} (use a wider dtype)"
        )));
    }
    let on_host = Tensor::from_vec(values, &[n])?.try_to_dtype(dtype)?;
    on_host.try_to(device)
}

/// Whether `v`, truncated toward zero as `to_dtype` converts, lies in integer dtype `dtype`'s
/// range (`i64`'s ends as `f64`: -2^63 is one, 2^63 is past it).
fn fits(dtype: DType, v: f64) -> bool {
    let v = v.trunc();
    match dtype {
        DType::U8 => (0.0..=f64::from(u8::MAX)).contains(&v),
        DType::I32 => (f64::from(i32::MIN)..=f64::from(i32::MAX)).contains(&v),
        _ => (-(2f64.powi(63))..2f64.powi(63)).contains(&v),
    }
}
