//! Sizes and strides: inline up to five dimensions (as c10 keeps them), checked arithmetic.

use std::fmt;
use std::ops::Deref;

use switchyard::DispatchError;

/// Dimensions kept inline; more go to the heap.
const INLINE: usize = 5;

/// A list of `usize` (a shape or strides), inline up to five entries.
#[derive(Clone, PartialEq, Eq, Hash)]
pub(crate) enum Dims {
    Inline { len: u8, dims: [usize; INLINE] },
    Heap(Box<[usize]>),
}

impl Dims {
    /// Unused inline entries are 0, so that equal lists compare equal.
    #[inline]
    pub(crate) fn new(dims: &[usize]) -> Dims {
        if dims.len() <= INLINE {
            // Entry by entry rather than `copy_from_slice`: for a list this short a `memcpy`
            // call costs more than the copy.
            let mut inline = [0usize; INLINE];
            for (entry, &d) in inline.iter_mut().zip(dims) {
                *entry = d;
            }
            Dims::Inline {
                len: dims.len() as u8,
                dims: inline,
            }
        } else {
            Dims::Heap(dims.into())
        }
    }

    /// `shape` and its row-major strides ([`contiguous_strides`]): how a new tensor's header
    /// gets its layout (inlined there, so that both land in the header without a copy). Each
    /// inline rank is spelled out: a loop would be a `memcpy` call for the sizes (LLVM
    /// recognises the copy), which costs more than the stores.
    #[inline(always)]
    pub(crate) fn contiguous(shape: &[usize]) -> (Dims, Dims) {
        // A stride steps over the extents inside it, an extent of 0 counted as 1 (as in
        // `write_contiguous_strides`); saturating: never reached for a checked element count.
        let step = |inner: usize, extent: usize| inner.saturating_mul(extent.max(1));
        let (sizes, strides) = match *shape {
            [] => ([0; INLINE], [0; INLINE]),
            [a] => ([a, 0, 0, 0, 0], [1, 0, 0, 0, 0]),
            [a, b] => ([a, b, 0, 0, 0], [b.max(1), 1, 0, 0, 0]),
            [a, b, c] => {
                let s1 = c.max(1);
                ([a, b, c, 0, 0], [step(s1, b), s1, 1, 0, 0])
            }
            [a, b, c, d] => {
                let s2 = d.max(1);
                let s1 = step(s2, c);
                ([a, b, c, d, 0], [step(s1, b), s1, s2, 1, 0])
            }
            [a, b, c, d, e] => {
                let s3 = e.max(1);
                let s2 = step(s3, d);
                let s1 = step(s2, c);
                ([a, b, c, d, e], [step(s1, b), s1, s2, s3, 1])
            }
            _ => return (Dims::new(shape), contiguous_strides(shape)),
        };
        let len = shape.len() as u8;
        (
            Dims::Inline { len, dims: sizes },
            Dims::Inline { len, dims: strides },
        )
    }
}

impl Deref for Dims {
    type Target = [usize];
    #[inline]
    fn deref(&self) -> &[usize] {
        match self {
            Dims::Inline { len, dims } => &dims[..usize::from(*len)],
            Dims::Heap(dims) => dims,
        }
    }
}

impl fmt::Debug for Dims {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&**self, f)
    }
}

/// The row-major (contiguous) strides of `shape`. Never overflows for a shape whose element
/// count was checked (each stride is a product of some of its extents, or 1 past a zero extent).
#[inline]
pub(crate) fn contiguous_strides(shape: &[usize]) -> Dims {
    if shape.len() <= INLINE {
        // Written in place: no buffer to copy from.
        let mut dims = [0usize; INLINE];
        write_contiguous_strides(&mut dims[..shape.len()], shape);
        return Dims::Inline {
            len: shape.len() as u8,
            dims,
        };
    }
    let mut strides = vec![0; shape.len()];
    write_contiguous_strides(&mut strides, shape);
    Dims::Heap(strides.into_boxed_slice())
}

/// Row-major strides of `shape` into `out` (of its length), innermost 1.
#[inline]
fn write_contiguous_strides(out: &mut [usize], shape: &[usize]) {
    let mut step = 1usize;
    for (stride, &extent) in out.iter_mut().zip(shape).rev() {
        *stride = step;
        step = step.saturating_mul(extent.max(1));
    }
}

