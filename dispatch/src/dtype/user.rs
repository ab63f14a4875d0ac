//! User dtypes, dtypes from any crate: four slots the engine leaves to users, as it leaves the backend keys
//! `PrivateUse1..3` to their devices.
//!
//! A crate claims a slot and names it with [`declare_dtype!`](crate::declare_dtype) (a name,
//! bytes per element, a [`DTypeKind`]); its tensors carry the slot's bit
//! ([`UserDType::key_bit`], bits 52..55 of a [`DispatchKeySet`]); its kernels serve it with
//! `dtypes = [COMPLEX64]` (the slot's constant). Each slot has its own column in every op's
//! table, resolved and falling through like a built-in dtype's; dumps, errors and the trace print
//! the declared name.
//!
//! **Promotion.** The engine promotes nothing, for user dtypes as for built-in ones: a call whose
//! arguments carry a user dtype and any other dtype (built-in, or another user dtype) reads the
//! `mixed` column, where only a kernel that declares `mixed` (or no `dtypes`) runs. So a user
//! dtype meets another dtype only in code its library wrote; without such a kernel the call is a
//! missing-kernel error naming both dtypes. [`DType::promote`](crate::DType::promote) knows
//! built-in dtypes only.
//!
//! **Claims.** A slot belongs to one declaration. Two declarations of one slot (from two crates,
//! or two places in one) are a conflict that fails only calls carrying that slot's dtype (any op;
//! the error names both declarations); every other call runs as before.

use std::fmt;
use std::sync::OnceLock;

#[cfg(not(target_family = "wasm"))]
use linkme::distributed_slice;

use crate::dtype::{ColumnSet, DTypeColumn, DTypeKind, NUM_DTYPES};
use crate::key::DispatchKeySet;

/// Number of user dtype slots.
pub const NUM_USER_DTYPES: usize = 4;

/// A dtype slot the engine leaves to users. A crate claims one for a dtype of its own with
/// [`declare_dtype!`](crate::declare_dtype), under a constant of its own:
///
/// ```
/// use switchyard::{DispatchKeySet, UserDType};
///
/// /// Two `f32`s, real then imaginary.
/// pub const COMPLEX64: UserDType = UserDType::PrivateUse4;
/// switchyard::declare_dtype!(COMPLEX64, "complex64", bytes = 8, kind = Other);
///
/// assert_eq!(COMPLEX64.to_string(), "complex64");
/// assert_eq!(COMPLEX64.size_of(), Some(8));
/// // A tensor of this dtype on the CPU reports these keys:
/// let keys = DispatchKeySet::CPU | COMPLEX64.key_bit();
/// assert_eq!(keys.to_string(), "{CpuSimd, CpuNaive; complex64}");
/// ```
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Debug)]
#[repr(u8)]
pub enum UserDType {
    /// The first slot (bit 52).
    PrivateUse1 = 0,
    /// The second slot (bit 53).
    PrivateUse2 = 1,
    /// The third slot (bit 54).
    PrivateUse3 = 2,
    /// The fourth slot (bit 55).
    PrivateUse4 = 3,
}

impl UserDType {
    /// Every slot, in order.
    pub const ALL: [UserDType; NUM_USER_DTYPES] = [
        UserDType::PrivateUse1,
        UserDType::PrivateUse2,
        UserDType::PrivateUse3,
        UserDType::PrivateUse4,
    ];

    /// Where the slots' bits start in a [`DispatchKeySet`]: just below the built-in dtypes' byte.
    pub const KEY_SHIFT: u32 = 52;

    /// The slot's index (0..4).
    pub const fn index(self) -> usize {
        self as usize
    }

    /// The slot of `index`, if any.
    pub const fn from_index(index: usize) -> Option<UserDType> {
        if index < NUM_USER_DTYPES {
            Some(UserDType::ALL[index])
        } else {
            None
        }
    }

