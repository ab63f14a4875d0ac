//! Strided operands as the strided shaders and `matmul.wgsl` see them: offsets, extents and
//! strides packed into [`Params`], in 32 bits each.
//!
//! Elementwise operands reach [`elementwise`] as views of the output's shape (a broadcast operand
//! is expanded first, so it has stride 0 where it stretches). Dimensions of extent 1 are dropped
//! and neighbours that are contiguous for every operand are merged, so a narrowed matrix is a
//! vector of rows and most layouts reach the shader with a rank of 1 or 2; only what is left must
//! fit [`MAX_RANK`].

use switchyard::{DispatchError, Result, Tensor};

use super::context::Params;
use super::pipelines::MAX_RANK;

/// `value` as a shader's `u32` parameter, or an error naming `op`.
pub(crate) fn param(op: &'static str, value: u64) -> Result<u32> {
    u32::try_from(value).map_err(|_| {
        DispatchError::kernel(
            op,
            format!("{value} exceeds the wgpu backend's 32-bit sizes"),
        )
    })
}

/// `x`'s storage offset as a shader parameter, once every element offset of `x` is known to fit
/// in 32 bits: the shaders compute `offset + Σ coordinate · stride` in `u32`, and each element's
/// offset is below its storage's length (a `Tensor` invariant), so a storage of at most
/// `u32::MAX` elements keeps every partial sum exact. Checking offset, sizes and strides one by
/// one would not: their sum could still wrap.
fn offset_param(op: &'static str, x: &Tensor) -> Result<u32> {
    param(op, x.storage().len() as u64)?;
    param(op, x.storage_offset() as u64)
}

/// One dimension after merging: its extent and each operand's stride.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
struct Dim {
    size: usize,
    strides: [usize; 2],
}

/// The dimensions of `shape` with extent-1 dimensions dropped and contiguous neighbours merged;
/// `strides` holds each operand's strides over `shape` (the second is all zeros for one operand).
fn merged(shape: &[usize], strides: [&[usize]; 2]) -> Vec<Dim> {
    let mut dims: Vec<Dim> = Vec::with_capacity(shape.len());
    for (d, &size) in shape.iter().enumerate() {
        // An extent-1 dimension adds nothing to any offset, whatever its stride.
        if size == 1 {
            continue;
        }
        let dim = Dim {
            size,
            strides: [strides[0][d], strides[1][d]],
        };
        // The outer neighbour steps exactly over this whole dimension, for every operand: one
        // dimension of both extents. (Products fit: they are offsets inside the operand.)
        match dims.last_mut() {
            Some(outer) if (0..2).all(|i| outer.strides[i] == dim.strides[i] * size) => {
                outer.size *= size;
                outer.strides = dim.strides;
            }
            _ => dims.push(dim),
        }
    }
    dims
}

/// Whether the strided shaders can read `x` (its dimensions merge to at most [`MAX_RANK`]).
pub(crate) fn fits(x: &Tensor) -> bool {
    let zeros = vec![0; x.dim()];
    merged(x.shape(), [x.strides(), &zeros]).len() <= MAX_RANK
}

/// `Params` for an elementwise kernel of output `shape` (`n` elements, checked by the caller)
/// over `inputs`, each a non-empty view of `shape`; an error naming `op` when the layout does not
/// fit the shaders (more than [`MAX_RANK`] dimensions left after merging, or offsets past 32 bits).
pub(crate) fn elementwise(
    op: &'static str,
    shape: &[usize],
    n: usize,
    inputs: &[&Tensor],
) -> Result<Params> {
    let zeros = vec![0; shape.len()];
    let strides_of = |i: usize| inputs.get(i).map_or(&zeros[..], |x| x.strides());
    let dims = merged(shape, [strides_of(0), strides_of(1)]);
    if dims.len() > MAX_RANK {
        let layouts: Vec<String> = inputs
            .iter()
            .map(|x| format!("strides {:?}", x.strides()))
            .collect();
        return Err(DispatchError::kernel(
            op,
            format!(
                "the wgpu backend reads views of at most {MAX_RANK} dimensions that do not merge; \
                 shape {shape:?} with {} leaves {}: move it to the CPU first \
                 (`to(Device::Cpu)`), where any layout is served",
                layouts.join(" and "),
                dims.len()
            ),
        ));
    }
    let mut params = Params {
        n: param(op, n as u64)?,
        rank: dims.len() as u32,
        ..Params::default()
    };
    for (i, x) in inputs.iter().enumerate() {
        params.offsets[i] = offset_param(op, x)?;
    }
    for (d, dim) in dims.iter().enumerate() {
        params.sizes[d] = param(op, dim.size as u64)?;
        for i in 0..2 {
            params.strides[i][d] = param(op, dim.strides[i] as u64)?;
        }
    }
    Ok(params)
}

/// `Params` for `matmul.wgsl`: `x: [m, k]` and `y: [k, n]` read through their offsets and
/// strides (a dimension of extent 1 gets stride 0: it is never stepped, and its stride may be
/// anything).
pub(crate) fn matmul(x: &Tensor, y: &Tensor, [m, k, n]: [usize; 3]) -> Result<Params> {
    const OP: &str = "matmul";
    let mut params = Params {
        n: param(OP, n as u64)?,
        m: param(OP, m as u64)?,
        k: param(OP, k as u64)?,
        rank: 2,
        ..Params::default()
    };
    for (i, t) in [x, y].into_iter().enumerate() {
        params.offsets[i] = offset_param(OP, t)?;
        for d in 0..2 {
            let stride = if t.shape()[d] > 1 { t.strides()[d] } else { 0 };
            params.strides[i][d] = param(OP, stride as u64)?;
        }
    }
    Ok(params)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dims(list: &[(usize, [usize; 2])]) -> Vec<Dim> {
        list.iter()
            .map(|&(size, strides)| Dim { size, strides })
            .collect()
    }

    #[test]
    fn contiguous_operands_merge_into_one_dimension() {
        let shape = [2, 3, 4];
        assert_eq!(
            merged(&shape, [&[12, 4, 1], &[12, 4, 1]]),
            dims(&[(24, [1, 1])])
        );
    }

    #[test]
    fn extent_one_dimensions_vanish_whatever_their_stride() {
        assert_eq!(
            merged(&[1, 5, 1], [&[99, 1, 7], &[0, 0, 0]]),
            dims(&[(5, [1, 0])])
        );
        assert_eq!(merged(&[1, 1], [&[3, 9], &[0, 0]]), dims(&[]));
    }

    #[test]
    fn broadcast_and_transposed_operands_keep_their_dimensions() {
        // [3, 1] expanded to [3, 4] (stride 0 along the columns) with a contiguous [3, 4].
        assert_eq!(
            merged(&[3, 4], [&[1, 0], &[4, 1]]),
            dims(&[(3, [1, 4]), (4, [0, 1])])
        );
        // A transposed [4, 3] read as [3, 4].
        assert_eq!(
            merged(&[3, 4], [&[1, 3], &[0, 0]]),
            dims(&[(3, [1, 0]), (4, [3, 0])])
        );
    }

    #[test]
    fn a_narrowed_matrix_merges_its_rows_only_where_they_touch() {
        // Columns 1..3 of a [4, 5] matrix: the rows have gaps between them.
        assert_eq!(
            merged(&[4, 2], [&[5, 1], &[0, 0]]),
            dims(&[(4, [5, 0]), (2, [1, 0])])
        );
    }
}
