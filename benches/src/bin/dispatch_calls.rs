//! Makes N calls of a trivial op (`pick`, `ranks`, or `typed_ranks`, whose arguments carry an
//! `f32` dtype bit), dispatched or direct, for instruction counting:
//!
//! ```text
//! valgrind --tool=callgrind --callgrind-out-file=/dev/null target/release/dispatch_calls pick_dispatched 1000000
//! ```
//!
//! `benches/callgrind.sh` runs it at two N for every mode and prints instructions per call; the
//! difference of two N cancels start-up and table-build costs.

use std::hint::black_box;

use switchyard::Tensor;
use switchyard_benches::{
    Typed, pick, pick_direct, ranks, ranks_direct, typed_ranks, typed_ranks_direct,
};

fn main() {
    let mut args = std::env::args().skip(1);
    let mode = args.next().unwrap_or_else(|| "pick_dispatched".to_owned());
    let calls: u64 = args
        .next()
        .and_then(|n| n.parse().ok())
        .unwrap_or(1_000_000);
    let x = Tensor::vector(&[1.0, 2.0]);
    let y = Tensor::vector(&[3.0, 4.0]);
    match mode.as_str() {
        "pick_direct" => repeat(calls, || drop(pick_direct(black_box(&x), black_box(&y)))),
        "pick_dispatched" => repeat(calls, || drop(pick(black_box(&x), black_box(&y)))),
        "ranks_direct" => repeat(calls, || {
            black_box(ranks_direct(black_box(&x), black_box(&y)));
        }),
        "ranks_dispatched" => repeat(calls, || {
            black_box(ranks(black_box(&x), black_box(&y)));
        }),
        // Arguments that carry a dtype bit (`f32`): the typed hot path, column lookup included.
        "typed_ranks_direct" => {
            let (x, y) = (Typed(x.clone()), Typed(y.clone()));
            repeat(calls, || {
                black_box(typed_ranks_direct(black_box(&x), black_box(&y)));
            })
        }
        "typed_ranks_dispatched" => {
            let (x, y) = (Typed(x.clone()), Typed(y.clone()));
            repeat(calls, || {
                black_box(typed_ranks(black_box(&x), black_box(&y)));
            })
        }
        "ranks_one_layer" => {
            let _layer = switchyard::include(switchyard::DispatchKey::Custom1);
            repeat(calls, || {
                black_box(ranks(black_box(&x), black_box(&y)));
            })
        }
        "pick_boxed_fallback" => pick_boxed_fallback(calls, &x, &y),
        "ranks_boxed_fallback" => {
            let _boxed = switchyard::include(switchyard::DispatchKey::Custom2);
            repeat(calls, || {
                black_box(ranks(black_box(&x), black_box(&y)));
            })
        }
        other => {
            eprintln!(
                "unknown mode `{other}`; expected pick_direct, pick_dispatched, ranks_direct, ranks_dispatched, \
                 typed_ranks_direct, typed_ranks_dispatched, ranks_one_layer, ranks_boxed_fallback or \
                 pick_boxed_fallback"
            );
            std::process::exit(2);
        }
    }
}

/// `pick` through the boxed fallback (a tensor result). Out of line, so that this mode's code
/// leaves `main`'s other loops as they were.
#[inline(never)]
fn pick_boxed_fallback(calls: u64, x: &Tensor, y: &Tensor) {
    let _boxed = switchyard::include(switchyard::DispatchKey::Custom2);
    repeat(calls, || drop(pick(black_box(x), black_box(y))))
}

fn repeat(calls: u64, mut call: impl FnMut()) {
    // The first call builds the table; the two-N difference cancels it anyway.
    for _ in 0..calls {
        call();
    }
}
