//! The lists that registrations join at link time: each op's kernels, and the fallbacks, ops,
//! user dtypes and device names of the whole binary. Table builds read them as slices
//! (`&[T]`), whichever form they take:
//!
//! - On the targets `linkme` serves (ELF, Mach-O, PE), a list is a linkme distributed slice: the
//!   linker gathers the elements into one section, and nothing runs before `main`.
//! - On WebAssembly, which linkme does not serve (a Wasm module has no linker-defined section
//!   bounds), a list is a [`CtorSlice`]: each registration adds itself from a constructor that
//!   the linker runs before `main` (`ctors.rs` says how, and why not the `inventory` crate).
//!
//! The element statics are the same on both (the macros emit them once, with linkme's attribute
//! applied only where linkme serves), so what a table is built from does not depend on the target.

#[cfg(target_family = "wasm")]
mod ctors;

#[cfg(target_family = "wasm")]
pub use ctors::CtorSlice;

/// A list registrations join at link time, read as `&[T]` (it dereferences to one).
#[cfg(not(target_family = "wasm"))]
pub type LinkedSlice<T> = linkme::DistributedSlice<[T]>;

/// A list registrations join at link time, read as `&[T]` (it dereferences to one).
#[cfg(target_family = "wasm")]
pub type LinkedSlice<T> = CtorSlice<T>;
