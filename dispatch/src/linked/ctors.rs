//! The WebAssembly twin of a linkme slice: a list that registrations join from constructors.
//!
//! Each registration's static is followed by a `#[used]` function pointer in `.init_array`
//! (`submit!`, below). rustc (1.85 and later) hands such a pointer to the Wasm linker as a
//! constructor, and wasm-ld calls every constructor from `__wasm_call_ctors`: before `main` in a
//! command (a `wasm32-wasip1` binary or test: `_start` calls it first), and at the top of every
//! exported function in a module with no `main` (`wasm32-unknown-unknown`, wasm-bindgen), unless
//! one of its exports calls `__wasm_call_ctors` itself. So by the time any op is called, every
//! registration linked into the module has joined its list; the first read then copies the list
//! into a slice, which table builds read exactly as they read a linkme slice (and sort: the order
//! constructors run in never matters).
//!
//! This is the technique of the `inventory` crate, written here rather than used: inventory keeps
//! one list per Rust *type*, but a list here is per op, and two ops with one signature have one
//! registration type (`KernelRegistration<KernelFn>`), so each op would need a generated newtype
//! and trait impl, and the read side would still collect an iterator into a slice. What inventory
//! does that matters is the `.init_array` static and a guard against constructors that run twice
//! (the linker's "command-style" guess can put them at the top of every export); both are here.
//!
//! Misuse is a clear error, not an empty table: reading a list before the module's constructors
//! ran (an embedder that enters the module without them) panics saying so, and so does a
//! registration that arrives after its list was first read.

use std::fmt;
use std::ops::Deref;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, OnceLock, PoisonError};

/// A list registrations join from constructors; it dereferences to the slice of them, collected
/// at the first read.
pub struct CtorSlice<T: 'static> {
    /// What constructors submitted, in the order they ran.
    submitted: Mutex<Vec<&'static T>>,
    /// The copy every read returns, made at the first read.
    collected: OnceLock<Box<[T]>>,
}

/// Set by this crate's own constructor: proof that the module's constructors ran.
static CONSTRUCTED: AtomicBool = AtomicBool::new(false);

extern "C" fn mark_constructed() {
    CONSTRUCTED.store(true, Ordering::Release);
}

#[allow(unsafe_code)] // `link_section`
#[used]
// SAFETY: `.init_array` holds pointers to `extern "C" fn()` that the linker's
// `__wasm_call_ctors` calls once each, with no arguments: this static is one.
#[unsafe(link_section = ".init_array")]
static MARK_CONSTRUCTED: extern "C" fn() = mark_constructed;

impl<T: 'static> CtorSlice<T> {
    /// An empty list.
    pub const fn new() -> Self {
        CtorSlice {
            submitted: Mutex::new(Vec::new()),
            collected: OnceLock::new(),
        }
    }
}

impl<T: 'static> Default for CtorSlice<T> {
    fn default() -> Self {
        Self::new()
    }
}

impl<T: Copy + Sync + 'static> CtorSlice<T> {
    /// Adds `item`, once: `submitted` is the registration's own flag, so a constructor that runs
    /// again adds nothing. What `submit!`'s constructor calls.
    pub fn submit(&self, item: &'static T, submitted: &AtomicBool) {
        if submitted.swap(true, Ordering::Relaxed) {
            return;
        }
        let mut list = self.lock();
        if self.collected.get().is_some() {
            drop(list);
            late_registration();
        }
        list.push(item);
    }

    /// Every submitted item, in submission order (callers sort).
    fn collected(&self) -> &[T] {
        self.collected.get_or_init(|| {
            if !CONSTRUCTED.load(Ordering::Acquire) {
                constructors_not_run();
            }
            self.lock().iter().map(|item| **item).collect()
        })
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<&'static T>> {
        // A push cannot panic halfway; the list is whole whatever a poisoner did.
        self.submitted
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }
}

impl<T: Copy + Sync + 'static> Deref for CtorSlice<T> {
    type Target = [T];

    fn deref(&self) -> &[T] {
        self.collected()
    }
}

impl<T: 'static> fmt::Debug for CtorSlice<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CtorSlice")
            .field("collected", &self.collected.get().is_some())
            .finish_non_exhaustive()
    }
}

#[cold]
fn constructors_not_run() -> ! {
    panic!(
        "switchyard: registrations were read before the WebAssembly module's constructors ran; \
         an embedder that enters the module other than through `_start` or an export must call \
         its `__wasm_call_ctors` first"
    )
}

#[cold]
fn late_registration() -> ! {
    panic!(
        "switchyard: a registration's constructor ran after its list was first read (an op was \
         called from another constructor?); call ops only once `main` or an export runs"
    )
}

/// Adds the static `$item` to the list `$slice` from a constructor (see the module's docs).
/// Generated code and this crate's `declare_dtype!`/`name_device!` call it on WebAssembly, where
/// a linkme attribute would stand on targets linkme serves.
#[doc(hidden)]
#[macro_export]
macro_rules! __switchyard_submit {
    ($slice:path, $item:ident) => {
        #[allow(unsafe_code)] // `link_section`
        const _: () = {
            static SUBMITTED: ::core::sync::atomic::AtomicBool =
                ::core::sync::atomic::AtomicBool::new(false);

            extern "C" fn submit() {
                $crate::__private_v1::CtorSlice::submit(&$slice, &$item, &SUBMITTED);
            }

            #[used]
            // SAFETY: `.init_array` holds pointers to `extern "C" fn()` that the linker's
            // `__wasm_call_ctors` calls with no arguments: this static is one.
            #[unsafe(link_section = ".init_array")]
            static CONSTRUCTOR: extern "C" fn() = submit;
        };
    };
}
