//! Switchyard: the typed ops of `switchyard::ops`, dispatched to the best CPU kernel (the SIMD
//! backend's variant for this CPU), on `switchyard_backends`' worker threads.

use switchyard::Tensor;
use switchyard::ops;
// Links the CPU kernels (they register themselves; nothing here names them).
use switchyard_backends as _;

use super::{Prepared, prepared};
use crate::cases::{Case, Op};

pub fn prepare(case: Case, inputs: &[Vec<f32>]) -> Prepared {
    let shape = case.shape();
    let tensor = |values: &Vec<f32>| {
        Tensor::from_vec::<f32>(values.clone(), &shape).expect("the case's shape holds its values")
    };
    let values = |out: &Tensor| out.to_vec::<f32>();
    match case.op {
        Op::Exp | Op::Relu | Op::Sum | Op::Mean => {
            let x = tensor(&inputs[0]);
            let op: fn(&Tensor) -> Tensor = match case.op {
                Op::Exp => ops::exp,
                Op::Relu => ops::relu,
                Op::Sum => ops::sum,
                _ => ops::mean,
            };
            prepared(x, op, values)
        }
        Op::Add | Op::Mul | Op::Matmul => {
            let xy = (tensor(&inputs[0]), tensor(&inputs[1]));
            let op: fn(&(Tensor, Tensor)) -> Tensor = match case.op {
                Op::Add => |(x, y)| ops::add(x, y),
                Op::Mul => |(x, y)| ops::mul(x, y),
                _ => |(x, y)| ops::matmul(x, y),
            };
            prepared(xy, op, values)
        }
    }
}

pub fn threads() -> String {
    switchyard_backends::num_threads().to_string()
}
