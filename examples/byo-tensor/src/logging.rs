//! A mode of the library's own: a boxed fallback that logs every op call, whatever the op, and
//! redispatches below its key.

use std::cell::RefCell;

use switchyard::{DispatchKey, DispatchKeySet, OpHandle, Result, Stack, fallback};

/// The key the logging fallback serves: a user mode key, above every backend, so it sees each
/// op as the caller called it.
pub const LOGGING: DispatchKey = DispatchKey::Mode1;

thread_local! {
    /// The calls of the innermost [`logged`] on this thread.
    static LOG: RefCell<Option<Vec<String>>> = const { RefCell::new(None) };
}

/// Logs `byo::add(NdTensor[2]@host, NdTensor[2]@host) -> NdTensor[2]@host`, or the error.
#[fallback(key = crate::logging::LOGGING)]
fn log_call(op: &OpHandle, keys: DispatchKeySet, stack: &mut Stack<'_>) -> Result<()> {
    let inputs: Vec<String> = stack
        .top(op.arity())
        .iter()
        .map(ToString::to_string)
        .collect();
    let outcome = op.redispatch_boxed(keys.below(LOGGING), stack);
    let result = match &outcome {
        Ok(()) => stack
            .top(1)
            .first()
            .map(ToString::to_string)
            .unwrap_or_default(),
        Err(error) => format!("error: {error}"),
    };
    LOG.with(|log| {
        if let Some(log) = log.borrow_mut().as_mut() {
            log.push(format!("{}({}) -> {result}", op.name(), inputs.join(", ")));
        }
    });
    outcome
}

/// Runs `f` with every op call on this thread logged, and returns its result and the log.
pub fn logged<R>(f: impl FnOnce() -> R) -> (R, Vec<String>) {
    let scope = Scope {
        outer: LOG.with(|log| log.borrow_mut().replace(Vec::new())),
    };
    let value = {
        let _logging = switchyard::include(LOGGING);
        f()
    };
    let calls = LOG.with(|log| log.borrow_mut().take()).unwrap_or_default();
    drop(scope);
    (value, calls)
}

/// Puts back the enclosing `logged`'s log, even if `f` panics.
struct Scope {
    outer: Option<Vec<String>>,
}

impl Drop for Scope {
    fn drop(&mut self) {
        let outer = self.outer.take();
        LOG.with(|log| *log.borrow_mut() = outer);
    }
}
