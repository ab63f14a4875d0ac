//! Strided operands as the strided shaders and `matmul.wgsl` see them: offsets, extents and
//! strides packed into [`Params`], in 32 bits each. Public: a kernel of any crate describes its
//! operands with [`Operand`] and gets its uniform from [`Params::strided`].
//!
//! Elementwise operands reach [`Params::strided`] as views of the output's shape (a broadcast
//! operand is expanded first, so it has stride 0 where it stretches). Dimensions of extent 1 are
//! dropped and neighbours that are contiguous for every operand are merged, so a narrowed matrix is
//! a vector of rows and most layouts reach the shader with a rank of 1 or 2; only what is left must
//! fit [`MAX_RANK`].
//!
//! An [`Operand`] is what a shader indexes: usually a tensor's elements; for the word shaders an
//! `i64` tensor's 32-bit words ([`Operand::words`]: one more, innermost dimension of two words,
//! which a contiguous tensor merges away), or its elements read two words at a time
//! ([`Operand::scaled`]). Up to three operands (`where`) share one `Params`.

use switchyard::{DispatchError, Result, Tensor};

/// Dimensions the strided shaders index ([`Params::sizes`] and the strides hold this many).
pub const MAX_RANK: usize = 8;

/// Bytes of the `Params` uniform every kernel binds (the prelude's `Params` is all of it; a shader
/// may declare a shorter prefix).
pub(crate) const PARAMS_SIZE: u64 = 160;

/// The operands whose layouts one [`Params`] holds (`where`'s condition and two values).
pub const MAX_OPERANDS: usize = 3;

/// The uniform every kernel binds after its output: `n`, `m`, `k`, `scalar` (each kernel gives
/// them its own meaning), then the operands' layouts, which the strided shaders read. In WGSL it
/// is the `Params` struct of [`PRELUDE`](super::PRELUDE), 160 bytes; a shader may declare only a
/// prefix (the plain shaders declare the first four fields).
///
/// [`Params::strided`] fills `n` and the layouts; a kernel sets `m`, `k` and `scalar` itself.
#[derive(Clone, Copy, PartialEq, Debug, Default)]
pub struct Params {
    /// Usually the invocations that do work (the shaders skip those at `index >= n`).
    pub n: u32,
    /// Free for the kernel (`matmul`: rows; `full` of `i64`: the low word).
    pub m: u32,
    /// Free for the kernel (the comparisons: which one).
    pub k: u32,
    /// Free for the kernel (`full`: the value; a downstream `scale`: the factor).
    pub scalar: f32,
    /// Dimensions in use in `sizes` and the strides.
    pub rank: u32,
    /// Each operand's storage offset, in the units its shader indexes: `x`, `y`, `z`.
    pub offsets: [u32; 3],
    /// The output's extents, outermost first.
    pub sizes: [u32; 8],
    /// Each operand's strides (0 where it is broadcast).
    pub strides: [[u32; 8]; 3],
}

// The lengths are literals, not `MAX_OPERANDS` and `MAX_RANK`: rustc 1.95 crashes (broken MIR)
// on a struct update `Params { .., ..p }` in another crate's closure when they are named consts.
const _: () = assert!(MAX_OPERANDS == 3 && MAX_RANK == 8);

impl Params {
    /// The uniform's bytes, in the field order of `Params` in `strided.wgsl`.
    pub(crate) fn bytes(self) -> [u8; PARAMS_SIZE as usize] {
        let head = [
            self.n,
            self.m,
            self.k,
            self.scalar.to_bits(),
            self.rank,
            self.offsets[0],
            self.offsets[1],
            self.offsets[2],
        ];
        // Five arrays of eight words (the head is as long as `MAX_RANK`, so the array types
        // agree), cast to exactly the uniform's size.
        bytemuck::cast([
            head,
            self.sizes,
            self.strides[0],
            self.strides[1],
            self.strides[2],
        ])
    }
}

// `bytes` fills the uniform exactly: 8 head words, then four arrays of `MAX_RANK`.
const _: () = assert!(PARAMS_SIZE as usize == 4 * (8 + 4 * MAX_RANK));

/// `value` as a shader's `u32` parameter, or an error naming `op` (WGSL indexes in 32 bits).
pub fn param(op: &'static str, value: u64) -> Result<u32> {
    u32::try_from(value).map_err(|_| {
        DispatchError::kernel(
            op,
            format!("{value} exceeds the wgpu backend's 32-bit sizes"),
        )
    })
}

