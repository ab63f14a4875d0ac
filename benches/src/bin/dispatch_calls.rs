//! Makes N calls of the trivial op, dispatched or direct, for instruction counting:
//!
//! ```text
//! valgrind --tool=callgrind --callgrind-out-file=/dev/null target/release/dispatch_calls dispatched 1000000
//! ```
//!
//! `benches/callgrind.sh` runs it at two N for both modes and prints instructions per call; the
//! difference of two N cancels start-up and table-build costs.

use std::hint::black_box;

use switchyard::Tensor;
use switchyard_benches::{pick, pick_direct};

fn main() {
    let mut args = std::env::args().skip(1);
    let mode = args.next().unwrap_or_else(|| "dispatched".to_owned());
    let calls: u64 = args
        .next()
        .and_then(|n| n.parse().ok())
        .unwrap_or(1_000_000);
    let x = Tensor::vector(&[1.0, 2.0]);
    let y = Tensor::vector(&[3.0, 4.0]);
    let call: fn(&Tensor, &Tensor) -> Tensor = match mode.as_str() {
        "direct" => |x, y| pick_direct(black_box(x), black_box(y)),
        "dispatched" => |x, y| pick(black_box(x), black_box(y)),
        other => {
            eprintln!("unknown mode `{other}`; expected `direct` or `dispatched`");
            std::process::exit(2);
        }
    };
    // Build the table outside the counted difference (it is built at the first call anyway).
    drop(call(&x, &y));
    for _ in 0..calls {
        drop(black_box(call(&x, &y)));
    }
}
