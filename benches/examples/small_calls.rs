//! Makes N small-tensor calls, Switchyard's or `ndarray`'s, for instruction and allocation
//! counting (`benches/callgrind.sh small` runs every mode at two N and subtracts):
//!
//! ```text
//! valgrind --tool=callgrind --callgrind-out-file=/dev/null target/release/examples/small_calls switchyard_add_1 100000
//! ```
//!
//! An example rather than a `src/bin` binary so that `ndarray` stays a dev-dependency.

use std::hint::black_box;

use ndarray::Array1;
use switchyard::Tensor;
use switchyard::ops::{add, relu};
// The kernels: named, so that the linker keeps them.
use switchyard_backends as _;

const MODES: &str = "switchyard_add_1, ndarray_add_1, switchyard_add_16, ndarray_add_16, \
                     switchyard_add_1024, ndarray_add_1024, switchyard_relu_1024, \
                     ndarray_relu_1024, switchyard_from_vec_1, ndarray_from_vec_1, \
                     switchyard_from_slice_1 or ndarray_from_slice_1";

fn main() {
    let mut args = std::env::args().skip(1);
    let mode = args.next().unwrap_or_else(|| "switchyard_add_1".to_owned());
    let calls: u64 = args.next().and_then(|n| n.parse().ok()).unwrap_or(100_000);
    let n = if mode.ends_with("_1024") {
        1024
    } else if mode.ends_with("_16") {
        16
    } else {
        1
    };
    let x = Tensor::from_fn(&[n], |i| i as f32);
    let y = Tensor::from_fn(&[n], |i| 2.0 * i as f32);
    let a = Array1::from_shape_fn(n, |i| i as f32);
    let b = Array1::from_shape_fn(n, |i| 2.0 * i as f32);
    match mode.as_str() {
        "switchyard_add_1" | "switchyard_add_16" => repeat(calls, || {
            black_box(add(black_box(&x), black_box(&y)));
        }),
        "ndarray_add_1" | "ndarray_add_16" | "ndarray_add_1024" => repeat(calls, || {
            black_box(black_box(&a) + black_box(&b));
        }),
        "switchyard_add_1024" => repeat(calls, || {
            black_box(add(black_box(&x), black_box(&y)));
        }),
        // As the peers bench writes ndarray's `relu` (`mapv`, `f32::max`).
        "switchyard_relu_1024" => repeat(calls, || {
            black_box(relu(black_box(&x)));
        }),
        "ndarray_relu_1024" => repeat(calls, || {
            black_box(black_box(&a).mapv(|v| v.max(0.0)));
        }),
        "switchyard_from_vec_1" => repeat(calls, || {
            black_box(Tensor::from_vec::<f32>(black_box(vec![1.0]), &[1]).ok());
        }),
        "ndarray_from_vec_1" => repeat(calls, || {
            black_box(Array1::from_vec(black_box(vec![1.0f32])));
        }),
        // A tensor made from borrowed data (copied in): no `Vec` to allocate and free first.
        "switchyard_from_slice_1" => repeat(calls, || {
            black_box(Tensor::from_slice::<f32>(black_box(&[1.0]), &[1]).ok());
        }),
        "ndarray_from_slice_1" => repeat(calls, || {
            black_box(ndarray::ArrayView1::from(black_box(&[1.0f32])).to_owned());
        }),
        other => {
            eprintln!("unknown mode `{other}`; expected {MODES}");
            std::process::exit(2);
        }
    }
}

fn repeat(calls: u64, mut call: impl FnMut()) {
    for _ in 0..calls {
        call();
    }
}