/// Whether `sizes`/`strides` lay elements out row-major without gaps (dimensions of extent 1 may
/// have any stride; an empty tensor is contiguous).
pub(crate) fn is_contiguous(sizes: &[usize], strides: &[usize]) -> bool {
    if sizes.contains(&0) {
        return true;
    }
    let mut expected = 1usize;
    for (&size, &stride) in sizes.iter().zip(strides).rev() {
        if size != 1 {
            if stride != expected {
                return false;
            }
            expected *= size;
        }
    }
    true
}

/// The largest element offset a view reaches past its start (`Σ (size−1)·stride`), or `None` on
/// overflow; 0 for an empty view (which reaches nothing).
pub(crate) fn max_offset(sizes: &[usize], strides: &[usize]) -> Option<usize> {
    if sizes.contains(&0) {
        return Some(0);
    }
    sizes
        .iter()
        .zip(strides)
        .try_fold(0usize, |acc, (&size, &stride)| {
            acc.checked_add((size - 1).checked_mul(stride)?)
        })
}

/// Whether two elements of the view could share a memory location: some dimension of extent > 1
/// with stride 0, or strides that do not separate the dimensions' extents. Conservative (a
/// `true` may be a layout that does not in fact overlap); a `false` is certain.
pub(crate) fn may_overlap(sizes: &[usize], strides: &[usize]) -> bool {
    let mut dims: Vec<(usize, usize)> = sizes
        .iter()
        .zip(strides)
        .filter(|(size, _)| **size > 1)
        .map(|(&size, &stride)| (stride, size))
        .collect();
    dims.sort_unstable();
    // Each stride must step past everything the smaller dimensions reach.
    let mut reach = 0usize;
    for (stride, size) in dims {
        if stride <= reach {
            return true;
        }
        reach = match (size - 1)
            .checked_mul(stride)
            .and_then(|s| s.checked_add(reach))
        {
            Some(r) => r,
            None => return true,
        };
    }
    false
}

/// The shape two shapes broadcast to (NumPy's rules: align at the last dimension; extents must
/// match or one of them be 1), or an error naming `op` and both shapes.
pub fn broadcast_shapes(
    op: &'static str,
    a: &[usize],
    b: &[usize],
) -> Result<Vec<usize>, DispatchError> {
    let rank = a.len().max(b.len());
    let mut out = vec![0; rank];
    for i in 0..rank {
        let x = if i < rank - a.len() {
            1
        } else {
            a[i - (rank - a.len())]
        };
        let y = if i < rank - b.len() {
            1
        } else {
            b[i - (rank - b.len())]
        };
        out[i] = match (x, y) {
            (x, y) if x == y => x,
            (1, y) => y,
            (x, 1) => x,
            _ => {
                return Err(DispatchError::shape(
                    op,
                    format!(
                        "shapes {a:?} and {b:?} do not broadcast: dimension {i} of the result \
                         would need {x} and {y} to match or one of them to be 1"
                    ),
                ));
            }
        };
    }
    Ok(out)
}

/// Strides that read a tensor of `sizes`/`strides` as if it had shape `target` (which it
/// broadcasts to): new leading dimensions and stretched extents of 1 get stride 0.
pub(crate) fn broadcast_strides(sizes: &[usize], strides: &[usize], target: &[usize]) -> Dims {
    let lead = target.len() - sizes.len();
    let out: Vec<usize> = (0..target.len())
        .map(|i| {
            if i < lead || sizes[i - lead] == 1 && target[i] != 1 {
                0
            } else {
                strides[i - lead]
            }
        })
        .collect();
    Dims::new(&out)
}

/// `dim` as an index into the dimensions of `shape`: `0..rank` as they are, `-rank..0` counted
/// from the end (`-1` is the last, as in PyTorch). Anything else is a shape error naming `op`,
/// `dim`, the shape and the dims that would have worked. (The ops that insert a dimension,
/// `unsqueeze` and `stack`, take one more: [`wrap_new_dim`].)
pub fn wrap_dim(op: &'static str, dim: isize, shape: &[usize]) -> Result<usize, DispatchError> {
    wrap_in(op, dim, shape.len(), shape)
}

