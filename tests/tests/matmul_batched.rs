//! `matmul` of 1-D and batched operands, as PyTorch's `matmul` takes them (result shapes from
//! PyTorch 2.x, written above each case), against a plain loop; on both CPU backends, with
//! gradcheck of every form.

use switchyard::autograd::gradcheck;
use switchyard::ops::{self, matmul};
use switchyard::{DType, DispatchKeySet, Tensor};
use switchyard_backends as _; // links the CPU kernels

/// `f64` values `1, 2, 3, …` scaled, shape `shape`.
fn counting(shape: &[usize], scale: f64) -> Tensor {
    Tensor::from_fn(shape, |i| (i as f64 + 1.0) * scale)
}

/// The product by definition: each operand made a stack of matrices (a 1-D `x` a row, a 1-D `y`
/// a column), the batch broadcast, then the dropped extent-1 dimensions dropped.
fn by_loops(x: &Tensor, y: &Tensor, out_shape: &[usize]) -> Vec<f64> {
    let (xs, ys) = (x.shape().to_vec(), y.shape().to_vec());
    let xm = if xs.len() == 1 {
        vec![1, xs[0]]
    } else {
        xs.clone()
    };
    let ym = if ys.len() == 1 {
        vec![ys[0], 1]
    } else {
        ys.clone()
    };
    let (m, k, n) = (xm[xm.len() - 2], xm[xm.len() - 1], ym[ym.len() - 1]);
    let (xb, yb) = (&xm[..xm.len() - 2], &ym[..ym.len() - 2]);
    let rank = xb.len().max(yb.len());
    let pad = |b: &[usize]| [vec![1; rank - b.len()], b.to_vec()].concat();
    let (xb, yb) = (pad(xb), pad(yb));
    let batch: Vec<usize> = xb.iter().zip(&yb).map(|(&a, &b)| a.max(b)).collect();
    let (xv, yv) = (x.to_vec::<f64>(), y.to_vec::<f64>());
    let count: usize = batch.iter().product();
    let mut out = Vec::new();
    for b in 0..count {
        // The batch index, then each operand's (extent 1 stays at 0).
        let mut rest = b;
        let mut index = vec![0; rank];
        for d in (0..rank).rev() {
            index[d] = rest % batch[d];
            rest /= batch[d];
        }
        let flat = |dims: &[usize]| {
            dims.iter()
                .zip(&index)
                .fold(0, |acc, (&e, &i)| acc * e + if e == 1 { 0 } else { i })
        };
        let (xo, yo) = (flat(&xb) * m * k, flat(&yb) * k * n);
        for i in 0..m {
            for j in 0..n {
                out.push(
                    (0..k)
                        .map(|p| xv[xo + i * k + p] * yv[yo + p * n + j])
                        .sum(),
                );
            }
        }
    }
    assert_eq!(out.len(), out_shape.iter().product::<usize>());
    out
}

/// `(x shape, y shape, PyTorch's result shape)`.
const CASES: [(&[usize], &[usize], &[usize]); 8] = [
    // torch.matmul(torch.ones(3), torch.ones(3)).shape -> torch.Size([])
    (&[3], &[3], &[]),
    // torch.matmul(torch.ones(2, 3), torch.ones(3)).shape -> torch.Size([2])
    (&[2, 3], &[3], &[2]),
    // torch.matmul(torch.ones(3), torch.ones(3, 4)).shape -> torch.Size([4])
    (&[3], &[3, 4], &[4]),
    // torch.matmul(torch.ones(2, 2, 3), torch.ones(2, 3, 4)).shape -> torch.Size([2, 2, 4])
    (&[2, 2, 3], &[2, 3, 4], &[2, 2, 4]),
    // torch.matmul(torch.ones(2, 1, 2, 3), torch.ones(5, 3, 4)).shape -> [2, 5, 2, 4]
    (&[2, 1, 2, 3], &[5, 3, 4], &[2, 5, 2, 4]),
    // torch.matmul(torch.ones(3), torch.ones(2, 3, 4)).shape -> torch.Size([2, 4])
    (&[3], &[2, 3, 4], &[2, 4]),
    // torch.matmul(torch.ones(2, 2, 3), torch.ones(3)).shape -> torch.Size([2, 2])
    (&[2, 2, 3], &[3], &[2, 2]),
    // torch.matmul(torch.ones(3, 2, 3), torch.ones(3, 2)).shape -> torch.Size([3, 2, 2])
    (&[3, 2, 3], &[3, 2], &[3, 2, 2]),
];

#[test]
fn one_dimensional_and_batched_operands_multiply_as_in_pytorch() {
    for (xs, ys, want_shape) in CASES {
        let (x, y) = (counting(xs, 0.5), counting(ys, 0.25));
        let want = by_loops(&x, &y, want_shape);
        let naive = matmul::redispatch(DispatchKeySet::CPU_NAIVE, &x, &y).unwrap();
        assert_eq!(naive.shape(), want_shape, "{xs:?} @ {ys:?}");
        assert_eq!(naive.to_vec::<f64>(), want, "{xs:?} @ {ys:?} naive");
        // In f32: the SIMD kernels' products, one per matrix of the batch.
        let (x32, y32) = (ops::to_dtype(&x, DType::F32), ops::to_dtype(&y, DType::F32));
        let got = ops::matmul(&x32, &y32);
        assert_eq!(got.shape(), want_shape, "{xs:?} @ {ys:?} f32");
        let got = got.to_vec::<f32>();
        for (g, w) in got.iter().zip(&want) {
            assert!((f64::from(*g) - w).abs() <= 1e-5 * w.abs(), "{g} vs {w}");
        }
    }
}

#[test]
fn transposed_and_broadcast_views_are_read_through_their_strides() {
    // A batch of transposed matrices, and a batch dimension of stride 0.
    let x = ops::transpose(&counting(&[2, 3, 2], 1.0), 1, 2); // [2, 2, 3]
    let y = ops::expand(&counting(&[1, 3, 2], 1.0), &[2, 3, 2]); // batch stride 0
    let want = by_loops(&ops::contiguous(&x), &ops::contiguous(&y), &[2, 2, 2]);
    for got in [
        ops::matmul(&x, &y),
        matmul::redispatch(DispatchKeySet::CPU_NAIVE, &x, &y).unwrap(),
    ] {
        assert_eq!(got.shape(), [2, 2, 2]);
        assert_eq!(got.to_vec::<f64>(), want);
    }
}

#[test]
fn shape_errors_name_matmul_and_both_shapes() {
    for (xs, ys) in [
        (&[][..], &[3][..]),
        (&[2, 3][..], &[4][..]),
        (&[2, 2, 3][..], &[3, 3, 4][..]),
    ] {
        let error = ops::try_matmul(&counting(xs, 1.0), &counting(ys, 1.0))
            .unwrap_err()
            .to_string();
        assert!(
            error.contains("matmul") && error.contains(&format!("{xs:?} and {ys:?}")),
            "{error}"
        );
    }
}

#[test]
fn gradcheck_of_every_form() {
    for (xs, ys, _) in CASES {
        let (mut x, mut y) = (counting(xs, 0.1), counting(ys, -0.2));
        x.requires_grad_(true);
        y.requires_grad_(true);
        gradcheck(|t| ops::try_matmul(&t[0], &t[1]), &[x, y])
            .unwrap_or_else(|e| panic!("{xs:?} @ {ys:?}: {e}"));
    }
}