/// An operand as a strided shader indexes it: its storage offset and its strides over the
/// output's shape (0 where it is broadcast), in the units the shader indexes its array in, and
/// how many such units its storage holds. Made from a GPU tensor; see [`Params::strided`].
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct Operand {
    offset: usize,
    strides: Vec<usize>,
    /// Every offset the shader computes for this operand is below it (a `Tensor` invariant, in
    /// elements; times the words per element where the shader reads words).
    extent: u64,
}

impl Operand {
    /// `x` (a view of the output's shape) element by element.
    pub fn of(x: &Tensor) -> Operand {
        Operand {
            offset: x.storage_offset(),
            strides: x.strides().to_vec(),
            extent: x.storage().len() as u64,
        }
    }

    /// `x` element by element, for a shader that reads element `e` at words `words · e ..`
    /// (an `i64` comparison reads both words of each element): its storage must fit 32 bits in
    /// words, not only in elements.
    pub fn scaled(x: &Tensor, words: usize) -> Operand {
        let mut operand = Operand::of(x);
        operand.extent = operand.extent.saturating_mul(words as u64);
        operand
    }

    /// `x` as a view of its 32-bit words: offsets and strides times `words`, and one more,
    /// innermost dimension of extent `words` and stride 1 (the output's shape gets it too). A
    /// contiguous `x` still merges into one dimension. (Products saturate: a storage past 32
    /// bits of words is refused by [`Params::strided`] anyway.)
    pub fn words(x: &Tensor, words: usize) -> Operand {
        let mut strides: Vec<usize> = x
            .strides()
            .iter()
            .map(|s| s.saturating_mul(words))
            .collect();
        strides.push(1);
        Operand {
            offset: x.storage_offset().saturating_mul(words),
            strides,
            extent: (x.storage().len() as u64).saturating_mul(words as u64),
        }
    }

    /// The same operand, broadcast along one more innermost dimension (stride 0): a `where`
    /// condition over the words of its values.
    pub fn broadcast_inner(mut self) -> Operand {
        self.strides.push(0);
        self
    }

    /// The storage offset as a shader parameter, once every offset the shader computes is known
    /// to fit in 32 bits (else an error naming `op`): the shaders compute
    /// `offset + Σ coordinate · stride` in `u32`, and each such offset is below the operand's
    /// extent, so an extent of at most `u32::MAX` keeps every partial sum exact. Checking offset,
    /// sizes and strides one by one would not: their sum could still wrap.
    pub fn offset(&self, op: &'static str) -> Result<u32> {
        param(op, self.extent)?;
        param(op, self.offset as u64)
    }
}

/// One dimension after merging: its extent and each operand's stride.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
struct Dim {
    size: usize,
    strides: [usize; MAX_OPERANDS],
}

/// The dimensions of `shape` with extent-1 dimensions dropped and contiguous neighbours merged;
/// `strides` holds each operand's strides over `shape` (at most [`MAX_OPERANDS`]; missing ones count
/// as all zeros).
fn merged(shape: &[usize], strides: &[&[usize]]) -> Vec<Dim> {
    debug_assert!(strides.len() <= MAX_OPERANDS);
    let mut dims: Vec<Dim> = Vec::with_capacity(shape.len());
    for (d, &size) in shape.iter().enumerate() {
        // An extent-1 dimension adds nothing to any offset, whatever its stride.
        if size == 1 {
            continue;
        }
        let mut dim = Dim {
            size,
            strides: [0; MAX_OPERANDS],
        };
        for (i, s) in strides.iter().enumerate() {
            dim.strides[i] = s[d];
        }
        // The outer neighbour steps exactly over this whole dimension, for every operand: one
        // dimension of both extents. (Products fit: they are offsets inside the operand.)
        match dims.last_mut() {
            Some(outer) if (0..MAX_OPERANDS).all(|i| outer.strides[i] == dim.strides[i] * size) => {
                outer.size *= size;
                outer.strides = dim.strides;
            }
            _ => dims.push(dim),
        }
    }
    dims
}

/// Whether the strided shaders can read `x` as a view of its words, `words` per element (its
/// dimensions merge to at most [`MAX_RANK`]).
pub(crate) fn fits(x: &Tensor, words: usize) -> bool {
    let operand = Operand::words(x, words);
    let mut shape = x.shape().to_vec();
    shape.push(words);
    merged(&shape, &[&operand.strides]).len() <= MAX_RANK
}

