//! Printing a tensor's values, nested by dimension and summarised as PyTorch does.

use std::fmt;

use crate::element::Element;
use crate::shape::contiguous_strides;
use crate::tensor::Tensor;

/// Above this many elements a tensor is summarised (PyTorch's `threshold`); also the most values
/// a summary prints.
const SUMMARY_THRESHOLD: usize = 1000;
/// Entries shown at each end of a summarised dimension (PyTorch's `edgeitems`).
const EDGE_ITEMS: usize = 3;

/// Prints values nested by dimension, like `[[1, 2], [3, 4]]`; an empty tensor prints `[]`.
///
/// Above 1000 elements, a dimension longer than 6 shows its first and last 3 entries with `...`
/// between, and at most 1000 values are printed in all. A CPU tensor's values are read in place
/// through its strides (a bounded number of them); a device tensor is read back when it has any.
impl fmt::Display for Tensor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.user_dtype().is_some() {
            // Its elements have no printed form here: say so, and show the storage's words.
            write!(f, "({}, stored as {}) ", self.dtype_name(), self.dtype())?;
        }
        if self.numel() == 0 {
            return f.write_str("[]");
        }
        crate::with_element!(self.dtype(), T => print::<T>(self, f))
    }
}

fn print<T: Element>(t: &Tensor, f: &mut fmt::Formatter<'_>) -> fmt::Result {
    const OP: &str = "Tensor::fmt";
    let summarise = t.numel() > SUMMARY_THRESHOLD;
    if t.storage().backend().is_none() {
        let view = match t.host::<T>(OP) {
            Ok(view) => view,
            Err(e) => return write!(f, "<values unavailable: {e}>"),
        };
        let mut printer = Printer {
            values: view.storage(),
            strides: t.strides(),
            summarise,
            budget: SUMMARY_THRESHOLD,
        };
        return printer.write(f, t.shape(), t.storage_offset());
    }
    let values = match t.try_to_vec::<T>() {
        Ok(values) => values,
        Err(e) => return write!(f, "<values unavailable: {e}>"),
    };
    let strides = contiguous_strides(t.shape());
    let mut printer = Printer {
        values: &values,
        strides: &strides,
        summarise,
        budget: SUMMARY_THRESHOLD,
    };
    printer.write(f, t.shape(), 0)
}

/// Writes a non-empty tensor's values: every offset it computes is an element of the view
/// (within the storage, by the tensor's invariants).
struct Printer<'v, T> {
    values: &'v [T],
    strides: &'v [usize],
    summarise: bool,
    /// Values that may still be printed.
    budget: usize,
}

impl<T: Element> Printer<'_, T> {
    /// The sub-tensor of `shape` (the trailing dimensions) that starts at `offset`.
    fn write(&mut self, f: &mut fmt::Formatter<'_>, shape: &[usize], offset: usize) -> fmt::Result {
        let Some((&len, rest)) = shape.split_first() else {
            self.budget -= 1;
            return write!(f, "{}", self.values[offset]);
        };
        let stride = self.strides[self.strides.len() - shape.len()];
        let (head, tail) = if self.summarise && len > 2 * EDGE_ITEMS {
            (EDGE_ITEMS, len - EDGE_ITEMS)
        } else {
            (len, len)
        };
        f.write_str("[")?;
        let mut previous = None;
        for i in (0..head).chain(tail..len) {
            if previous.is_some() {
                f.write_str(", ")?;
            }
            if self.budget == 0 {
                f.write_str("...")?;
                break;
            }
            if previous.is_some_and(|p| p + 1 != i) {
                f.write_str("..., ")?;
            }
            self.write(f, rest, offset + i * stride)?;
            previous = Some(i);
        }
        f.write_str("]")
    }
}
