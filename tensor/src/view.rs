//! View layouts: new sizes, strides and offset over the same storage, no copy. The view ops
//! (`ops::transpose`, …) are dispatched like any op (so layers such as tracing see them); their
//! one kernel, registered for every backend, is the layout computation here.

use switchyard::DispatchError;

use crate::shape::{
    Dims, broadcast_shapes, is_contiguous, wrap_dim, wrap_dims, wrap_index, wrap_new_dim,
};
use crate::tensor::Tensor;

type Result<T> = std::result::Result<T, DispatchError>;

/// `x` with dimensions `d0` and `d1` swapped.
pub(crate) fn transpose(x: &Tensor, d0: isize, d1: isize) -> Result<Tensor> {
    const OP: &str = "transpose";
    let d0 = wrap_dim(OP, d0, x.shape())?;
    let d1 = wrap_dim(OP, d1, x.shape())?;
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

/// `dims` (negative ones counted from the end) as a permutation of `x`'s dimensions, or an
/// error naming `op`, `dims` and the shape.
pub(crate) fn permutation(op: &'static str, x: &Tensor, dims: &[isize]) -> Result<Vec<usize>> {
    let not_one = || {
        DispatchError::shape(
            op,
            format!(
                "{dims:?} is not a permutation of the {} dimensions of shape {:?}",
                x.dim(),
                x.shape()
            ),
        )
    };
    if dims.len() != x.dim() {
        return Err(not_one());
    }
    wrap_dims(op, dims, x.shape()).map_err(|_| not_one())
}

pub(crate) fn permute(x: &Tensor, dims: &[isize]) -> Result<Tensor> {
    let dims = permutation("permute", x, dims)?;
    let sizes: Vec<usize> = dims.iter().map(|&d| x.shape()[d]).collect();
    let strides: Vec<usize> = dims.iter().map(|&d| x.strides()[d]).collect();
    Ok(x.restrided(
        x.numel(),
        x.storage_offset(),
        Dims::new(&sizes),
        Dims::new(&strides),
    ))
}

/// Elements `start..start + len` along `dim` (PyTorch's `narrow`; a negative `start` counts from
/// the end). The whole range must lie inside the extent: unlike `slice`, nothing is clamped.
pub(crate) fn narrow(x: &Tensor, dim: isize, start: isize, len: usize) -> Result<Tensor> {
    const OP: &str = "narrow";
    let d = wrap_dim(OP, dim, x.shape())?;
    let first = wrap_index(OP, start, d, x.shape(), true)?;
    let extent = x.shape()[d];
    if len > extent - first {
        return Err(DispatchError::shape(
            OP,
            format!(
                "narrow({dim}, {start}, {len}) reaches outside a tensor of shape {:?}: start \
                 {first} + length {len} exceeds the extent {extent} of dim {d}",
                x.shape()
            ),
        ));
    }
    strided_range(x, d, first, len, 1)
}

/// Elements `start..end` along `dim`, every `step`-th (`step ≥ 1`), as Python slices: negative
/// `start` and `end` count from the end, and both are clamped to the extent (an `end` before
/// `start` gives an empty view). `step` 0 is an error.
pub(crate) fn slice(
    x: &Tensor,
    dim: isize,
    start: isize,
    end: isize,
    step: usize,
) -> Result<Tensor> {
    const OP: &str = "slice";
    let d = wrap_dim(OP, dim, x.shape())?;
    let extent = x.shape()[d];
    if step == 0 {
        return Err(DispatchError::shape(
            OP,
            format!(
                "slice({dim}, {start}, {end}, step 0) of shape {:?}: the step must be at least 1",
                x.shape()
            ),
        ));
    }
    // Python's rule: a negative bound counts from the end; then both clamp to 0..=extent.
    let clamp = |bound: isize| -> usize {
        if bound < 0 {
            extent.saturating_sub(bound.unsigned_abs())
        } else {
            bound.unsigned_abs().min(extent)
        }
    };
    let (first, last) = (clamp(start), clamp(end));
    let len = last.saturating_sub(first).div_ceil(step);
    strided_range(x, d, first, len, step)
}

/// The view of `len` elements along `dim` from `first`, every `step`-th; the caller checked that
/// they lie inside the extent.
fn strided_range(x: &Tensor, dim: usize, first: usize, len: usize, step: usize) -> Result<Tensor> {
    let extent = x.shape()[dim];
    let (mut sizes, mut strides) = (x.shape().to_vec(), x.strides().to_vec());
    sizes[dim] = len;
    let offset = if len == 0 {
        x.storage_offset()
    } else {
        // In bounds: element `first` along `dim` is an element of `x`.
        x.storage_offset() + first * strides[dim]
    };
    // `step · stride` is at most the distance between two elements of `x`, or the view has one
    // element along `dim` and the stride never moves.
    strides[dim] = if len > 1 {
        strides[dim] * step
    } else {
        strides[dim]
    };
    // An empty extent leaves nothing to view.
    let numel = x.numel().checked_div(extent).map_or(0, |per| per * len);
    Ok(x.restrided(numel, offset, Dims::new(&sizes), Dims::new(&strides)))
}

/// The sub-tensor at `index` along `dim`, without that dimension (a negative `index` counts from
/// the end).
pub(crate) fn select(x: &Tensor, dim: isize, index: isize) -> Result<Tensor> {
    const OP: &str = "select";
    let dim = wrap_dim(OP, dim, x.shape())?;
    let index = wrap_index(OP, index, dim, x.shape(), false)?;
    let (mut sizes, mut strides) = (x.shape().to_vec(), x.strides().to_vec());
    let offset = x.storage_offset() + index * strides[dim];
    let numel = x.numel() / sizes[dim];
    sizes.remove(dim);
    strides.remove(dim);
    Ok(x.restrided(numel, offset, Dims::new(&sizes), Dims::new(&strides)))
}

/// `shape` as `expand` takes it (PyTorch's rule): `-1` keeps the extent of the matching
/// dimension of `x` (aligned at the last), other negative entries are errors, as is `-1` in a
/// new leading dimension.
pub(crate) fn expand_shape(x: &Tensor, shape: &[isize]) -> Result<Vec<usize>> {
    const OP: &str = "expand";
    let lead = shape.len().checked_sub(x.dim());
    shape
        .iter()
        .enumerate()
        .map(|(i, &extent)| match (extent, lead) {
            (e, _) if e >= 0 => Ok(e.unsigned_abs()),
            (-1, Some(lead)) if i >= lead => Ok(x.shape()[i - lead]),
            _ => Err(DispatchError::shape(
                OP,
                format!(
                    "cannot expand shape {:?} to {shape:?}: an extent is -1 (keep the input's) \
                     only where the input has a dimension, and never another negative number",
                    x.shape()
                ),
            )),
        })
        .collect()
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
pub(crate) fn squeeze(x: &Tensor, dim: Option<isize>) -> Result<Tensor> {
    match dim {
        Some(d) => squeeze_dims_as("squeeze", x, &[d]),
        None => {
            let all: Vec<usize> = (0..x.dim()).collect();
            squeeze_wrapped(x, &all)
        }
    }
}

/// `x` without those of `dims` whose extent is 1 (the others stay, as PyTorch does); an empty
/// `dims` removes nothing.
pub(crate) fn squeeze_dims(x: &Tensor, dims: &[isize]) -> Result<Tensor> {
    squeeze_dims_as("squeeze_dims", x, dims)
}

fn squeeze_dims_as(op: &'static str, x: &Tensor, dims: &[isize]) -> Result<Tensor> {
    let dims = wrap_dims(op, dims, x.shape())?;
    squeeze_wrapped(x, &dims)
}

/// `x` without those of `dims` (wrapped) whose extent is 1.
fn squeeze_wrapped(x: &Tensor, dims: &[usize]) -> Result<Tensor> {
    let keep = |i: usize| x.shape()[i] != 1 || !dims.contains(&i);
    let (sizes, strides): (Vec<usize>, Vec<usize>) = (0..x.dim())
        .filter(|&i| keep(i))
        .map(|i| (x.shape()[i], x.strides()[i]))
        .unzip();
    Ok(x.restrided(
        x.numel(),
        x.storage_offset(),
        Dims::new(&sizes),
        Dims::new(&strides),
    ))
}

/// `x` with a new dimension of extent 1 at `dim` (`-(rank + 1)..=rank`; `-1` appends).
pub(crate) fn unsqueeze(x: &Tensor, dim: isize) -> Result<Tensor> {
    let dim = wrap_new_dim("unsqueeze", dim, x.shape())?;
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
