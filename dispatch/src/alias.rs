//! Alias keys and the key a registration names.
//!
//! A runtime [`DispatchKey`] is one slot of every op's table. An [`AliasKey`] stands for several
//! slots at once and only exists at registration: the table build (`resolve.rs`) decides which slots
//! an alias kernel fills. [`KernelKey`] is what a registration names: either.

use std::fmt;

use crate::key::{DispatchKey, DispatchKeySet};

/// A key that stands for several runtime keys; kernels may be registered for it, calls never carry
/// it.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Debug)]
pub enum AliasKey {
    /// Every per-backend autograd key. A kernel here serves autograd for every backend that has
    /// no autograd kernel of its own (and for which the op's composite does not apply).
    Autograd,
    /// The op's composite body: a decomposition into other ops, used for every backend without a
    /// kernel, and for autograd where the backend has no kernel (so autograd flows through the
    /// decomposition). Registering here is the same as giving the op a body.
    CompositeImplicit,
    /// A decomposition that serves backend keys only (it is not differentiated through).
    CompositeExplicit,
}

impl AliasKey {
    /// The alias's name as written in `key = …`.
    pub const fn name(self) -> &'static str {
        match self {
            AliasKey::Autograd => "Autograd",
            AliasKey::CompositeImplicit => "CompositeImplicit",
            AliasKey::CompositeExplicit => "CompositeExplicit",
        }
    }

    /// The runtime keys this alias can fill.
    pub const fn keys(self) -> DispatchKeySet {
        match self {
            AliasKey::Autograd => DispatchKeySet::AUTOGRAD,
            AliasKey::CompositeImplicit => DispatchKeySet::AUTOGRAD.union(DispatchKeySet::BACKENDS),
            AliasKey::CompositeExplicit => DispatchKeySet::BACKENDS,
        }
    }
}

impl fmt::Display for AliasKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The key a kernel is registered for: one runtime key, or an alias.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Debug)]
pub enum KernelKey {
    /// Exactly this runtime key.
    Key(DispatchKey),
    /// Whichever runtime keys the alias fills.
    Alias(AliasKey),
}

impl KernelKey {
    /// The key's name as written in `key = …`.
    pub const fn name(self) -> &'static str {
        match self {
            KernelKey::Key(key) => key.name(),
            KernelKey::Alias(alias) => alias.name(),
        }
    }

    /// The runtime keys this key covers.
    pub const fn keys(self) -> DispatchKeySet {
        match self {
            KernelKey::Key(key) => key.set(),
            KernelKey::Alias(alias) => alias.keys(),
        }
    }

    /// Whether this is one of the library's own keys (see [`DispatchKey::is_builtin`]).
    pub const fn is_builtin(self) -> bool {
        match self {
            KernelKey::Key(key) => key.is_builtin(),
            KernelKey::Alias(_) => false,
        }
    }

    /// The runtime key, if this is not an alias.
    pub const fn runtime(self) -> Option<DispatchKey> {
        match self {
            KernelKey::Key(key) => Some(key),
            KernelKey::Alias(_) => None,
        }
    }
}

impl From<DispatchKey> for KernelKey {
    fn from(key: DispatchKey) -> Self {
        KernelKey::Key(key)
    }
}

/// A registration's key equals a runtime key when it names exactly that key.
impl PartialEq<DispatchKey> for KernelKey {
    fn eq(&self, key: &DispatchKey) -> bool {
        *self == KernelKey::Key(*key)
    }
}

impl From<AliasKey> for KernelKey {
    fn from(alias: AliasKey) -> Self {
        KernelKey::Alias(alias)
    }
}

impl fmt::Display for KernelKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl DispatchKeySet {
    /// The keys of this set strictly below every key that `key` covers: what a kernel registered
    /// at `key` passes on when it redispatches (`keys.below(DispatchKey::Tracing)`,
    /// `keys.below(AliasKey::Autograd)`). The set's dtype bits are kept, so a redispatch reads the
    /// same column of the op's table as the call did.
    #[inline(always)]
    #[must_use]
    pub fn below(self, key: impl Into<KernelKey>) -> DispatchKeySet {
        let lowest = key.into().keys().bits().trailing_zeros();
        let kept = ((1u64 << lowest) - 1) | !DispatchKeySet::all().bits();
        DispatchKeySet::from_bits_retain(self.bits() & kept)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn below_an_alias_is_below_all_of_its_keys() {
        let all = DispatchKeySet::all();
        assert_eq!(
            all.below(AliasKey::Autograd),
            all.below(DispatchKey::AutogradCpu)
        );
        assert_eq!(
            all.below(DispatchKey::AutogradCpu),
            DispatchKeySet::from_bits_retain((1 << DispatchKey::AutogradCpu.index()) - 1)
        );
        assert_eq!(all.below(DispatchKey::CpuNaive), DispatchKeySet::EMPTY);
    }
}
