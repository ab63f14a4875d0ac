//! The one template of the SIMD kernels, instantiated once per instruction set.
//!
//! An ISA file holds only what differs between instruction sets, its *lane helpers*: `load` and
//! `store` (an `[f32; LANES]` to a vector and back), one function per elementwise op over whole
//! vectors (`add(a, b)`, `sub`, `mul`, `div`, `neg(a)`, `relu`, `exp`) and `total(xs)`, the
//! `f64` sum of a slice (through [`total`]). [`simd_kernels!`] writes the kernels themselves:
//! each a `#[kernel(…, cpu = …)]` `#[target_feature]` function whose body is one of the drivers
//! below applied to the helpers.
//!
//! The drivers are `#[inline(always)]` and have no target features of their own: a kernel hands
//! them its helpers inside closures, and a closure has the target features of the function it is
//! written in. So the driver, the closure and the helpers all inline into the kernel, and the
//! loop is compiled with the kernel's features, as a hand-written one would be.

use switchyard::{DType, Result, Tensor};

/// Elements per step of the reductions, and their `f64` partial sums: partial `p` adds up the
/// elements whose index is `p` modulo `BLOCK`, in order, whatever the instruction set.
pub(crate) const BLOCK: usize = 16;

/// `f` of each `N` elements of `x`: a one-operand elementwise kernel. The last `len % N`
/// elements take `scalar`, the op's scalar twin, where it has one (an op whose vector result
/// differs from its scalar one, `exp`, passes `None` and takes `f` on a zero-padded vector).
/// A non-contiguous operand takes `naive`, the op's naive kernel. (Other dtypes never arrive
/// through dispatch: the kernels declare `dtypes = "f32"`, so the op's table sends them to the
/// naive backend. The check stays, for direct calls.)
#[inline(always)]
pub(crate) fn map<const N: usize>(
    op: &'static str,
    x: &Tensor,
    naive: fn(&Tensor) -> Result<Tensor>,
    f: impl Fn(&[f32; N]) -> [f32; N],
    scalar: Option<fn(f32) -> f32>,
) -> Result<Tensor> {
    let Some(view) = contiguous_f32(op, x)? else {
        return naive(x);
    };
    let xs = view.contiguous().unwrap_or_default();
    let (chunks, tail) = xs.as_chunks::<N>();
    let chunks = chunks.iter().map(&f);
    let out = match scalar {
        Some(scalar) => collect(op, xs.len(), chunks, || tail.iter().map(|&a| scalar(a))),
        None => collect(op, xs.len(), chunks, || f(&padded(tail))),
    }?;
    Tensor::from_host(out, x.shape())
}

/// The elements of a contiguous `f32` tensor, or `None` (the slow path's inputs).
#[inline(always)]
pub(crate) fn contiguous_f32<'t>(
    op: &'static str,
    x: &'t Tensor,
) -> Result<Option<switchyard::HostView<'t, f32>>> {
    if x.dtype() != DType::F32 || !x.is_contiguous() {
        return Ok(None);
    }
    x.host::<f32>(op).map(Some)
}

/// `f` of each `N` elements of `x` and the same `N` of `y`: a two-operand elementwise kernel.
/// The last `len % N` elements take `scalar`, the naive kernel's arithmetic for the op (the same
/// IEEE operation), so a short tensor is never copied into a padded vector.
#[inline(always)]
pub(crate) fn zip<const N: usize>(
    op: &'static str,
    x: &Tensor,
    y: &Tensor,
    naive: fn(&Tensor, &Tensor) -> Result<Tensor>,
    f: impl Fn(&[f32; N], &[f32; N]) -> [f32; N],
    scalar: fn(f32, f32) -> f32,
) -> Result<Tensor> {
    // The fast path: two contiguous `f32` operands of one shape, so of one length (a tensor
    // holds exactly its shape's element count): the chunks of `x` and `y` pair up to the last.
    // Anything else (views, broadcasting; other dtypes on a direct call) takes `naive`, the op's
    // naive kernel.
    let (xshape, yshape) = (x.shape(), y.shape());
    // Element by element: for a shape this short, cheaper than the `memcmp` call of `!=`.
    if xshape.len() != yshape.len() || xshape.iter().zip(yshape).any(|(a, b)| a != b) {
        return naive(x, y);
    }
    let (Some(xv), Some(yv)) = (contiguous_f32(op, x)?, contiguous_f32(op, y)?) else {
        return naive(x, y);
    };
    let (xs, ys) = (
        xv.contiguous().unwrap_or_default(),
        yv.contiguous().unwrap_or_default(),
    );
    let ((xc, xt), (yc, yt)) = (xs.as_chunks::<N>(), ys.as_chunks::<N>());
    let chunks = xc.iter().zip(yc).map(|(a, b)| f(a, b));
    let tail = || xt.iter().zip(yt).map(|(&a, &b)| scalar(a, b));
    let out = collect(op, xs.len(), chunks, tail)?;
    Tensor::from_host(out, x.shape())
}

