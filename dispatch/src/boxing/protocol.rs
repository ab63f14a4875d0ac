//! What a boxed call checks and takes on its stack: the op's arguments (their number), the
//! written values and the result its kernel left, and the errors that say what was wrong.

use super::stack::Stack;
use super::value::Value;
use crate::error::{DispatchError, ErrorKind};

impl Stack<'_> {
    /// Checks that the stack holds exactly an op's `arity` arguments: what a top-level boxed
    /// call must pass.
    pub(crate) fn check_exact_args(
        &self,
        arity: usize,
        op: &'static str,
        schema: &'static str,
    ) -> Result<(), DispatchError> {
        if self.len() != arity {
            return Err(self.arity_error(arity, op, schema));
        }
        Ok(())
    }

    /// An op's arity error: the stack holds `self.len()` values, not `arity`.
    #[cold]
    #[inline(never)]
    pub(crate) fn arity_error(
        &self,
        arity: usize,
        op: &'static str,
        schema: &'static str,
    ) -> DispatchError {
        DispatchError::new(ErrorKind::BoxedArity {
            op,
            schema,
            expected: arity,
            found: self.len(),
        })
    }

    /// Pops one argument (`Value::None` if there is none), owned.
    #[inline]
    pub(crate) fn pop_arg(&mut self) -> Value {
        match self.pop() {
            Some(value) => value,
            None => Value::None,
        }
    }

    /// Checks that a boxed call of an op with `&mut` parameters left exactly their written
    /// values (`written` names the parameters, in order) and the result.
    #[inline]
    pub(crate) fn check_written(
        &self,
        op: &'static str,
        written: &[&'static str],
    ) -> Result<(), DispatchError> {
        if self.len() != written.len() + 1 {
            return Err(self.written_error(op, written));
        }
        Ok(())
    }

    #[cold]
    #[inline(never)]
    fn written_error(&self, op: &'static str, written: &[&'static str]) -> DispatchError {
        let names: Vec<String> = written.iter().map(|name| format!("`{name}`")).collect();
        let values = |n: usize| if n == 1 { "value" } else { "values" };
        let len = self.len();
        DispatchError::kernel(
            op,
            format!(
                "a boxed kernel left {} {} on the stack; expected {}: the written {} of {}, then the result",
                len,
                values(len),
                written.len() + 1,
                values(written.len()),
                names.join(", "),
            ),
        )
    }

    /// Pops the result a kernel pushed.
    pub(crate) fn pop_result(&mut self, op: &'static str) -> Result<Value, DispatchError> {
        match self.pop() {
            Some(value) => Ok(value),
            None => Err(no_result(op)),
        }
    }
}

#[cold]
#[inline(never)]
fn no_result(op: &'static str) -> DispatchError {
    DispatchError::kernel(op, "a boxed kernel returned without pushing its result")
}
