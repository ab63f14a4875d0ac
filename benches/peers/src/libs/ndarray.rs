//! ndarray, which is single-threaded by itself: its plain forms (`&x + &y`, `mapv`, `sum`,
//! `mean`, `dot`), and the parallel forms its `rayon` feature offers (on rayon's global pool),
//! measured as a column of their own at default threads. `dot` has no parallel form here:
//! ndarray threads it only through `matrixmultiply`'s `threading` feature, which would thread
//! Switchyard's `matmul` (the same crate) too.

use ndarray::parallel::prelude::*;
use ndarray::{Array1, Array2, Axis, Zip};

use super::{Prepared, prepared};
use crate::cases::{Case, Op};

/// The parallel sum's chunks: each is summed by ndarray's own unrolled `sum`, whose lanes
/// vectorise; a `par_iter().sum()` over elements would add one `f32` at a time.
const SUM_CHUNK: usize = 1 << 14;

/// A binary op on two arrays of one type, making a third.
type Binary<A> = fn(&(A, A)) -> A;

fn vector(values: &[f32]) -> Array1<f32> {
    Array1::from_vec(values.to_vec())
}

fn values(out: &Array1<f32>) -> Vec<f32> {
    out.to_vec()
}

fn scalar(out: &f32) -> Vec<f32> {
    vec![*out]
}

/// The plain form: one thread.
pub fn prepare(case: Case, inputs: &[Vec<f32>]) -> Prepared {
    match case.op {
        Op::Add | Op::Mul => {
            let op: Binary<Array1<f32>> = match case.op {
                Op::Add => |(x, y)| x + y,
                _ => |(x, y)| x * y,
            };
            prepared((vector(&inputs[0]), vector(&inputs[1])), op, values)
        }
        Op::Exp | Op::Relu => {
            let op: fn(&Array1<f32>) -> Array1<f32> = match case.op {
                Op::Exp => |x| x.mapv(f32::exp),
                _ => |x| x.mapv(|v| v.max(0.0)),
            };
            prepared(vector(&inputs[0]), op, values)
        }
        Op::Sum | Op::Mean => {
            let op: fn(&Array1<f32>) -> f32 = match case.op {
                Op::Sum => |x| x.sum(),
                _ => |x| x.mean().expect("cases are not empty"),
            };
            prepared(vector(&inputs[0]), op, scalar)
        }
        Op::Matmul => {
            let n = case.size;
            let matrix = |values: &Vec<f32>| {
                Array2::from_shape_vec((n, n), values.clone()).expect("n² values")
            };
            let op: Binary<Array2<f32>> = |(x, y)| x.dot(y);
            let values = |out: &Array2<f32>| out.iter().copied().collect();
            prepared((matrix(&inputs[0]), matrix(&inputs[1])), op, values)
        }
    }
}

/// The rayon form, where ndarray has one (not for `matmul`).
pub fn prepare_parallel(case: Case, inputs: &[Vec<f32>]) -> Option<Prepared> {
    Some(match case.op {
        Op::Add | Op::Mul => {
            let op: Binary<Array1<f32>> = match case.op {
                Op::Add => |(x, y)| Zip::from(x).and(y).par_map_collect(|x, y| x + y),
                _ => |(x, y)| Zip::from(x).and(y).par_map_collect(|x, y| x * y),
            };
            prepared((vector(&inputs[0]), vector(&inputs[1])), op, values)
        }
        Op::Exp | Op::Relu => {
            let op: fn(&Array1<f32>) -> Array1<f32> = match case.op {
                Op::Exp => |x| Zip::from(x).par_map_collect(|x| x.exp()),
                _ => |x| Zip::from(x).par_map_collect(|x| x.max(0.0)),
            };
            prepared(vector(&inputs[0]), op, values)
        }
        Op::Sum | Op::Mean => {
            let op: fn(&Array1<f32>) -> f32 = match case.op {
                Op::Sum => parallel_sum,
                _ => |x| parallel_sum(x) / x.len() as f32,
            };
            prepared(vector(&inputs[0]), op, scalar)
        }
        Op::Matmul => return None,
    })
}

fn parallel_sum(x: &Array1<f32>) -> f32 {
    x.axis_chunks_iter(Axis(0), SUM_CHUNK)
        .into_par_iter()
        .map(|chunk| chunk.sum())
        .sum()
}

/// rayon's global pool, which the parallel forms run on.
pub fn threads() -> String {
    rayon::current_num_threads().to_string()
}