/// A new buffer of `len` elements, `N` from each of `chunks` and the last `len % N` from
/// `tail()`; it is never zero-filled first. (Were `chunks` or `tail()` short, the buffer would
/// stop where they do, and the tensor made of it would fail its shape check.)
#[allow(unsafe_code)] // the `set_len` of the output, over the elements written
#[inline(always)]
fn collect<const N: usize, T: IntoIterator<Item = f32>>(
    op: &'static str,
    len: usize,
    chunks: impl Iterator<Item = [f32; N]>,
    tail: impl FnOnce() -> T,
) -> Result<switchyard::HostVec<f32>> {
    let mut out = switchyard::host_buffer::<f32>(op, len)?;
    let (full, rest) = out.spare()[..len].as_chunks_mut::<N>();
    let mut written = 0;
    for (slots, values) in full.iter_mut().zip(chunks) {
        for (slot, value) in slots.iter_mut().zip(values) {
            slot.write(value);
        }
        written += N;
    }
    if written == len - rest.len() {
        for (slot, value) in rest.iter_mut().zip(tail()) {
            slot.write(value);
            written += 1;
        }
    }
    // SAFETY: the first `written` elements are initialised: the loops above wrote each chunk of
    // `full` they counted, in order from the start, then (only right after all of `full`) each
    // slot of `rest` they counted, in order. `written <= len <= capacity` (`host_buffer`'s
    // promise; the `[..len]` above checked it).
    unsafe { out.set_len(written) };
    Ok(out)
}

/// The last `len % N` elements, zero-padded to one vector.
#[inline(always)]
fn padded<const N: usize>(tail: &[f32]) -> [f32; N] {
    let mut lanes = [0.0; N];
    lanes[..tail.len()].copy_from_slice(tail);
    lanes
}

/// The sum of `xs` in `f64`: `add` adds each block of [`BLOCK`] elements to the partial sums
/// `sums` (held in vectors, so that additions overlap), `spill` gives them back as `f64`s, and
/// [`finish_sum`] adds them up with the last `len % BLOCK` elements.
#[inline(always)]
pub(crate) fn total<S>(
    xs: &[f32],
    mut sums: S,
    add: impl Fn(&mut S, &[f32; BLOCK]),
    spill: impl FnOnce(S) -> [f64; BLOCK],
) -> f64 {
    let (blocks, tail) = xs.as_chunks::<BLOCK>();
    for block in blocks {
        add(&mut sums, block);
    }
    finish_sum(&mut spill(sums), tail)
}

/// Adds up per-lane `f64` partial sums in a fixed (pairwise) order, then the scalar tail.
fn finish_sum(partials: &mut [f64], tail: &[f32]) -> f64 {
    let mut width = partials.len();
    while width > 1 {
        let half = width / 2;
        for i in 0..half {
            partials[i] += partials[i + half];
        }
        if width % 2 == 1 {
            partials[0] += partials[width - 1];
        }
        width = half;
    }
    let head = partials.first().copied().unwrap_or(-0.0);
    tail.iter().fold(head, |acc, &x| acc + f64::from(x))
}

