//! `matmul` of operands other than two matrices, as PyTorch's `matmul` takes them: a 1-D operand
//! is a row (on the left) or a column (on the right) whose extent-1 dimension the result drops;
//! operands of rank 3 and more are stacks of matrices whose batch dimensions (all but the last
//! two) broadcast. Every backend's `matmul` kernel serves the matrix product of two 2-D
//! operands and hands anything else to [`batched`], with that product.

use switchyard::{DType, DispatchError};

use crate::{Device, Tensor, ops, with_element};

type Result<T> = std::result::Result<T, DispatchError>;

/// The shapes of a `matmul`: both operands as stacks of matrices over one broadcast batch.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MatmulShapes {
    /// The broadcast batch dimensions (empty for two operands of rank 1 or 2).
    pub batch: Vec<usize>,
    /// Rows of each product (1 for a 1-D `x`).
    pub m: usize,
    /// The contracted extent.
    pub k: usize,
    /// Columns of each product (1 for a 1-D `y`).
    pub n: usize,
    /// The result's shape: `batch + [m, n]` without `m` for a 1-D `x`, without `n` for a 1-D
    /// `y`.
    pub out: Vec<usize>,
}

/// `x` as a stack of matrices: the rank-1 operand made a row (`as_row`) or a column, the batch
/// broadcast to `batch` (stride 0 where it stretches). A view, no copy.
fn as_stack(x: &Tensor, as_row: bool, batch: &[usize]) -> Result<Tensor> {
    let (mut sizes, mut strides) = (x.shape().to_vec(), x.strides().to_vec());
    if x.dim() == 1 {
        let at = if as_row { 0 } else { 1 };
        sizes.insert(at, 1);
        strides.insert(at, 0);
    }
    let lead = batch.len() + 2 - sizes.len();
    let mut full_strides = vec![0; lead];
    for (d, (&size, &stride)) in sizes.iter().zip(&strides).enumerate() {
        let stretched = d < sizes.len() - 2 && size == 1 && batch[lead + d] != 1;
        full_strides.push(if stretched { 0 } else { stride });
    }
    let mut full_sizes = batch.to_vec();
    full_sizes.extend_from_slice(&sizes[sizes.len() - 2..]);
    x.as_strided(&full_sizes, &full_strides, x.storage_offset())
}

/// The shapes of `matmul(x, y)`, checked: both at least 1-D, the contracted extents equal, the
/// batch dimensions broadcastable; else a shape error naming `matmul` and both shapes.
pub fn matmul_shapes(x: &Tensor, y: &Tensor) -> Result<MatmulShapes> {
    const OP: &str = "matmul";
    let (xs, ys) = (x.shape(), y.shape());
    let bad = |why: &str| {
        DispatchError::shape(
            OP,
            format!(
                "{why}: got {xs:?} and {ys:?} (matmul takes [k] or [.., m, k] on the left and [k] \
                 or [.., k, n] on the right, batch dimensions broadcasting)"
            ),
        )
    };
    if xs.is_empty() || ys.is_empty() {
        return Err(bad("both operands must be at least 1-D"));
    }
    let (m, k) = match *xs {
        [k] => (1, k),
        [.., m, k] => (m, k),
        [] => unreachable!(),
    };
    let (k2, n) = match *ys {
        [k] => (k, 1),
        [.., k, n] => (k, n),
        [] => unreachable!(),
    };
    if k != k2 {
        return Err(bad(&format!(
            "the contracted extents differ ({k} and {k2})"
        )));
    }
    let batch_of = |s: &[usize]| s[..s.len().saturating_sub(2)].to_vec();
    let batch = crate::shape::broadcast_shapes(OP, &batch_of(xs), &batch_of(ys))
        .map_err(|_| bad("the batch dimensions do not broadcast"))?;
    let mut out = batch.clone();
    if xs.len() > 1 {
        out.push(m);
    }
    if ys.len() > 1 {
        out.push(n);
    }
    Ok(MatmulShapes {
        batch,
        m,
        k,
        n,
        out,
    })
}

/// `matmul(x, y)` for operands of any rank from 1, given `product`, a backend's matrix product
/// of two 2-D operands (views: it reads their strides). The batch runs as one `product` per
/// matrix into one CPU buffer; on another device (where a kernel cannot write a result into
/// part of another), as the broadcast product `x[.., m, k, 1] · y[.., 1, k, n]` summed over
/// `k` (`mul` and `sum_dim`: the same value, the sum in another order).
pub fn batched(
    x: &Tensor,
    y: &Tensor,
    product: impl Fn(&Tensor, &Tensor) -> Result<Tensor>,
) -> Result<Tensor> {
    let shapes = matmul_shapes(x, y)?;
    let (xb, yb) = (
        as_stack(x, true, &shapes.batch)?,
        as_stack(y, false, &shapes.batch)?,
    );
    let out_dims: Vec<isize> = shapes.out.iter().map(|&d| d as isize).collect();
    if shapes.batch.is_empty() {
        return ops::try_reshape(&product(&xb, &yb)?, &out_dims);
    }
    if x.device() != Device::Cpu {
        // x `[.., m, k, 1]` times y `[.., 1, k, n]`, summed over `k`.
        let x4 = ops::try_unsqueeze(&xb, -1)?;
        let y4 = ops::try_unsqueeze(&yb, -3)?;
        let summed = ops::try_sum_dim(&ops::try_mul(&x4, &y4)?, &[-2], false)?;
        return ops::try_reshape(&summed, &out_dims);
    }
    let (m, n) = (shapes.m, shapes.n);
    let dtype = crate::rules::matmul(x.dtype(), y.dtype())?;
    let mut stacked = shapes.batch.clone();
    stacked.extend([m, n]);
    // Checked before any product: the products' elements all fit one allocation.
    let len = Tensor::checked_numel("matmul", &stacked, dtype)?;
    if len == 0 {
        // Nothing to compute (and the batch alone may be huge, beside an empty matrix).
        return ops::try_reshape(&join(dtype, &[], &stacked, 0)?, &out_dims);
    }
    let count: usize = shapes.batch.iter().product();
    let mut products = Vec::with_capacity(count.min(1 << 16));
    let mut index = vec![0usize; shapes.batch.len()];
    for _ in 0..count {
        let at = |t: &Tensor| {
            let offset = t.storage_offset()
                + index
                    .iter()
                    .zip(t.strides())
                    .map(|(i, s)| i * s)
                    .sum::<usize>();
            let r = t.dim();
            t.as_strided(&t.shape()[r - 2..], &t.strides()[r - 2..], offset)
        };
        products.push(product(&at(&xb)?, &at(&yb)?)?);
        // The next batch index, row-major.
        for d in (0..index.len()).rev() {
            index[d] += 1;
            if index[d] < shapes.batch[d] {
                break;
            }
            index[d] = 0;
        }
    }
    let dtype = products.first().map_or(dtype, Tensor::dtype);
    let joined = join(dtype, &products, &stacked, len)?;
    ops::try_reshape(&joined, &out_dims)
}

/// The CPU matrices `parts` (each contiguous `[m, n]`), one after the other, as one tensor of
/// `shape`.
fn join(dtype: DType, parts: &[Tensor], shape: &[usize], len: usize) -> Result<Tensor> {
    const OP: &str = "matmul";
    with_element!(dtype, T => {
        let mut out = crate::host_buffer::<T>(OP, len)?;
        for part in parts {
            let view = part.host::<T>(OP)?;
            match view.contiguous() {
                Some(values) => out.extend_from_slice(values),
                None => out.extend(view.iter()),
            }
        }
        Tensor::from_host(out, shape)
    })
}