/// `dim` as the position of a dimension inserted into `shape`: `0..=rank`, or `-(rank + 1)..0`
/// counted from the end (`-1` appends, as PyTorch's `unsqueeze(-1)`); errors as [`wrap_dim`].
pub fn wrap_new_dim(op: &'static str, dim: isize, shape: &[usize]) -> Result<usize, DispatchError> {
    wrap_in(op, dim, shape.len() + 1, shape)
}

/// Each of `dims` wrapped by [`wrap_dim`], none named twice (after wrapping: `1` and `-1` of a
/// 2-d shape are the same dimension), in the order given.
pub fn wrap_dims(
    op: &'static str,
    dims: &[isize],
    shape: &[usize],
) -> Result<Vec<usize>, DispatchError> {
    let mut wrapped = Vec::with_capacity(dims.len());
    for &dim in dims {
        let d = wrap_dim(op, dim, shape)?;
        if wrapped.contains(&d) {
            return Err(DispatchError::shape(
                op,
                format!("dim {dim} appears twice in dims {dims:?} (shape {shape:?})"),
            ));
        }
        wrapped.push(d);
    }
    Ok(wrapped)
}

/// The one wrapping rule: `dim` in `-count..count` for `count` positions.
fn wrap_in(
    op: &'static str,
    dim: isize,
    count: usize,
    shape: &[usize],
) -> Result<usize, DispatchError> {
    let wrapped = if dim < 0 {
        count.checked_sub(dim.unsigned_abs())
    } else {
        Some(dim.unsigned_abs()).filter(|&d| d < count)
    };
    wrapped.ok_or_else(|| {
        let range = if count == 0 {
            "none exists".to_owned()
        } else {
            format!("expected one in -{count}..={}", count - 1)
        };
        DispatchError::shape(
            op,
            format!(
                "dim {dim} is out of range for shape {shape:?} (rank {}): {range}",
                shape.len()
            ),
        )
    })
}

/// `index` as a position along dimension `dim` (already wrapped) of `shape`, counted from the
/// end when negative (`-1` is the last element), for an op taking `index` in `0..extent`
/// (`select`) or, with `end_allowed`, `0..=extent` (the start of `narrow`). Anything else is a
/// shape error naming `op`, the index, the dim and the shape.
pub fn wrap_index(
    op: &'static str,
    index: isize,
    dim: usize,
    shape: &[usize],
    end_allowed: bool,
) -> Result<usize, DispatchError> {
    let extent = shape[dim];
    let count = extent + usize::from(end_allowed);
    let wrapped = if index < 0 {
        extent.checked_sub(index.unsigned_abs())
    } else {
        Some(index.unsigned_abs()).filter(|&i| i < count)
    };
    wrapped.ok_or_else(|| {
        let last = if end_allowed { "=" } else { "" };
        DispatchError::shape(
            op,
            format!(
                "index {index} is out of range for dim {dim} of shape {shape:?} (extent \
                 {extent}): expected one in -{extent}..{last}{extent}"
            ),
        )
    })
}

/// Element offsets of a strided view, in row-major order of its indices: the walk every naive
/// kernel takes over a non-contiguous input. Along the last dimension an offset is one addition
/// (the last stride); the outer dimensions advance like an odometer when a run of the last one
/// ends.
#[derive(Debug, Clone)]
pub struct Offsets<'a> {
    /// The extents and strides of all but the last dimension.
    outer_sizes: &'a [usize],
    outer_strides: &'a [usize],
    /// The index along each of the outer dimensions.
    index: Vec<usize>,
    /// The last dimension's extent and stride (1 and 0 for a 0-dimensional view), and the index
    /// along it.
    inner_size: usize,
    inner_stride: usize,
    inner: usize,
    /// The offset `next` returns.
    offset: usize,
    remaining: usize,
}

impl<'a> Offsets<'a> {
    /// The offsets of a view starting at `start`; `numel` is the product of `sizes`.
    pub(crate) fn new(
        start: usize,
        sizes: &'a [usize],
        strides: &'a [usize],
        numel: usize,
    ) -> Self {
        // A tensor's sizes and strides have one length: the walk takes the sizes' dimensions
        // (fewer strides than sizes would panic on the indexing, never skip a dimension).
        let (inner_size, inner_stride) = match sizes.len() {
            0 => (1, 0),
            rank => (sizes[rank - 1], strides[rank - 1]),
        };
        let outer = sizes.len().saturating_sub(1);
        Offsets {
            outer_sizes: &sizes[..outer],
            outer_strides: &strides[..outer],
            index: vec![0; outer],
            inner_size,
            inner_stride,
            inner: 0,
            offset: start,
            remaining: numel,
        }
    }
}

