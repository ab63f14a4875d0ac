//! Binary ops and comparisons where one operand is broadcast take a fast path on the CPU (the
//! contiguous side in runs, each paired with the broadcast side's one run:
//! `HostView::repeated_block`). Its results must equal the element-by-element ones: each case
//! here is checked against values computed from both operands made contiguous first.

use switchyard::ops::{self, add, contiguous, div, gt, mul, sub};
use switchyard::{DispatchKey, Tensor, exclude};
use switchyard_backends as _;

fn tensor(shape: &[usize], seed: f32) -> Tensor {
    Tensor::from_fn(shape, |i| (i as f32 * 0.37 + seed).sin() * 3.0)
}

/// `x op y` against the same op on contiguous copies broadcast by hand.
fn check(x: &Tensor, y: &Tensor) {
    let (views, shape) = switchyard::rules::broadcast_all("test", &[x, y]).unwrap();
    let xs = contiguous(&views[0]).to_vec::<f32>();
    let ys = contiguous(&views[1]).to_vec::<f32>();
    type Case = (
        &'static str,
        fn(&Tensor, &Tensor) -> Tensor,
        fn(f32, f32) -> f32,
    );
    let cases: [Case; 4] = [
        ("add", add, |a, b| a + b),
        ("sub", sub, |a, b| a - b),
        ("mul", mul, |a, b| a * b),
        ("div", div, |a, b| a / b),
    ];
    for (name, op, f) in cases {
        let expected: Vec<f32> = xs.iter().zip(&ys).map(|(&a, &b)| f(a, b)).collect();
        for naive in [false, true] {
            let _naive = naive.then(|| exclude(DispatchKey::CpuSimd));
            let out = op(x, y);
            assert_eq!(out.shape(), shape.as_slice());
            assert_eq!(
                out.to_vec::<f32>(),
                expected,
                "{name} {:?} {:?}",
                x.shape(),
                y.shape()
            );
        }
    }
    let expected: Vec<bool> = xs.iter().zip(&ys).map(|(a, b)| a > b).collect();
    assert_eq!(
        gt(x, y).to_vec::<bool>(),
        expected,
        "gt {:?} {:?}",
        x.shape(),
        y.shape()
    );
}

#[test]
fn broadcast_scalars_rows_and_blocks_equal_elementwise_values() {
    let m = tensor(&[5, 7], 0.1);
    for (x, y) in [
        (m.clone(), Tensor::scalar(2.5)),                   // a 0-d scalar
        (m.clone(), tensor(&[1], 0.2)),                     // a 1-element vector
        (m.clone(), tensor(&[7], 0.3)),                     // a row (the bias add)
        (m.clone(), tensor(&[5, 1], 0.4)),                  // a column: no single run
        (tensor(&[3, 4, 5], 0.5), tensor(&[4, 5], 0.6)),    // a trailing block
        (tensor(&[3, 4, 5], 0.5), tensor(&[4, 1], 0.7)),    // stride 0 inside: element by element
        (tensor(&[2, 3, 1, 6], 0.8), tensor(&[1, 6], 0.9)), // extent-1 dimensions
        (tensor(&[0, 7], 0.1), tensor(&[7], 0.2)),          // empty
        // Runs repeated into a longer pattern (256 elements or more): a scalar over 1000
        // elements, a run of 3 (86 copies: 258), of 7 over a length no pattern divides, of 300.
        (tensor(&[1000], 0.3), Tensor::scalar(-0.25)),
        (tensor(&[333, 3], 0.4), tensor(&[3], 0.5)),
        (tensor(&[101, 7], 0.6), tensor(&[7], 0.7)),
        (tensor(&[4, 300], 0.8), tensor(&[300], 0.9)),
    ] {
        check(&x, &y);
        check(&y, &x);
    }
    // A broadcast operand that is itself a view with an offset: a row narrowed out of a matrix.
    let rows = tensor(&[3, 7], 1.1);
    let row = ops::select(&rows, 0, 2);
    check(&m, &row);
    check(&row, &m);
    // A non-contiguous side meets the element-by-element path.
    let t = ops::transpose(&tensor(&[7, 5], 1.3), 0, 1);
    check(&t, &tensor(&[7], 1.4));
}
