//! candle (`candle-core`, CPU device, default features): its tensor methods. Elementwise ops of
//! 64K elements or more run on its own spinning "barrier pool", `matmul` on `gemm` with rayon's
//! global pool; `sum_all` runs on the calling thread, and `mean_all` is `sum_all` then a division
//! (a second op), as candle writes it. Both pools take their size at first use, from
//! `CANDLE_NUM_THREADS` / `RAYON_NUM_THREADS` or the physical cores, which is why each thread
//! setting runs in its own process (see `threads.rs`).

use candle_core::{Device, Tensor};

use super::{Prepared, prepared};
use crate::cases::{Case, Op};

pub fn prepare(case: Case, inputs: &[Vec<f32>]) -> Prepared {
    let shape = case.shape();
    let tensor = |values: &Vec<f32>| {
        Tensor::from_vec(values.clone(), shape.as_slice(), &Device::Cpu)
            .expect("the case's shape holds its values")
    };
    let values = |out: &Tensor| {
        out.flatten_all()
            .and_then(|flat| flat.to_vec1::<f32>())
            .expect("an f32 CPU tensor reads back")
    };
    // candle's ops return `Result`; a failure here is a broken benchmark, so it panics.
    match case.op {
        Op::Exp | Op::Relu | Op::Sum | Op::Mean => {
            let x = tensor(&inputs[0]);
            let op: fn(&Tensor) -> Tensor = match case.op {
                Op::Exp => |x| x.exp().unwrap(),
                Op::Relu => |x| x.relu().unwrap(),
                Op::Sum => |x| x.sum_all().unwrap(),
                _ => |x| x.mean_all().unwrap(),
            };
            prepared(x, op, values)
        }
        Op::Add | Op::Mul | Op::Matmul => {
            let xy = (tensor(&inputs[0]), tensor(&inputs[1]));
            let op: fn(&(Tensor, Tensor)) -> Tensor = match case.op {
                Op::Add => |(x, y)| x.add(y).unwrap(),
                Op::Mul => |(x, y)| x.mul(y).unwrap(),
                _ => |(x, y)| x.matmul(y).unwrap(),
            };
            prepared(xy, op, values)
        }
    }
}

/// The elementwise pool's threads (its workers and the caller) and `matmul`'s.
pub fn threads() -> String {
    let elementwise = candle_core::utils::barrier_pool().n_workers() + 1;
    let matmul = candle_core::utils::get_num_threads();
    if elementwise == matmul {
        elementwise.to_string()
    } else {
        format!("{elementwise} (matmul {matmul})")
    }
}
