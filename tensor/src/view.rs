//! View layouts: new sizes, strides and offset over the same storage, no copy. The view ops
//! (`ops::transpose`, …) are dispatched like any op (so layers such as tracing see them); their
//! one kernel, registered for every backend, is the layout computation here.

use switchyard::DispatchError;

use crate::shape::{Dims, broadcast_shapes, is_contiguous};
use crate::tensor::Tensor;

type Result<T> = std::result::Result<T, DispatchError>;

/// An error naming `op` when `dim` is not a dimension of `x`.
fn check_dim(op: &'static str, x: &Tensor, dim: usize) -> Result<()> {
    if dim < x.dim() {
        Ok(())
    } else {
        Err(DispatchError::shape(
            op,
            format!(
                "dimension {dim} is out of range for a tensor of {} dimensions (shape {:?})",
                x.dim(),
                x.shape()
            ),
        ))
    }
}

pub(crate) fn transpose(x: &Tensor, d0: usize, d1: usize) -> Result<Tensor> {
    const OP: &str = "transpose";
    check_dim(OP, x, d0)?;
    check_dim(OP, x, d1)?;
    let (mut sizes, mut strides) = (x.shape().to_vec(), x.strides().to_vec());
    sizes.swap(d0, d1);
    strides.swap(d0, d1);
    Ok(x.restrided(
        x.numel(),
        x.storage_offset(),
        Dims::new(&sizes),
        Dims::new(&strides),
    ))
}

pub(crate) fn permute(x: &Tensor, dims: &[usize]) -> Result<Tensor> {
    const OP: &str = "permute";
    let mut seen = vec![false; x.dim()];
    let valid = dims.len() == x.dim()
        && dims
            .iter()
            .all(|&d| d < x.dim() && !std::mem::replace(&mut seen[d], true));
    if !valid {
        return Err(DispatchError::shape(
            OP,
            format!(
                "{dims:?} is not a permutation of the {} dimensions of shape {:?}",
                x.dim(),
                x.shape()
            ),
        ));
    }
    let sizes: Vec<usize> = dims.iter().map(|&d| x.shape()[d]).collect();
    let strides: Vec<usize> = dims.iter().map(|&d| x.strides()[d]).collect();
    Ok(x.restrided(
        x.numel(),
        x.storage_offset(),
        Dims::new(&sizes),
        Dims::new(&strides),
    ))
}

/// Elements `start..start + len` along `dim` (PyTorch's `narrow`).
pub(crate) fn narrow(x: &Tensor, dim: usize, start: usize, len: usize) -> Result<Tensor> {
    slice(x, dim, start, start.saturating_add(len), 1).map_err(|_| {
        DispatchError::shape(
            "narrow",
            format!(
                "narrow({dim}, {start}, {len}) reaches outside a tensor of shape {:?}",
                x.shape()
            ),
        )
    })
}

/// Elements `start..end` along `dim`, every `step`-th (`step ≥ 1`); `end` is clamped to the
/// extent, as Python slicing does, but `start` past it is an error.
pub(crate) fn slice(
    x: &Tensor,
    dim: usize,
    start: usize,
    end: usize,
    step: usize,
) -> Result<Tensor> {
    const OP: &str = "slice";
    check_dim(OP, x, dim)?;
    let extent = x.shape()[dim];
    let end = end.min(extent);
    if step == 0 || start > end {
        return Err(DispatchError::shape(
            OP,
            format!(
                "slice {start}..{end} step {step} of dimension {dim} (extent {extent}) is empty-backwards or has step 0"
            ),
        ));
    }
    let len = (end - start).div_ceil(step);
    let (mut sizes, mut strides) = (x.shape().to_vec(), x.strides().to_vec());
    sizes[dim] = len;
    let offset = if len == 0 {
        x.storage_offset()
    } else {
        // In bounds: element `start` along `dim` is an element of `x`.
        x.storage_offset() + start * strides[dim]
    };
    // `step · stride` is at most the distance between two elements of `x`, or the view has one
    // element along `dim` and the stride never moves.
    strides[dim] = if len > 1 {
        strides[dim] * step
    } else {
        strides[dim]
    };
    let numel = x.numel() / extent.max(1) * len;
    let numel = if extent == 0 { 0 } else { numel };
    Ok(x.restrided(numel, offset, Dims::new(&sizes), Dims::new(&strides)))
}