    /// The slot's name as the engine knows it (`PrivateUse1`), whoever declared it.
    pub const fn slot_name(self) -> &'static str {
        match self {
            UserDType::PrivateUse1 => "PrivateUse1",
            UserDType::PrivateUse2 => "PrivateUse2",
            UserDType::PrivateUse3 => "PrivateUse3",
            UserDType::PrivateUse4 => "PrivateUse4",
        }
    }

    /// The bit a tensor of this dtype contributes to a call's [`DispatchKeySet`] (its device's
    /// keys `|` this), as [`DType::key_bit`](crate::DType::key_bit) for a built-in dtype.
    #[inline(always)]
    pub const fn key_bit(self) -> DispatchKeySet {
        DispatchKeySet::from_bits_retain(1 << (UserDType::KEY_SHIFT + self as u32))
    }

    /// The slot's column in every op's table.
    pub const fn column(self) -> DTypeColumn {
        DTypeColumn::ALL[NUM_DTYPES + self as usize]
    }

    /// The set holding only this slot's column: what `dtypes = [SLOT]` serves.
    pub const fn columns(self) -> ColumnSet {
        self.column().set()
    }

    /// The declaration of this slot, if exactly one crate declared it (else `None`: undeclared,
    /// or a conflict, see [`UserDType::conflict`]).
    pub fn declaration(self) -> Option<&'static UserDTypeDecl> {
        match claims(self) {
            [one] => Some(one),
            _ => None,
        }
    }

    /// The declared name (`complex64`), if exactly one declaration claims the slot.
    pub fn name(self) -> Option<&'static str> {
        self.declaration().map(|d| d.name)
    }

    /// Bytes per element, if exactly one declaration claims the slot.
    pub fn size_of(self) -> Option<usize> {
        self.declaration().map(|d| d.bytes)
    }

    /// The declared kind, if exactly one declaration claims the slot.
    pub fn kind(self) -> Option<DTypeKind> {
        self.declaration().map(|d| d.kind)
    }

    /// The first two of the declarations that claim this slot, when more than one does (sorted
    /// by where they are written): calls carrying this dtype then fail with
    /// [`ErrorKind::UserDTypeConflict`](crate::ErrorKind::UserDTypeConflict).
    pub fn conflict(self) -> Option<(&'static UserDTypeDecl, &'static UserDTypeDecl)> {
        match claims(self) {
            [first, second, ..] => Some((first, second)),
            _ => None,
        }
    }

    /// The slot whose declared name is `name`, if exactly one declaration has it.
    pub fn from_name(name: &str) -> Option<UserDType> {
        UserDType::ALL.into_iter().find(|d| d.name() == Some(name))
    }
}

/// The declared name (`complex64`); an undeclared slot prints as itself (`PrivateUse1`), a slot
/// two declarations claim as `PrivateUse1 (claimed twice)`.
impl fmt::Display for UserDType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match claims(*self) {
            [] => f.write_str(self.slot_name()),
            [one] => f.write_str(one.name),
            _ => write!(f, "{} (claimed twice)", self.slot_name()),
        }
    }
}

/// The slot's own column, as [`UserDType::columns`].
impl From<UserDType> for ColumnSet {
    fn from(dtype: UserDType) -> Self {
        dtype.columns()
    }
}

/// One crate's claim on a [`UserDType`] slot, written by
/// [`declare_dtype!`](crate::declare_dtype).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct UserDTypeDecl {
    /// The slot claimed.
    pub dtype: UserDType,
    /// What dumps, errors and the trace print (`complex64`).
    pub name: &'static str,
    /// Bytes per element.
    pub bytes: usize,
    /// Float, integer or other (complex, quantized, …).
    pub kind: DTypeKind,
    /// `module_path!()` where the declaration is written (it starts with the crate's name).
    pub module: &'static str,
    /// `file!()` there.
    pub file: &'static str,
    /// `line!()` there.
    pub line: u32,
}

impl UserDTypeDecl {
    /// Where the declaration is written, in an order that sorts by crate, then file and line.
    fn site(&self) -> (&'static str, &'static str, u32) {
        (self.module, self.file, self.line)
    }
}