/// The kernels of one instruction set at `CpuSimd`, from the lane helpers in scope (see the
/// module docs): `simd_kernels!(cpu = "avx2,fma", needs = "AVX2 and FMA"; add_avx2 = add, …)`
/// registers `add_avx2` for `add` with `cpu = "avx2,fma"` and `#[target_feature(enable =
/// "avx2,fma")]`. Each op (`add` `sub` `mul` `div` `neg` `relu` `exp` `sum` `mean`) has its
/// line below: its doc and which driver it takes.
macro_rules! simd_kernels {
    (cpu = $cpu:tt, needs = $needs:tt; $($name:ident = $op:ident),+ $(,)?) => {
        $($crate::cpu::simd::template::simd_kernels!(@$op $name $cpu $needs);)+
    };

    (@add $name:ident $cpu:tt $needs:tt) => {
        $crate::cpu::simd::template::simd_kernels!(@binary add add_naive $name $cpu $needs "`x + y`.");
    };
    (@sub $name:ident $cpu:tt $needs:tt) => {
        $crate::cpu::simd::template::simd_kernels!(@binary sub sub_naive $name $cpu $needs "`x - y`.");
    };
    (@mul $name:ident $cpu:tt $needs:tt) => {
        $crate::cpu::simd::template::simd_kernels!(@binary mul mul_naive $name $cpu $needs "`x * y`.");
    };
    (@div $name:ident $cpu:tt $needs:tt) => {
        $crate::cpu::simd::template::simd_kernels!(@binary div div_naive $name $cpu $needs "`x / y`.");
    };
    (@neg $name:ident $cpu:tt $needs:tt) => {
        $crate::cpu::simd::template::simd_kernels!(@unary neg neg_naive $name $cpu $needs
            "`-x`: the sign bit flipped, NaN included, as scalar negation does.";
            Some(<f32 as $crate::cpu::naive::Arith>::neg));
    };
    (@relu $name:ident $cpu:tt $needs:tt) => {
        $crate::cpu::simd::template::simd_kernels!(@unary relu relu_naive $name $cpu $needs
            "`max(x, 0)`, NaN kept."; Some(<f32 as $crate::cpu::naive::Arith>::relu));
    };
    (@exp $name:ident $cpu:tt $needs:tt) => {
        // No scalar twin: the C library's `expf` may differ by 1 ulp from the vector `exp`, and
        // every element of one tensor should get the same function.
        $crate::cpu::simd::template::simd_kernels!(@unary exp exp_naive $name $cpu $needs
            "`e^x`, within 1 ulp of the naive kernel."; None);
    };
    (@sum $name:ident $cpu:tt $needs:tt) => {
        $crate::cpu::simd::template::simd_kernels!(@kernel sum $cpu $needs
            "The sum, as a 0-dimensional tensor.";
            pub fn $name(x: &::switchyard::Tensor) -> ::switchyard::Result<::switchyard::Tensor> {
                let Some(view) = $crate::cpu::simd::template::contiguous_f32("sum", x)? else {
                    return $crate::cpu::naive::sum_naive(x);
                };
                let total = total(view.contiguous().unwrap_or_default());
                ::switchyard::Tensor::from_scalar(total as f32)
            }
        );
    };
    (@mean $name:ident $cpu:tt $needs:tt) => {
        $crate::cpu::simd::template::simd_kernels!(@kernel mean $cpu $needs
            "The mean, as a 0-dimensional tensor (NaN when empty).";
            pub fn $name(x: &::switchyard::Tensor) -> ::switchyard::Result<::switchyard::Tensor> {
                let Some(view) = $crate::cpu::simd::template::contiguous_f32("mean", x)? else {
                    return $crate::cpu::naive::mean_naive(x);
                };
                let total = total(view.contiguous().unwrap_or_default());
                ::switchyard::Tensor::from_scalar((total / x.numel() as f64) as f32)
            }
        );
    };

    (@binary $op:ident $naive:ident $name:ident $cpu:tt $needs:tt $doc:tt) => {
        $crate::cpu::simd::template::simd_kernels!(@kernel $op $cpu $needs $doc;
            pub fn $name(
                x: &::switchyard::Tensor,
                y: &::switchyard::Tensor,
            ) -> ::switchyard::Result<::switchyard::Tensor> {
                let naive = $crate::cpu::naive::$naive;
                let scalar = <f32 as $crate::cpu::naive::Arith>::$op;
                $crate::cpu::simd::template::zip(stringify!($op), x, y, naive, |a, b| {
                    store($op(load(a), load(b)))
                }, scalar)
            }
        );
    };
    (@unary $op:ident $naive:ident $name:ident $cpu:tt $needs:tt $doc:tt; $scalar:expr) => {
        $crate::cpu::simd::template::simd_kernels!(@kernel $op $cpu $needs $doc;
            pub fn $name(x: &::switchyard::Tensor) -> ::switchyard::Result<::switchyard::Tensor> {
                let naive = $crate::cpu::naive::$naive;
                $crate::cpu::simd::template::map(
                    stringify!($op), x, naive, |a| store($op(load(a))), $scalar,
                )
            }
        );
    };

    // The registration and the features, the same for every kernel of the instruction set.
    (@kernel $op:ident $cpu:tt $needs:tt $doc:tt; $($item:tt)*) => {
        #[doc = $doc]
        ///
        /// # Safety
        ///
        #[doc = concat!("The CPU must have ", $needs, ". Dispatch installs this kernel only on \
                         such a CPU (runtime detection).")]
        #[::switchyard::kernel(op = ::switchyard::ops::$op, key = CpuSimd, cpu = $cpu, dtypes = "f32")]
        #[target_feature(enable = $cpu)]
        $($item)*
    };
}

pub(crate) use simd_kernels;

#[cfg(test)]
mod tests {
    use super::finish_sum;

    #[test]
    fn finish_sum_adds_everything_once() {
        for n in 0..12 {
            let mut partials: Vec<f64> = (1..=n).map(f64::from).collect();
            let expected = f64::from(n * (n + 1) / 2) + 3.0;
            assert_eq!(finish_sum(&mut partials, &[1.0, 2.0]), expected, "{n}");
        }
    }
}