/// The sub-tensor at `index` along `dim`, without that dimension.
pub(crate) fn select(x: &Tensor, dim: usize, index: usize) -> Result<Tensor> {
    const OP: &str = "select";
    check_dim(OP, x, dim)?;
    if index >= x.shape()[dim] {
        return Err(DispatchError::shape(
            OP,
            format!(
                "index {index} is out of range for dimension {dim} of shape {:?}",
                x.shape()
            ),
        ));
    }
    let (mut sizes, mut strides) = (x.shape().to_vec(), x.strides().to_vec());
    let offset = x.storage_offset() + index * strides[dim];
    let numel = x.numel() / sizes[dim];
    sizes.remove(dim);
    strides.remove(dim);
    Ok(x.restrided(numel, offset, Dims::new(&sizes), Dims::new(&strides)))
}

/// `x` read as `shape` by broadcasting (stride 0 where a dimension of 1 stretches or a leading
/// one is added). The result's elements share memory: in-place writes into it are refused.
pub(crate) fn expand(x: &Tensor, shape: &[usize]) -> Result<Tensor> {
    const OP: &str = "expand";
    let fits =
        shape.len() >= x.dim() && broadcast_shapes(OP, x.shape(), shape).is_ok_and(|b| b == shape);
    if !fits {
        return Err(DispatchError::shape(
            OP,
            format!(
                "cannot expand shape {:?} to {shape:?}: each dimension must match or be 1, and \
                 dimensions may only be added in front",
                x.shape()
            ),
        ));
    }
    let numel = Tensor::checked_numel(OP, shape, x.dtype())?;
    let strides = crate::shape::broadcast_strides(x.shape(), x.strides(), shape);
    Ok(x.restrided(numel, x.storage_offset(), Dims::new(shape), strides))
}

/// `x` without its dimensions of extent 1 (`dim: None`), or without `dim` if its extent is 1
/// (otherwise unchanged, as PyTorch does).
pub(crate) fn squeeze(x: &Tensor, dim: Option<usize>) -> Result<Tensor> {
    if let Some(d) = dim {
        check_dim("squeeze", x, d)?;
    }
    let keep = |(i, size): &(usize, &usize)| **size != 1 || dim.is_some_and(|d| d != *i);
    let sizes: Vec<usize> = x
        .shape()
        .iter()
        .enumerate()
        .filter(keep)
        .map(|(_, s)| *s)
        .collect();
    let strides: Vec<usize> = x
        .shape()
        .iter()
        .enumerate()
        .filter(keep)
        .map(|(i, _)| x.strides()[i])
        .collect();
    Ok(x.restrided(
        x.numel(),
        x.storage_offset(),
        Dims::new(&sizes),
        Dims::new(&strides),
    ))
}

/// `x` with a new dimension of extent 1 at `dim` (`0..=x.dim()`).
pub(crate) fn unsqueeze(x: &Tensor, dim: usize) -> Result<Tensor> {
    if dim > x.dim() {
        return Err(DispatchError::shape(
            "unsqueeze",
            format!(
                "dimension {dim} is out of range for unsqueeze of shape {:?} (0..={})",
                x.shape(),
                x.dim()
            ),
        ));
    }
    let (mut sizes, mut strides) = (x.shape().to_vec(), x.strides().to_vec());
    // The stride of an extent-1 dimension is never used to step; this one keeps the layout
    // contiguous when `x` is.
    let stride = if dim < x.dim() {
        sizes[dim] * strides[dim]
    } else {
        1
    };
    sizes.insert(dim, 1);
    strides.insert(dim, stride);
    Ok(x.restrided(
        x.numel(),
        x.storage_offset(),
        Dims::new(&sizes),
        Dims::new(&strides),
    ))
}

/// `x` with `shape` (one entry may be `None`, inferred) as a view, no copy: possible when the
/// layout allows (always for a contiguous tensor), else an error that says to use `reshape`.
pub(crate) fn view(x: &Tensor, shape: &[Option<usize>]) -> Result<Tensor> {
    const OP: &str = "view";
    let shape = infer_shape(OP, x, shape)?;
    match view_strides(x.shape(), x.strides(), &shape) {
        Some(strides) => Ok(x.restrided(
            x.numel(),
            x.storage_offset(),
            Dims::new(&shape),
            Dims::new(&strides),
        )),
        None => Err(DispatchError::shape(
            OP,
            format!(
                "a tensor of shape {:?} and strides {:?} cannot be viewed as {shape:?} without \
                 a copy; use `reshape`, which copies when it must",
                x.shape(),
                x.strides()
            ),
        )),
    }
}