impl fmt::Display for UserDTypeDecl {
    /// `` `complex64` (8 bytes, other) declared at src/tensor.rs:12 (my_crate::tensor) ``
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let kind = match self.kind {
            DTypeKind::Bool => "bool",
            DTypeKind::Int => "int",
            DTypeKind::Float => "float",
            DTypeKind::Other => "other",
        };
        let unit = if self.bytes == 1 { "byte" } else { "bytes" };
        write!(
            f,
            "`{}` ({} {unit}, {kind}) declared at {}:{} ({})",
            self.name, self.bytes, self.file, self.line, self.module
        )
    }
}

/// Every user dtype declaration linked into the binary.
#[cfg(not(target_family = "wasm"))]
#[allow(unsafe_code)] // linkme's `link_section`; no unsafe code of ours
#[distributed_slice]
pub static SWITCHYARD_USER_DTYPES: [UserDTypeDecl];

/// Every user dtype declaration linked into the module.
#[cfg(target_family = "wasm")]
pub static SWITCHYARD_USER_DTYPES: crate::linked::CtorSlice<UserDTypeDecl> =
    crate::linked::CtorSlice::new();

/// The declarations claiming `dtype`, sorted by location, each location once.
fn claims(dtype: UserDType) -> &'static [UserDTypeDecl] {
    static CLAIMS: OnceLock<[Vec<UserDTypeDecl>; NUM_USER_DTYPES]> = OnceLock::new();
    &CLAIMS.get_or_init(|| {
        let mut claims: [Vec<UserDTypeDecl>; NUM_USER_DTYPES] = Default::default();
        for decl in SWITCHYARD_USER_DTYPES.iter() {
            claims[decl.dtype.index()].push(*decl);
        }
        for slot in &mut claims {
            slot.sort_by_key(UserDTypeDecl::site);
            slot.dedup_by_key(|d| d.site());
        }
        claims
    })[dtype.index()]
}

/// The columns of the slots that two declarations claim.
pub(crate) fn conflicted_columns() -> ColumnSet {
    UserDType::ALL
        .into_iter()
        .filter(|d| d.conflict().is_some())
        .fold(ColumnSet::EMPTY, |set, d| set.union(d.columns()))
}

/// The columns whose fast masks stay 0, so that their calls go out of line, where `choose`
/// reports a conflict the call carries: the conflicted slots' columns and, when there are any,
/// `mixed` (which calls carrying them may read; its other calls still dispatch, out of line).
/// Empty when no slot is claimed twice.
pub(crate) fn columns_kept_cold() -> ColumnSet {
    let conflicted = conflicted_columns();
    if conflicted.is_empty() {
        conflicted
    } else {
        conflicted.union(DTypeColumn::Mixed.set())
    }
}

/// The first conflicted slot a call with `keys` carries, if any.
pub(crate) fn conflict_in(keys: DispatchKeySet) -> Option<UserDType> {
    keys.user_dtypes().find(|d| d.conflict().is_some())
}

/// Claims a [`UserDType`] slot for a dtype of your crate and names it:
/// `declare_dtype!(COMPLEX64, "complex64", bytes = 8, kind = Other)`, where `COMPLEX64` is a
/// path to a `UserDType` constant (or `UserDType::PrivateUse1` itself) and `kind` one of `Float`,
/// `Int`, `Other` ([`DTypeKind`]). Use it once per dtype, at module level, in the crate that owns
/// the dtype; its kernels then serve it with `dtypes = [COMPLEX64]`.
///
/// The name must be new: one of the tokens `dtypes = "…"` takes (`f32`, `float`, `all`, …) does
/// not compile:
///
/// ```compile_fail
/// pub const MINE: switchyard::UserDType = switchyard::UserDType::PrivateUse1;
/// switchyard::declare_dtype!(MINE, "f32", bytes = 4, kind = Float);
/// ```
#[macro_export]
macro_rules! declare_dtype {
    ($dtype:path, $name:expr, bytes = $bytes:expr, kind = $kind:ident $(,)?) => {
        const _: () = {
            ::core::assert!(
                $crate::__private_v1::user_dtype_name_is_new($name),
                "declare_dtype!: the name must be non-empty and not one that `dtypes = \"…\"` \
                 already takes (a built-in dtype, `float`, `int`, `mixed`, `untyped`, `all`)"
            );
            #[allow(unsafe_code)] // linkme's `link_section`
            #[cfg_attr(
                not(target_family = "wasm"),
                $crate::__private_v1::linkme::distributed_slice($crate::__private_v1::USER_DTYPES)
            )]
            #[cfg_attr(not(target_family = "wasm"), linkme(crate = $crate::__private_v1::linkme))]
            static DECLARATION: $crate::UserDTypeDecl = $crate::UserDTypeDecl {
                dtype: $dtype,
                name: $name,
                bytes: $bytes,
                kind: $crate::DTypeKind::$kind,
                module: ::core::module_path!(),
                file: ::core::file!(),
                line: ::core::line!(),
            };
            #[cfg(target_family = "wasm")]
            $crate::__private_v1::submit!($crate::__private_v1::USER_DTYPES, DECLARATION);
        };
    };
}