impl Iterator for Offsets<'_> {
    type Item = usize;

    #[inline]
    fn next(&mut self) -> Option<usize> {
        if self.remaining == 0 {
            return None;
        }
        self.remaining -= 1;
        let current = self.offset;
        if self.remaining == 0 {
            // The last element: nothing to advance to.
            return Some(current);
        }
        // Offsets stay within the view's checked reach (the next one is an element of the
        // view), so the additions and subtractions cannot overflow.
        if self.inner + 1 < self.inner_size {
            self.inner += 1;
            self.offset += self.inner_stride;
            return Some(current);
        }
        // The run along the last dimension ended: back to its start, and carry outwards.
        let mut offset = current - self.inner * self.inner_stride;
        self.inner = 0;
        for d in (0..self.index.len()).rev() {
            if self.index[d] + 1 < self.outer_sizes[d] {
                self.index[d] += 1;
                self.offset = offset + self.outer_strides[d];
                return Some(current);
            }
            offset -= self.index[d] * self.outer_strides[d];
            self.index[d] = 0;
        }
        // Not reached while elements remain; the walk would start over.
        self.offset = offset;
        Some(current)
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.remaining, Some(self.remaining))
    }
}

impl ExactSizeIterator for Offsets<'_> {}

#[cfg(test)]
mod tests {
    use super::*;

    /// The offsets of every layout a view can have (ranks 0–4, extents 0 and 1, strides 0,
    /// transposed, a start past 0) are the row-major walk of its indices.
    #[test]
    fn offsets_walk_every_index_in_row_major_order() {
        let layouts: &[(&[usize], &[usize], usize)] = &[
            (&[], &[], 5),
            (&[4], &[1], 0),
            (&[4], &[0], 3),
            (&[4], &[3], 2),
            (&[0], &[1], 0),
            (&[3, 2], &[1, 0], 0),
            (&[2, 3], &[1, 2], 1),
            (&[3, 1], &[1, 7], 0),
            (&[1, 3], &[9, 2], 4),
            (&[2, 0, 3], &[0, 3, 1], 0),
            (&[2, 3, 4], &[12, 1, 3], 0),
            (&[2, 2, 2, 3], &[0, 6, 3, 1], 2),
            (&[3, 1, 2, 1], &[2, 5, 1, 9], 1),
        ];
        for &(sizes, strides, start) in layouts {
            let numel: usize = sizes.iter().product();
            let mut want = Vec::new();
            let mut index = vec![0usize; sizes.len()];
            for _ in 0..numel {
                want.push(start + index.iter().zip(strides).map(|(i, s)| i * s).sum::<usize>());
                for d in (0..sizes.len()).rev() {
                    index[d] += 1;
                    if index[d] < sizes[d] {
                        break;
                    }
                    index[d] = 0;
                }
            }
            let walk = Offsets::new(start, sizes, strides, numel);
            assert_eq!(walk.len(), numel);
            let got: Vec<usize> = walk.collect();
            assert_eq!(got, want, "{sizes:?} {strides:?} from {start}");
        }
    }

    #[test]
    fn strides_contiguity_and_overlap() {
        assert_eq!(&*contiguous_strides(&[2, 3, 4]), &[12, 4, 1]);
        assert_eq!(&*contiguous_strides(&[]), &[] as &[usize]);
        assert!(is_contiguous(&[2, 3], &[3, 1]));
        assert!(!is_contiguous(&[2, 3], &[1, 2]));
        assert!(is_contiguous(&[2, 1, 3], &[3, 99, 1]));
        assert!(may_overlap(&[2, 3], &[0, 1]));
        assert!(!may_overlap(&[2, 3], &[1, 2]));
        assert!(may_overlap(&[3, 3], &[1, 1]));
        assert!(may_overlap(&[4], &[0]));
        assert!(!may_overlap(&[1, 4], &[0, 1]), "extent 1 never overlaps");
        assert_eq!(max_offset(&[2, 3], &[3, 1]), Some(5));
        assert_eq!(max_offset(&[usize::MAX, 3], &[usize::MAX, 1]), None);
        let dims = Dims::new(&[1, 2, 3, 4, 5, 6]);
        assert_eq!(&*dims, &[1, 2, 3, 4, 5, 6]);
    }

