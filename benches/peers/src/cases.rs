//! What is measured: each op at each size, its inputs, and the work one call does (bytes moved
//! or floating-point operations), from which the tables' GB/s and GFLOP/s come.

use std::fmt;

use serde::{Deserialize, Serialize};

use crate::data;

/// An op, measured in every library under its ordinary name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Op {
    Add,
    Mul,
    Exp,
    Relu,
    Sum,
    Mean,
    Matmul,
}

impl Op {
    /// Every op, in the tables' order.
    pub const ALL: [Op; 7] = [
        Op::Add,
        Op::Mul,
        Op::Exp,
        Op::Relu,
        Op::Sum,
        Op::Mean,
        Op::Matmul,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Op::Add => "add",
            Op::Mul => "mul",
            Op::Exp => "exp",
            Op::Relu => "relu",
            Op::Sum => "sum",
            Op::Mean => "mean",
            Op::Matmul => "matmul",
        }
    }

    pub fn parse(name: &str) -> Result<Op, String> {
        Op::ALL
            .into_iter()
            .find(|op| op.name() == name)
            .ok_or_else(|| {
                let names: Vec<_> = Op::ALL.iter().map(|op| op.name()).collect();
                format!("unknown op `{name}`; expected one of: {}", names.join(", "))
            })
    }

    /// The sizes it is measured at: elements for elementwise ops and reductions, the side `n`
    /// of the square matrices for `matmul`.
    pub fn sizes(self) -> &'static [usize] {
        match self {
            Op::Matmul => &[64, 256, 1024],
            _ => &[1 << 10, 1 << 16, 1 << 20, 1 << 24],
        }
    }

    /// Operands read: two for `add`, `mul` and `matmul`.
    pub fn arity(self) -> usize {
        match self {
            Op::Add | Op::Mul | Op::Matmul => 2,
            Op::Exp | Op::Relu | Op::Sum | Op::Mean => 1,
        }
    }
}

impl fmt::Display for Op {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// One op at one size.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Case {
    pub op: Op,
    pub size: usize,
}

/// What one call does, for throughput.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Work {
    /// Bytes read plus bytes written (the output's included: every library writes it).
    Bytes(f64),
    /// Floating-point operations (`2n³` for an `n²` `matmul`).
    Flops(f64),
}

impl Case {
    /// Every case of `only` (or of every op), in the tables' order.
    pub fn all(only: Option<Op>) -> Vec<Case> {
        Op::ALL
            .into_iter()
            .filter(|op| only.is_none_or(|only| only == *op))
            .flat_map(|op| op.sizes().iter().map(move |&size| Case { op, size }))
            .collect()
    }

    /// The shape of each operand.
    pub fn shape(self) -> Vec<usize> {
        match self.op {
            Op::Matmul => vec![self.size, self.size],
            _ => vec![self.size],
        }
    }

    /// Elements in each operand.
    pub fn len(self) -> usize {
        self.shape().iter().product()
    }

    /// The size as the tables write it: `1K`, `16M`, `256²`.
    pub fn size_label(self) -> String {
        match self.op {
            Op::Matmul => format!("{}²", self.size),
            _ if self.size >= 1 << 20 => format!("{}M", self.size >> 20),
            _ if self.size >= 1 << 10 => format!("{}K", self.size >> 10),
            _ => self.size.to_string(),
        }
    }

    pub fn work(self) -> Work {
        let f32_bytes = |values: usize| (values * size_of::<f32>()) as f64;
        match self.op {
            Op::Matmul => Work::Flops(2.0 * (self.size as f64).powi(3)),
            Op::Add | Op::Mul => Work::Bytes(f32_bytes(3 * self.len())),
            Op::Exp | Op::Relu => Work::Bytes(f32_bytes(2 * self.len())),
            Op::Sum | Op::Mean => Work::Bytes(f32_bytes(self.len())),
        }
    }

    /// The operands' values, shared by every library (each copies them into its own tensor).
    pub fn inputs(self) -> Vec<Vec<f32>> {
        data::SEEDS[..self.op.arity()]
            .iter()
            .map(|&seed| data::uniform(seed, self.len()))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cases_cover_every_op_and_size_once() {
        assert_eq!(Case::all(None).len(), 6 * 4 + 3);
        let sizes: Vec<_> = Case::all(Some(Op::Exp))
            .into_iter()
            .map(Case::size_label)
            .collect();
        assert_eq!(sizes, ["1K", "64K", "1M", "16M"]);
        assert_eq!(Case::all(Some(Op::Matmul))[1].size_label(), "256²");
    }

    #[test]
    fn unknown_ops_are_refused_with_the_choices() {
        assert_eq!(Op::parse("relu"), Ok(Op::Relu));
        let err = Op::parse("sub").unwrap_err();
        assert!(err.contains("`sub`") && err.contains("add, mul, exp, relu, sum, mean, matmul"));
    }
}