/// `dump()`'s lines for the declared user dtypes: `dtype PrivateUse1 = `complex64` (8 bytes,
/// other) declared at src/tensor.rs:12 (my_crate::tensor)`, one per declaration.
pub(crate) fn dump_lines() -> Vec<String> {
    UserDType::ALL
        .into_iter()
        .flat_map(|dtype| claims(dtype).iter())
        .map(|decl| format!("dtype {:<14} = {decl}", decl.dtype.slot_name()))
        .collect()
}

/// `dump()`'s `conflicts:` lines for the slots two declarations claim.
pub(crate) fn conflict_lines() -> Vec<String> {
    UserDType::ALL
        .into_iter()
        .filter_map(|dtype| {
            let (first, second) = dtype.conflict()?;
            Some(format!(
                "dtype {}: claimed by {first} and by {second} (calls carrying it fail)",
                dtype.slot_name()
            ))
        })
        .collect()
}

/// Whether `name` may name a user dtype: non-empty, and not a token of `dtypes = "…"`.
pub(crate) const fn name_is_new(name: &str) -> bool {
    !name.is_empty() && ColumnSet::token(name).is_none()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dtype::DType;

    #[test]
    fn each_slot_has_its_bit_and_column() {
        for dtype in UserDType::ALL {
            let keys = DispatchKeySet::CPU | dtype.key_bit();
            assert_eq!(keys.column(), dtype.column(), "{dtype:?}");
            assert_eq!(keys.column().user_dtype(), Some(dtype));
            assert_eq!(keys.keys_only(), DispatchKeySet::CPU);
            assert!(keys.dtypes().is_empty(), "no built-in dtype");
            assert_eq!(keys.user_dtypes().collect::<Vec<_>>(), [dtype]);
            // With a built-in dtype: its own column; with another slot: mixed.
            assert_eq!((keys | DType::F32.key_bit()).column(), dtype.column());
            let several = keys | DType::F32.key_bit() | DType::I64.key_bit();
            assert_eq!(several.column(), dtype.column());
            for other in UserDType::ALL.into_iter().filter(|o| *o != dtype) {
                assert_eq!((keys | other.key_bit()).column(), DTypeColumn::Mixed);
            }
            assert!(!dtype.key_bit().intersects(DispatchKeySet::all()));
            assert!(
                !dtype.key_bit().intersects(
                    DType::ALL
                        .map(DType::key_bit)
                        .into_iter()
                        .fold(DispatchKeySet::EMPTY, |a, b| a | b)
                )
            );
        }
    }

    #[test]
    fn undeclared_slots_print_as_themselves() {
        // The engine's own tests declare no user dtype.
        let dtype = UserDType::PrivateUse3;
        assert_eq!(dtype.to_string(), "PrivateUse3");
        assert_eq!(dtype.column().to_string(), "PrivateUse3");
        assert_eq!(
            (dtype.key_bit() | DType::F32.key_bit()).dtype_names(),
            "f32|PrivateUse3"
        );
        assert_eq!(dtype.declaration().map(|d| d.name), None);
        assert!(conflicted_columns().is_empty());
    }

    #[test]
    fn names_must_be_new() {
        assert!(name_is_new("complex64"));
        for taken in ["", "f32", "float", "all", "mixed", "untyped"] {
            assert!(!name_is_new(taken), "{taken:?}");
        }
    }
}