/// The shape with its one `None` inferred from the element count; errors when the count does
/// not fit or more than one entry is `None`.
pub(crate) fn infer_shape(
    op: &'static str,
    x: &Tensor,
    shape: &[Option<usize>],
) -> Result<Vec<usize>> {
    let unknown = shape.iter().filter(|d| d.is_none()).count();
    let known: Vec<usize> = shape.iter().map(|d| d.unwrap_or(1)).collect();
    let product = Tensor::checked_numel(op, &known, x.dtype())?;
    let fits = |product: usize, numel: usize| match unknown {
        0 => (product == numel).then_some(None),
        1 if product != 0 && numel.is_multiple_of(product) => Some(Some(numel / product)),
        _ => None,
    };
    let product = if known.contains(&0) { 0 } else { product };
    match fits(product, x.numel()) {
        Some(inferred) => Ok(shape.iter().map(|d| d.or(inferred).unwrap_or(1)).collect()),
        None => Err(DispatchError::shape(
            op,
            format!(
                "shape {} does not fit a tensor of {} elements (shape {:?})",
                show_shape(shape),
                x.numel(),
                x.shape()
            ),
        )),
    }
}

fn show_shape(shape: &[Option<usize>]) -> String {
    let dims: Vec<String> = shape
        .iter()
        .map(|d| d.map_or_else(|| "-1".to_owned(), |d| d.to_string()))
        .collect();
    format!("[{}]", dims.join(", "))
}

/// Strides that read `sizes`/`strides`'s elements in row-major order as `shape` (same element
/// count), if there are any: each run of input dimensions that merges into one contiguous block
/// may be split in any way.
fn view_strides(sizes: &[usize], strides: &[usize], shape: &[usize]) -> Option<Vec<usize>> {
    if is_contiguous(sizes, strides) {
        return Some(crate::shape::contiguous_strides(shape).to_vec());
    }
    // Drop extent-1 dimensions, then group the rest into blocks that are contiguous among
    // themselves (stride[i] == stride[i+1] · size[i+1]); each output dimension must lie inside
    // one block.
    let dims: Vec<(usize, usize)> = sizes
        .iter()
        .zip(strides)
        .filter(|(s, _)| **s != 1)
        .map(|(s, t)| (*s, *t))
        .collect();
    let mut out = vec![0; shape.len()];
    let mut o = shape.len();
    let mut i = dims.len();
    while i > 0 {
        // The block ending at input dimension i-1.
        let (mut block, inner_stride) = (dims[i - 1].0, dims[i - 1].1);
        let mut j = i - 1;
        while j > 0 && dims[j - 1].1 == dims[j].1 * dims[j].0 {
            block *= dims[j - 1].0;
            j -= 1;
        }
        // Output dimensions (from the back) that multiply to `block`.
        let mut acc = 1usize;
        let mut stride = inner_stride;
        while acc < block {
            if o == 0 {
                return None;
            }
            o -= 1;
            out[o] = stride;
            if shape[o] != 1 {
                acc = acc.checked_mul(shape[o])?;
                stride = stride.checked_mul(shape[o])?;
            }
        }
        if acc != block {
            return None;
        }
        i = j;
    }
    // Leading extent-1 output dimensions.
    while o > 0 {
        o -= 1;
        if shape[o] != 1 {
            return None;
        }
        out[o] = 1;
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn view_strides_merge_and_split_blocks() {
        // A transposed [3, 4] → [4, 3] with strides [1, 4]: not contiguous; viewing as [2, 2, 3]
        // splits the first dimension.
        assert_eq!(
            view_strides(&[4, 3], &[1, 4], &[2, 2, 3]),
            Some(vec![2, 1, 4])
        );
        assert_eq!(view_strides(&[4, 3], &[1, 4], &[12]), None);
        assert_eq!(view_strides(&[2, 3], &[3, 1], &[6]), Some(vec![1]));
        assert_eq!(
            view_strides(&[4, 3], &[1, 4], &[1, 4, 3]),
            Some(vec![1, 1, 4])
        );
    }
}
