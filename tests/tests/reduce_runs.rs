//! `sum_dim` and `mean_dim` of a contiguous `f32` tensor over a leading or a trailing block of
//! dimensions take a fast path on the CPU (rows added into one row of sums; runs summed in
//! place). It must give the bits of the general path, which walks any layout element by element
//! in the same order: each case is checked against the same values held by a non-contiguous view.

use switchyard::Tensor;
use switchyard::ops::{contiguous, mean_dim, permute, sum_dim};
use switchyard_backends as _;

fn tensor(shape: &[usize], seed: f32) -> Tensor {
    Tensor::from_fn(shape, |i| {
        (i as f32 * 0.37 + seed).sin() * 3.0 + 1e-3 * i as f32
    })
}

/// The values of `x` in a non-contiguous view: `x` reversed in its dimensions, made contiguous,
/// and permuted back.
fn strided_twin(x: &Tensor) -> Tensor {
    let reversed: Vec<isize> = (0..x.dim() as isize).rev().collect();
    let twin = permute(&contiguous(&permute(x, &reversed)), &reversed);
    // (A dimension of extent 1 or 0 makes any strides contiguous: those cases check shapes.)
    assert!(x.dim() < 2 || x.shape().iter().any(|&e| e < 2) || !twin.is_contiguous());
    twin
}

fn bits(x: &Tensor) -> Vec<u32> {
    x.to_vec::<f32>().iter().map(|v| v.to_bits()).collect()
}

#[test]
fn leading_and_trailing_reductions_equal_the_general_path_bit_for_bit() {
    let shapes: [&[usize]; 6] = [
        &[4096, 64],
        &[3, 5, 7],
        &[1, 9],
        &[9, 1],
        &[0, 4],
        &[2, 3, 0],
    ];
    for shape in shapes {
        let x = tensor(shape, 0.5);
        let twin = strided_twin(&x);
        let rank = shape.len() as isize;
        // Every leading block, every trailing block, none, all, and one in the middle.
        let mut dim_sets: Vec<Vec<isize>> = (0..=rank).map(|d| (0..d).collect()).collect();
        dim_sets.extend((0..rank).map(|d| (d..rank).collect::<Vec<_>>()));
        if rank == 3 {
            dim_sets.push(vec![1]);
        }
        for dims in &dim_sets {
            for keepdim in [false, true] {
                let what = format!("{shape:?} dims {dims:?} keepdim {keepdim}");
                let (fast, slow) = (sum_dim(&x, dims, keepdim), sum_dim(&twin, dims, keepdim));
                assert_eq!(fast.shape(), slow.shape(), "sum_dim {what}");
                assert_eq!(bits(&fast), bits(&slow), "sum_dim {what}");
                let (fast, slow) = (mean_dim(&x, dims, keepdim), mean_dim(&twin, dims, keepdim));
                assert_eq!(bits(&fast), bits(&slow), "mean_dim {what}");
            }
        }
    }
}

#[test]
fn a_batch_sum_adds_each_column_in_row_order_in_f64() {
    // Column 0: 1e8, then 1.0 a hundred times, then -1e8: in `f32` the ones would vanish.
    let mut values = vec![0.0f32; 102 * 2];
    values[0] = 1e8;
    for row in 1..101 {
        values[row * 2] = 1.0;
    }
    values[101 * 2] = -1e8;
    let x = Tensor::from_vec(values, &[102, 2]).unwrap();
    assert_eq!(sum_dim(&x, &[0], false).to_vec::<f32>(), [100.0, 0.0]);
}