    #[test]
    fn a_new_layout_is_its_shape_and_the_loops_strides_at_every_rank() {
        let extents = [0, 1, 2, 3, usize::MAX];
        // Every shape of rank 0..=6 over a few extents (zeros and a saturating one included),
        // against `Dims::new` and the loop of `contiguous_strides`.
        for rank in 0..=6u32 {
            for code in 0..extents.len().pow(rank) {
                let shape: Vec<usize> = (0..rank)
                    .map(|d| extents[code / extents.len().pow(d) % extents.len()])
                    .collect();
                let (sizes, strides) = Dims::contiguous(&shape);
                assert_eq!(sizes, Dims::new(&shape), "{shape:?}");
                assert_eq!(strides, contiguous_strides(&shape), "{shape:?}");
                let mut looped = vec![0; shape.len()];
                write_contiguous_strides(&mut looped, &shape);
                assert_eq!(&*strides, &looped[..], "{shape:?}");
            }
        }
        assert_eq!(&*Dims::contiguous(&[2, 3, 4]).1, &[12, 4, 1]);
        assert_eq!(
            &*Dims::contiguous(&[2, 0, 4, 5, 6]).1,
            &[120, 120, 30, 6, 1]
        );
    }

    #[test]
    fn dims_and_indices_wrap_from_the_end() {
        let shape = [5, 4];
        assert_eq!(wrap_dim("t", -1, &shape).unwrap(), 1);
        assert_eq!(wrap_dim("t", -2, &shape).unwrap(), 0);
        assert_eq!(wrap_dim("t", 1, &shape).unwrap(), 1);
        let err = wrap_dim("sum_dim", -3, &shape).unwrap_err().to_string();
        assert!(err.contains("sum_dim") && err.contains("dim -3"), "{err}");
        assert!(err.contains("[5, 4]") && err.contains("-2..=1"), "{err}");
        assert!(wrap_dim("t", 2, &shape).is_err());
        assert!(wrap_dim("t", 0, &[]).is_err());
        assert_eq!(wrap_new_dim("unsqueeze", -1, &shape).unwrap(), 2);
        assert_eq!(wrap_new_dim("unsqueeze", -3, &shape).unwrap(), 0);
        assert!(wrap_new_dim("unsqueeze", 3, &shape).is_err());
        assert_eq!(wrap_dims("t", &[-1, 0], &shape).unwrap(), vec![1, 0]);
        let err = wrap_dims("t", &[1, -1], &shape).unwrap_err().to_string();
        assert!(err.contains("twice"), "{err}");
        assert_eq!(wrap_index("select", -1, 0, &shape, false).unwrap(), 4);
        assert_eq!(wrap_index("narrow", 5, 0, &shape, true).unwrap(), 5);
        assert!(wrap_index("select", 5, 0, &shape, false).is_err());
        assert!(wrap_index("select", -6, 0, &shape, false).is_err());
    }

    #[test]
    fn broadcasting_follows_numpy() {
        assert_eq!(
            broadcast_shapes("t", &[2, 1, 3], &[4, 1]).unwrap(),
            vec![2, 4, 3]
        );
        assert_eq!(broadcast_shapes("t", &[], &[3]).unwrap(), vec![3]);
        let err = broadcast_shapes("add", &[2, 3], &[4])
            .unwrap_err()
            .to_string();
        assert!(err.contains("[2, 3] and [4] do not broadcast"), "{err}");
        assert_eq!(
            &*broadcast_strides(&[3, 1], &[1, 1], &[2, 3, 4]),
            &[0, 1, 0]
        );
    }

    #[test]
    fn offsets_walk_row_major() {
        // A [2, 3] tensor transposed: sizes [3, 2], strides [1, 3].
        let offsets: Vec<usize> = Offsets::new(0, &[3, 2], &[1, 3], 6).collect();
        assert_eq!(offsets, vec![0, 3, 1, 4, 2, 5]);
        assert_eq!(Offsets::new(7, &[], &[], 1).collect::<Vec<_>>(), vec![7]);
        assert_eq!(Offsets::new(0, &[0, 2], &[2, 1], 0).count(), 0);
    }
}
