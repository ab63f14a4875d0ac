//! A live runtime registration: the guard whose drop undoes it.
//!
//! It sits below everything that registers: each kind of registration (an op's kernel or
//! fallthrough, a fallback) says how it is undone by implementing [`Undo`].

use std::fmt;

/// How a kind of runtime registration is undone.
pub(crate) trait Undo: Sync {
    /// Removes the registration `id` and recomputes the tables it affected, under the global
    /// registration lock.
    fn undo(&'static self, id: u64);

    /// What the registration concerns, for `Debug`: the op's name, or `(fallback)`.
    fn describe(&self) -> &'static str;
}

/// A live runtime registration. Dropping it undoes exactly that registration and recomputes the
/// affected tables; [`Registration::keep`] makes it permanent.
#[must_use = "dropping a `Registration` undoes it at once; bind it (`let _kernel = …`) or `keep()` it"]
pub struct Registration {
    id: u64,
    /// `None` once kept: nothing left to undo.
    target: Option<&'static dyn Undo>,
}

impl Registration {
    /// The guard of registration `id`, which `target` undoes.
    pub(crate) fn new(id: u64, target: &'static dyn Undo) -> Self {
        Registration {
            id,
            target: Some(target),
        }
    }

    /// Makes the registration permanent: it is never undone.
    pub fn keep(mut self) {
        self.target = None;
    }
}

impl Drop for Registration {
    fn drop(&mut self) {
        if let Some(target) = self.target {
            target.undo(self.id);
        }
    }
}

impl fmt::Debug for Registration {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let target = self.target.map_or("(kept)", |t| t.describe());
        write!(f, "Registration({target} #{})", self.id)
    }
}