impl Params {
    /// The layouts of `operands` (at most [`MAX_OPERANDS`], each indexed over `shape`: a view of
    /// the output's shape, stride 0 where broadcast) and `n`, the invocations of one per element
    /// of `shape`; `m`, `k` and `scalar` are 0 for the kernel to set. The prelude's `offsets(i)`
    /// then gives where element `i` of `shape` lies in each operand.
    ///
    /// An error naming `op` when the layout does not fit the shaders: more than [`MAX_RANK`]
    /// dimensions left after merging, more than [`MAX_OPERANDS`] operands, operands whose
    /// strides do not match `shape`'s rank, or sizes and offsets past 32 bits.
    pub fn strided(op: &'static str, shape: &[usize], operands: &[Operand]) -> Result<Params> {
        if operands.len() > MAX_OPERANDS {
            return Err(DispatchError::kernel(
                op,
                format!(
                    "one `Params` holds the layouts of at most {MAX_OPERANDS} operands, not {}",
                    operands.len()
                ),
            ));
        }
        if let Some(o) = operands.iter().find(|o| o.strides.len() != shape.len()) {
            return Err(DispatchError::shape(
                op,
                format!(
                    "an operand with strides {:?} is not a view of shape {shape:?}: expand it \
                     to the output's shape first",
                    o.strides
                ),
            ));
        }
        let n = shape
            .iter()
            .try_fold(1u64, |n, &d| n.checked_mul(d as u64))
            .unwrap_or(u64::MAX);
        let strides: Vec<&[usize]> = operands.iter().map(|o| &o.strides[..]).collect();
        let dims = merged(shape, &strides);
        if dims.len() > MAX_RANK {
            let layouts: Vec<String> = operands
                .iter()
                .map(|o| format!("strides {:?}", o.strides))
                .collect();
            return Err(DispatchError::kernel(
                op,
                format!(
                    "the wgpu backend reads views of at most {MAX_RANK} dimensions that do not \
                     merge; shape {shape:?} with {} leaves {}: move it to the CPU first \
                     (`to(Device::Cpu)`), where any layout is served",
                    layouts.join(" and "),
                    dims.len()
                ),
            ));
        }
        let mut params = Params {
            n: param(op, n)?,
            rank: dims.len() as u32,
            ..Params::default()
        };
        for (i, operand) in operands.iter().enumerate() {
            params.offsets[i] = operand.offset(op)?;
        }
        for (d, dim) in dims.iter().enumerate() {
            params.sizes[d] = param(op, dim.size as u64)?;
            for i in 0..MAX_OPERANDS {
                params.strides[i][d] = param(op, dim.strides[i] as u64)?;
            }
        }
        Ok(params)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dims(list: &[(usize, [usize; 2])]) -> Vec<Dim> {
        list.iter()
            .map(|&(size, [a, b])| Dim {
                size,
                strides: [a, b, 0],
            })
            .collect()
    }

    #[test]
    fn contiguous_operands_merge_into_one_dimension() {
        let shape = [2, 3, 4];
        assert_eq!(
            merged(&shape, &[&[12, 4, 1], &[12, 4, 1]]),
            dims(&[(24, [1, 1])])
        );
    }

    #[test]
    fn extent_one_dimensions_vanish_whatever_their_stride() {
        assert_eq!(
            merged(&[1, 5, 1], &[&[99, 1, 7], &[0, 0, 0]]),
            dims(&[(5, [1, 0])])
        );
        assert_eq!(merged(&[1, 1], &[&[3, 9], &[0, 0]]), dims(&[]));
    }

    #[test]
    fn broadcast_and_transposed_operands_keep_their_dimensions() {
        // [3, 1] expanded to [3, 4] (stride 0 along the columns) with a contiguous [3, 4].
        assert_eq!(
            merged(&[3, 4], &[&[1, 0], &[4, 1]]),
            dims(&[(3, [1, 4]), (4, [0, 1])])
        );
        // A transposed [4, 3] read as [3, 4].
        assert_eq!(
            merged(&[3, 4], &[&[1, 3], &[0, 0]]),
            dims(&[(3, [1, 0]), (4, [3, 0])])
        );
    }

    #[test]
    fn an_i64_views_words_merge_like_its_elements() {
        // A contiguous [3, 4] of two-word elements is one run of 24 words.
        let shape = [3, 4, 2];
        assert_eq!(merged(&shape, &[&[8, 2, 1]]), dims(&[(24, [1, 0])]));
        // Its transpose keeps two dimensions and the word pairs: [4, 3] over strides [2, 8].
        assert_eq!(
            merged(&[4, 3, 2], &[&[2, 8, 1]]),
            dims(&[(4, [2, 0]), (3, [8, 0]), (2, [1, 0])])
        );
    }

    #[test]
    fn a_narrowed_matrix_merges_its_rows_only_where_they_touch() {
        // Columns 1..3 of a [4, 5] matrix: the rows have gaps between them.
        assert_eq!(
            merged(&[4, 2], &[&[5, 1], &[0, 0]]),
            dims(&[(4, [5, 0]), (2, [1, 0])])
        );
    }
}
