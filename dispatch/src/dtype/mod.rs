//! Element types ("dtypes"): the dispatcher's second dimension, precision.
//!
//! A tensor argument contributes its dtype to a call as one bit in the high byte of its
//! [`DispatchKeySet`] (`DType::key_bit`), OR-ed with the other arguments' bits exactly like the
//! backend and functionality keys. The bit order follows promotion (`bool < u8 < i32 < i64 < f16 <
//! bf16 < f32 < f64`), so the highest bit of a call's dtypes is its promoted type, with one
//! exception written in [`DTypeSet::promoted`]: `f16` with `bf16` promotes to `f32`, as in
//! PyTorch.
//!
//! The engine knows these eight types by name (a kernel declares `dtypes = "f32,f64"`) but nothing
//! about their values: a tensor library maps its own element types onto them. Four more bits,
//! just below them (52..55), are [`UserDType`] slots, which a downstream crate claims and names
//! for a dtype the engine does not know (`user.rs`); each has its own column.

use std::fmt;

use crate::key::DispatchKeySet;

mod user;

pub use user::SWITCHYARD_USER_DTYPES;
pub use user::{NUM_USER_DTYPES, UserDType, UserDTypeDecl};
pub(crate) use user::{columns_kept_cold, conflict_in, conflict_lines, dump_lines, name_is_new};

/// Declares [`DType`] from one table: each row's doc, `Name = bit, "name", bytes, kind`.
macro_rules! dtypes {
    ($(
        $(#[doc = $doc:literal])*
        $dtype:ident = $bit:literal, $name:literal, $bytes:literal, $kind:ident;
    )*) => {
        /// An element type. The discriminant is the type's bit in a [`DTypeSet`] (and, shifted by
        /// [`DType::KEY_SHIFT`], in a [`DispatchKeySet`]); a higher bit promotes over a lower one.
        #[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Debug)]
        #[repr(u8)]
        pub enum DType {
            $($(#[doc = $doc])* $dtype = $bit,)*
        }

        impl DType {
            /// Every dtype, in promotion order (lowest first).
            pub const ALL: [DType; NUM_DTYPES] = [$(DType::$dtype),*];

            /// The name, as written in `dtypes = "…"` and printed in errors and dumps.
            pub const fn name(self) -> &'static str {
                match self {
                    $(DType::$dtype => $name,)*
                }
            }

            /// Bytes per element.
            pub const fn size_of(self) -> usize {
                match self {
                    $(DType::$dtype => $bytes,)*
                }
            }

            /// Whether the type is a boolean, an integer or a float.
            pub const fn kind(self) -> DTypeKind {
                match self {
                    $(DType::$dtype => DTypeKind::$kind,)*
                }
            }
        }
    };
}

/// Number of dtypes.
pub const NUM_DTYPES: usize = 8;

dtypes! {
    /// `bool`: one byte, 0 or 1.
    Bool = 0, "bool", 1, Bool;
    /// `u8`.
    U8 = 1, "u8", 1, Int;
    /// `i32`.
    I32 = 2, "i32", 4, Int;
    /// `i64`.
    I64 = 3, "i64", 8, Int;
    /// IEEE 754 half precision (`half::f16`).
    F16 = 4, "f16", 2, Float;
    /// bfloat16 (`half::bf16`): `f32`'s exponent, 8 bits of mantissa.
    BF16 = 5, "bf16", 2, Float;
    /// IEEE 754 single precision.
    F32 = 6, "f32", 4, Float;
    /// IEEE 754 double precision.
    F64 = 7, "f64", 8, Float;
}

// The rows are the bits 0..NUM_DTYPES in order: `from_index` and promotion rely on it.
const _: () = {
    let mut i = 0;
    while i < NUM_DTYPES {
        assert!(DType::ALL[i] as usize == i);
        i += 1;
    }
};

/// What a dtype holds, for promotion's category rule and for errors.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Debug)]
pub enum DTypeKind {
    /// `bool`.
    Bool,
    /// Integers: `u8`, `i32`, `i64`.
    Int,
    /// Floating point: `f16`, `bf16`, `f32`, `f64`.
    Float,
    /// Neither: a [`UserDType`] that is complex, quantized or otherwise its own (no built-in
    /// dtype has this kind).
    Other,
}

impl DType {
    /// Where the dtype bits start in a [`DispatchKeySet`]: its high byte, far above every key.
    pub const KEY_SHIFT: u32 = 56;

    /// The type's bit position (its promotion rank).
    #[inline(always)]
    pub const fn index(self) -> usize {
        self as usize
    }

    /// The dtype whose bit is `index`, if any.
    pub const fn from_index(index: usize) -> Option<DType> {
        if index < NUM_DTYPES {
            Some(DType::ALL[index])
        } else {
            None
        }
    }

    /// The dtype named `name` (`"f32"`), if any.
    pub fn from_name(name: &str) -> Option<DType> {
        DType::ALL.into_iter().find(|d| d.name() == name)
    }

    /// The bit a tensor of this dtype contributes to a call's [`DispatchKeySet`]: a tensor's
    /// `dispatch_keys()` is its device's keys `|` this.
    #[inline(always)]
    pub const fn key_bit(self) -> DispatchKeySet {
        DispatchKeySet::from_bits_retain(1 << (DType::KEY_SHIFT + self as u32))
    }

    /// Whether the type is a float (`f16`, `bf16`, `f32`, `f64`).
    pub const fn is_float(self) -> bool {
        matches!(self.kind(), DTypeKind::Float)
    }

    /// The type of `a op b` for two tensors of these types, as PyTorch promotes: the higher rank,
    /// except that `f16` with `bf16` gives `f32`.
    pub const fn promote(a: DType, b: DType) -> DType {
        DTypeSet::EMPTY.with(a).with(b).promoted_or(a)
    }
}

impl fmt::Display for DType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A set of dtypes, one bit each (bit `i` is `DType::ALL[i]`).
#[derive(Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct DTypeSet(u8);

impl DTypeSet {
    /// No dtype.
    pub const EMPTY: DTypeSet = DTypeSet(0);
    /// Every dtype.
    pub const ALL: DTypeSet = DTypeSet(u8::MAX);
    /// `f16`, `bf16`, `f32`, `f64`.
    pub const FLOATS: DTypeSet = DTypeSet::of(&[DType::F16, DType::BF16, DType::F32, DType::F64]);
    /// `u8`, `i32`, `i64`.
    pub const INTS: DTypeSet = DTypeSet::of(&[DType::U8, DType::I32, DType::I64]);

    /// The set holding exactly `dtypes`.
    pub const fn of(dtypes: &[DType]) -> DTypeSet {
        let mut bits = 0;
        let mut i = 0;
        while i < dtypes.len() {
            bits |= 1 << dtypes[i] as u8;
            i += 1;
        }
        DTypeSet(bits)
    }

    /// The set whose bit `i` is `bits`' bit `i`.
    #[inline(always)]
    pub const fn from_bits(bits: u8) -> DTypeSet {
        DTypeSet(bits)
    }

    /// The bits, `DType::ALL[i]` at bit `i`.
    #[inline(always)]
    pub const fn bits(self) -> u8 {
        self.0
    }

    /// The dtypes a call's key set carries (its high byte).
    #[inline(always)]
    pub const fn of_keys(keys: DispatchKeySet) -> DTypeSet {
        DTypeSet((keys.bits() >> DType::KEY_SHIFT) as u8)
    }

    /// Whether `dtype` is in the set.
    pub const fn has(self, dtype: DType) -> bool {
        self.0 & (1 << dtype as u8) != 0
    }

    /// The set with `dtype` added.
    #[must_use]
    pub const fn with(self, dtype: DType) -> DTypeSet {
        DTypeSet(self.0 | 1 << dtype as u8)
    }

    /// Whether the set is empty.
    pub const fn is_empty(self) -> bool {
        self.0 == 0
    }

    /// Whether the set holds exactly one dtype.
    pub const fn is_single(self) -> bool {
        self.0.is_power_of_two()
    }

    /// `self ∪ other`.
    #[must_use]
    pub const fn union(self, other: DTypeSet) -> DTypeSet {
        DTypeSet(self.0 | other.0)
    }

    /// `self ∩ other`.
    #[must_use]
    pub const fn intersection(self, other: DTypeSet) -> DTypeSet {
        DTypeSet(self.0 & other.0)
    }

    /// Whether every dtype of `other` is in `self`.
    pub const fn contains(self, other: DTypeSet) -> bool {
        self.0 & other.0 == other.0
    }

    /// The type every member promotes to, or `None` for the empty set: the highest, except that
    /// `f16` and `bf16` with nothing above them give `f32`.
    pub const fn promoted(self) -> Option<DType> {
        if self.0 == 0 {
            return None;
        }
        let f16_and_bf16 = (1 << DType::F16 as u8) | (1 << DType::BF16 as u8);
        if self.0 & f16_and_bf16 == f16_and_bf16 && self.0 >> (DType::BF16 as u8 + 1) == 0 {
            return Some(DType::F32);
        }
        DType::from_index(7 - self.0.leading_zeros() as usize)
    }

    const fn promoted_or(self, default: DType) -> DType {
        match self.promoted() {
            Some(dtype) => dtype,
            None => default,
        }
    }

    /// The dtypes in the set, in promotion order.
    pub fn iter(self) -> impl Iterator<Item = DType> {
        DType::ALL.into_iter().filter(move |d| self.has(*d))
    }
}

impl FromIterator<DType> for DTypeSet {
    fn from_iter<I: IntoIterator<Item = DType>>(iter: I) -> Self {
        iter.into_iter().fold(DTypeSet::EMPTY, DTypeSet::with)
    }
}

/// `f32|f64`; the empty set prints `(none)`.
impl fmt::Display for DTypeSet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.is_empty() {
            return f.write_str("(none)");
        }
        for (i, dtype) in self.iter().enumerate() {
            if i > 0 {
                f.write_str("|")?;
            }
            f.write_str(dtype.name())?;
        }
        Ok(())
    }
}

impl fmt::Debug for DTypeSet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

// ---- columns: what a call's dtypes select, and what a kernel serves ----

/// Declares [`DTypeColumn`] from one table: `Name = index, "name"`.
macro_rules! columns {
    ($($(#[doc = $doc:literal])* $column:ident = $index:literal, $name:literal;)*) => {
        /// The column of an op's table that a call reads, from the dtypes its arguments carry
        /// ([`DTypeColumn::of_keys`]): no dtype is `Untyped` (a value that reports none, such as
        /// a `Device` or a tensor type that declares no dtype), exactly one is that dtype's
        /// column, several are `Mixed` (a library registers promoting kernels there; the engine
        /// does not promote).
        ///
        /// The discriminant is the column's index: a `u8` below [`NUM_COLUMNS`], which the hot
        /// path uses to index per-column arrays with no bounds check.
        #[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Debug)]
        #[repr(u8)]
        pub enum DTypeColumn {
            $($(#[doc = $doc])* $column = $index,)*
        }

        impl DTypeColumn {
            /// Every column, in index order.
            pub const ALL: [DTypeColumn; NUM_COLUMNS] = [$(DTypeColumn::$column),*];

            /// The name, as written in `dtypes = "…"` and printed in errors and dumps.
            pub const fn name(self) -> &'static str {
                match self {
                    $(DTypeColumn::$column => $name,)*
                }
            }
        }
    };
}

/// Number of columns: one per dtype (built-in and [`UserDType`] slot), `mixed` and `untyped`.
pub const NUM_COLUMNS: usize = NUM_DTYPES + NUM_USER_DTYPES + 2;

columns! {
    /// Every tensor argument is `bool`.
    Bool = 0, "bool";
    /// Every tensor argument is `u8`.
    U8 = 1, "u8";
    /// Every tensor argument is `i32`.
    I32 = 2, "i32";
    /// Every tensor argument is `i64`.
    I64 = 3, "i64";
    /// Every tensor argument is `f16`.
    F16 = 4, "f16";
    /// Every tensor argument is `bf16`.
    BF16 = 5, "bf16";
    /// Every tensor argument is `f32`.
    F32 = 6, "f32";
    /// Every tensor argument is `f64`.
    F64 = 7, "f64";
    /// Every tensor argument is the user dtype in slot [`UserDType::PrivateUse1`] (printed by
    /// the name its crate declared).
    PrivateUse1 = 8, "PrivateUse1";
    /// Every tensor argument is the user dtype in slot [`UserDType::PrivateUse2`].
    PrivateUse2 = 9, "PrivateUse2";
    /// Every tensor argument is the user dtype in slot [`UserDType::PrivateUse3`].
    PrivateUse3 = 10, "PrivateUse3";
    /// Every tensor argument is the user dtype in slot [`UserDType::PrivateUse4`].
    PrivateUse4 = 11, "PrivateUse4";
    /// The arguments carry two dtypes or more (built-in or user).
    Mixed = 12, "mixed";
    /// The arguments carry no dtype.
    Untyped = 13, "untyped";
}

// A dtype's column has the dtype's index, and a user slot's column `NUM_DTYPES` + its index:
// `DTypeColumn::of_dtype_bits` relies on it.
const _: () = {
    let mut i = 0;
    while i < NUM_DTYPES {
        assert!(DTypeColumn::ALL[i] as usize == DType::ALL[i] as usize);
        i += 1;
    }
    let mut i = 0;
    while i < NUM_USER_DTYPES {
        assert!(
            DTypeColumn::ALL[NUM_DTYPES + i] as usize == NUM_DTYPES + UserDType::ALL[i] as usize
        );
        i += 1;
    }
    assert!(DTypeColumn::ALL[NUM_COLUMNS - 1] as usize == NUM_COLUMNS - 1);
};

/// Where a call's dtype bits start in its key set: the user slots' four bits (52..55), then the
/// built-in dtypes' byte (56..63). `keys >> COLUMN_SHIFT` is the index into [`COLUMN_OF`].
pub(crate) const COLUMN_SHIFT: u32 = UserDType::KEY_SHIFT;

/// Values of `keys >> COLUMN_SHIFT`: the built-in byte above the user slots' nibble.
pub(crate) const COLUMN_INDICES: usize = 1 << (64 - COLUMN_SHIFT);

/// The column of each value of a key set's dtype bits (`keys >> COLUMN_SHIFT`): one load on the
/// hot path. Each op's table holds a copy (`OpTable::column_of`, 4 KiB), read relative to the
/// op's own address, which the hot path has at hand: a shared table would cost one more
/// instruction to find.
pub(crate) const COLUMN_OF: [DTypeColumn; COLUMN_INDICES] = {
    let mut table = [DTypeColumn::Untyped; COLUMN_INDICES];
    let mut bits = 1;
    while bits < COLUMN_INDICES {
        table[bits] = DTypeColumn::of_dtype_bits(bits as u16);
        bits += 1;
    }
    table
};

impl DTypeColumn {
    /// The column of a call whose arguments carry `dtypes` (built-in dtypes only).
    pub const fn of(dtypes: DTypeSet) -> DTypeColumn {
        DTypeColumn::of_dtype_bits((dtypes.0 as u16) << NUM_USER_DTYPES)
    }

    /// The column of `keys >> COLUMN_SHIFT`: the built-in byte above the user nibble. One user
    /// dtype, whatever built-in dtypes are beside it, is its column: only the kernels that know
    /// it decide what mixing it with another dtype means (a kernel for built-in dtypes would read
    /// its storage as something else). Otherwise one dtype is its column, and two or more are
    /// `mixed`.
    const fn of_dtype_bits(bits: u16) -> DTypeColumn {
        let user = bits & ((1 << NUM_USER_DTYPES) - 1);
        if user != 0 && user.is_power_of_two() {
            DTypeColumn::ALL[NUM_DTYPES + user.trailing_zeros() as usize]
        } else if bits == 0 {
            DTypeColumn::Untyped
        } else if !bits.is_power_of_two() {
            DTypeColumn::Mixed
        } else if bits < 1 << NUM_USER_DTYPES {
            DTypeColumn::ALL[NUM_DTYPES + bits.trailing_zeros() as usize]
        } else {
            DTypeColumn::ALL[bits.trailing_zeros() as usize - NUM_USER_DTYPES]
        }
    }

    /// The column of a call with `keys`, by one table load.
    #[inline(always)]
    pub fn of_keys(keys: DispatchKeySet) -> DTypeColumn {
        // A `static`, not the `const`: indexing a `const` array at run time may copy it first.
        static SHARED: [DTypeColumn; COLUMN_INDICES] = COLUMN_OF;
        SHARED[(keys.bits() >> COLUMN_SHIFT) as usize]
    }

    /// The column's index, below [`NUM_COLUMNS`].
    #[inline(always)]
    pub const fn index(self) -> usize {
        self as usize
    }

    /// The built-in dtype of a one-dtype column.
    pub const fn dtype(self) -> Option<DType> {
        DType::from_index(self as usize)
    }

    /// The user dtype slot of a user dtype's column.
    pub const fn user_dtype(self) -> Option<UserDType> {
        match (self as usize).checked_sub(NUM_DTYPES) {
            Some(index) => UserDType::from_index(index),
            None => None,
        }
    }

    /// The set holding only this column.
    pub const fn set(self) -> ColumnSet {
        ColumnSet(1 << self as u16)
    }
}

impl From<DType> for DTypeColumn {
    fn from(dtype: DType) -> Self {
        DTypeColumn::ALL[dtype.index()]
    }
}

impl From<UserDType> for DTypeColumn {
    fn from(dtype: UserDType) -> Self {
        dtype.column()
    }
}

/// The column's name; a user dtype's column prints its declared name (`complex64`), or its slot
/// (`PrivateUse1`) when no crate declared one.
impl fmt::Display for DTypeColumn {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.user_dtype() {
            Some(dtype) => fmt::Display::fmt(&dtype, f),
            None => f.write_str(self.name()),
        }
    }
}

/// The columns a kernel serves: `dtypes = "f32,f64"` in `#[kernel]`, or the runtime
/// registration's `dtypes` argument. A kernel is resolved only into the columns it serves; in the
/// others its key is as if it were not registered, so the call falls through to the next key that
/// serves the column.
///
/// A kernel that declares nothing serves every built-in column ([`ColumnSet::BUILTIN`]: the
/// eight dtypes, `mixed` and `untyped`), never a user dtype's: a user dtype is served only by
/// kernels that name it (`dtypes = [COMPLEX64]`, `ColumnSet::from(COMPLEX64)`) or say `"all"`,
/// so a kernel written for the built-in dtypes never computes on a user dtype's storage. No
/// string token stands for one user dtype. Fallbacks, fallthroughs, overrides and an op's body
/// serve every column ([`ColumnSet::ALL`]): a body is written in ops, which dispatch again.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct ColumnSet(u16);

impl ColumnSet {
    /// No column.
    pub const EMPTY: ColumnSet = ColumnSet(0);
    /// Every column (the user dtypes' too): `dtypes = "all"`, and what fallbacks, overrides and
    /// op bodies serve.
    pub const ALL: ColumnSet = ColumnSet((1 << NUM_COLUMNS) - 1);
    /// Every column but the user dtypes': the eight dtypes, `mixed` and `untyped`. What a kernel
    /// that declares no dtypes serves (`dtypes = "builtin"`).
    pub const BUILTIN: ColumnSet = ColumnSet(ColumnSet::ALL.0 & !ColumnSet::USER.0);
    /// The user dtypes' columns.
    const USER: ColumnSet = ColumnSet(((1 << NUM_USER_DTYPES) - 1) << NUM_DTYPES);

    /// The tokens `dtypes = "…"` accepts, each with the columns it stands for: the eight dtype
    /// names, `float`, `int`, `mixed`, `untyped`, `builtin` and `all`.
    ///
    /// **Invariant:** the `#[kernel]` macro accepts exactly these names (`tests/tests/dtypes.rs`
    /// checks the macro's list against this one).
    pub const TOKENS: [(&'static str, ColumnSet); NUM_DTYPES + 6] = [
        ("bool", DTypeColumn::Bool.set()),
        ("u8", DTypeColumn::U8.set()),
        ("i32", DTypeColumn::I32.set()),
        ("i64", DTypeColumn::I64.set()),
        ("f16", DTypeColumn::F16.set()),
        ("bf16", DTypeColumn::BF16.set()),
        ("f32", DTypeColumn::F32.set()),
        ("f64", DTypeColumn::F64.set()),
        ("float", ColumnSet::of_dtypes(DTypeSet::FLOATS)),
        ("int", ColumnSet::of_dtypes(DTypeSet::INTS)),
        ("mixed", DTypeColumn::Mixed.set()),
        ("untyped", DTypeColumn::Untyped.set()),
        ("builtin", ColumnSet::BUILTIN),
        ("all", ColumnSet::ALL),
    ];

    /// The one-dtype columns of `dtypes`.
    pub const fn of_dtypes(dtypes: DTypeSet) -> ColumnSet {
        ColumnSet(dtypes.0 as u16)
    }

    /// The columns `token` stands for (`"f32"`, `"float"`, `"mixed"`, …), if it is one of
    /// [`ColumnSet::TOKENS`]. `const`, so generated registrations are built at compile time.
    pub const fn token(token: &str) -> Option<ColumnSet> {
        let mut i = 0;
        while i < ColumnSet::TOKENS.len() {
            if const_str_eq(ColumnSet::TOKENS[i].0, token) {
                return Some(ColumnSet::TOKENS[i].1);
            }
            i += 1;
        }
        None
    }

    /// The columns a comma-separated list of tokens stands for (`"f32, f64, mixed"`), or the
    /// reason it names none: an unknown token, an empty entry or an empty list. At run time the
    /// names declared for [`UserDType`] slots count too (`"f32, complex64"`).
    pub fn parse(list: &str) -> Result<ColumnSet, String> {
        let mut set = ColumnSet::EMPTY;
        for entry in list.split(',').map(str::trim) {
            if entry.is_empty() {
                return Err(format!(
                    "`dtypes` lists dtypes separated by commas, e.g. `\"f32,f64\"`; `{list}` has \
                     an empty entry"
                ));
            }
            match ColumnSet::token(entry)
                .or_else(|| UserDType::from_name(entry).map(UserDType::columns))
            {
                Some(columns) => set = set.union(columns),
                None => {
                    let declared: Vec<String> = UserDType::ALL
                        .into_iter()
                        .filter_map(|d| d.name().map(|name| format!("`{name}`")))
                        .collect();
                    let declared = if declared.is_empty() {
                        String::new()
                    } else {
                        format!(", or a declared user dtype: {}", declared.join(", "))
                    };
                    return Err(format!(
                        "unknown dtype `{entry}` in `dtypes`; expected one of: {}{declared}",
                        ColumnSet::token_list()
                    ));
                }
            }
        }
        Ok(set)
    }

    /// `\`bool\`, \`u8\`, …`: the valid tokens, for messages.
    fn token_list() -> String {
        ColumnSet::TOKENS
            .iter()
            .map(|(name, _)| format!("`{name}`"))
            .collect::<Vec<_>>()
            .join(", ")
    }

    /// Whether the set holds `column`.
    #[inline(always)]
    pub const fn has(self, column: DTypeColumn) -> bool {
        self.0 & (1 << column as u16) != 0
    }

    /// `self ∪ other`.
    #[must_use]
    pub const fn union(self, other: ColumnSet) -> ColumnSet {
        ColumnSet(self.0 | other.0)
    }

    /// `self ∩ other`.
    #[must_use]
    pub const fn intersection(self, other: ColumnSet) -> ColumnSet {
        ColumnSet(self.0 & other.0)
    }

    /// `self − other`.
    #[must_use]
    pub const fn difference(self, other: ColumnSet) -> ColumnSet {
        ColumnSet(self.0 & !other.0)
    }

    /// Whether the set is empty.
    pub const fn is_empty(self) -> bool {
        self.0 == 0
    }

    /// Whether the set holds every column.
    pub const fn is_all(self) -> bool {
        self.0 == ColumnSet::ALL.0
    }

    /// The columns in the set, in index order.
    pub fn iter(self) -> impl Iterator<Item = DTypeColumn> {
        DTypeColumn::ALL.into_iter().filter(move |c| self.has(*c))
    }
}

/// `const` string equality, for [`ColumnSet::token`].
const fn const_str_eq(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    if a.len() != b.len() {
        return false;
    }
    let mut i = 0;
    while i < a.len() {
        if a[i] != b[i] {
            return false;
        }
        i += 1;
    }
    true
}

impl From<DTypeColumn> for ColumnSet {
    fn from(column: DTypeColumn) -> Self {
        column.set()
    }
}

/// The dtype's own column (not `mixed`: a kernel for mixed calls says so).
impl From<DType> for ColumnSet {
    fn from(dtype: DType) -> Self {
        DTypeColumn::from(dtype).set()
    }
}

impl FromIterator<DTypeColumn> for ColumnSet {
    fn from_iter<I: IntoIterator<Item = DTypeColumn>>(iter: I) -> Self {
        iter.into_iter()
            .fold(ColumnSet::EMPTY, |set, c| set.union(c.set()))
    }
}

/// `all`, `float`, `int`, or the columns joined with `|` (`f32|f64|mixed`); the empty set prints
/// `(none)`.
impl fmt::Display for ColumnSet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.is_empty() {
            return f.write_str("(none)");
        }
        if self.is_all() {
            return f.write_str("all");
        }
        if *self == ColumnSet::BUILTIN {
            return f.write_str("builtin");
        }
        let mut rest = *self;
        let mut first = true;
        let mut part = |f: &mut fmt::Formatter<'_>, name: &str| {
            let sep = if first { "" } else { "|" };
            first = false;
            write!(f, "{sep}{name}")
        };
        for group in ["float", "int"] {
            let columns = ColumnSet::token(group).unwrap_or(ColumnSet::EMPTY);
            if rest.0 & columns.0 == columns.0 {
                part(f, group)?;
                rest = rest.difference(columns);
            }
        }
        for column in rest.iter() {
            part(f, &column.to_string())?;
        }
        Ok(())
    }
}

impl fmt::Debug for ColumnSet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

// ---- dtype bits in a key set ----

/// The bits of a [`DispatchKeySet`] that carry dtypes: the user slots' nibble and the built-in
/// byte above it.
const DTYPE_BITS: u64 = u64::MAX << COLUMN_SHIFT;

impl DispatchKeySet {
    /// The built-in dtypes the set carries (its high byte): a call's arguments' dtypes.
    #[inline(always)]
    pub const fn dtypes(self) -> DTypeSet {
        DTypeSet::of_keys(self)
    }

    /// The [`UserDType`] slots the set carries (bits 52..55), in slot order.
    pub fn user_dtypes(self) -> impl Iterator<Item = UserDType> {
        UserDType::ALL
            .into_iter()
            .filter(move |d| self.bits() & d.key_bit().bits() != 0)
    }

    /// Every dtype the set carries, built-in (in promotion order) then user, for messages:
    /// `f32|complex64`; `(none)` when it carries none.
    pub fn dtype_names(self) -> String {
        let names: Vec<String> = self
            .dtypes()
            .iter()
            .map(|d| d.name().to_owned())
            .chain(self.user_dtypes().map(|d| d.to_string()))
            .collect();
        if names.is_empty() {
            "(none)".to_owned()
        } else {
            names.join("|")
        }
    }

    /// The set with `dtypes`' bits added.
    #[inline(always)]
    #[must_use]
    pub const fn with_dtypes(self, dtypes: DTypeSet) -> DispatchKeySet {
        DispatchKeySet::from_bits_retain(self.bits() | (dtypes.0 as u64) << DType::KEY_SHIFT)
    }

    /// The dtype bits alone (built-in and user).
    #[inline(always)]
    #[must_use]
    pub const fn dtype_bits(self) -> DispatchKeySet {
        DispatchKeySet::from_bits_retain(self.bits() & DTYPE_BITS)
    }

    /// The call's column: what [`DTypeColumn::of_keys`] says.
    #[inline(always)]
    pub fn column(self) -> DTypeColumn {
        DTypeColumn::of_keys(self)
    }
}

/// `{CpuSimd, CpuNaive}`, and with dtype bits `{CpuSimd, CpuNaive; f32}` (or `{; f32|i32}` for
/// dtypes alone): keys highest first, then the dtypes in promotion order, then user dtypes by
/// their declared names (`{PrivateUse2; complex64}`).
impl fmt::Display for DispatchKeySet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("{")?;
        for (i, key) in self.keys().enumerate() {
            if i > 0 {
                f.write_str(", ")?;
            }
            f.write_str(key.name())?;
        }
        if self.bits() & DTYPE_BITS != 0 {
            write!(f, "; {}", self.dtype_names())?;
        }
        f.write_str("}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn promotion_follows_pytorch() {
        use DType::*;
        // torch.result_type for two tensors of one dimension or more.
        let cases = [
            (Bool, Bool, Bool),
            (Bool, U8, U8),
            (U8, I32, I32),
            (I32, I64, I64),
            (I32, F32, F32),
            (I64, F16, F16),
            (F16, BF16, F32),
            (BF16, F32, F32),
            (F16, F64, F64),
            (F32, F64, F64),
            (Bool, F64, F64),
        ];
        for (a, b, expected) in cases {
            assert_eq!(DType::promote(a, b), expected, "{a} with {b}");
            assert_eq!(DType::promote(b, a), expected, "{b} with {a}");
        }
        let three = DTypeSet::of(&[F16, BF16, I64]);
        assert_eq!(three.promoted(), Some(F32));
        assert_eq!(DTypeSet::of(&[F16, BF16, F64]).promoted(), Some(F64));
        assert_eq!(DTypeSet::EMPTY.promoted(), None);
    }

    #[test]
    fn dtype_bits_live_above_every_key() {
        for dtype in DType::ALL {
            let bit = dtype.key_bit();
            assert!(!bit.intersects(DispatchKeySet::all()), "{dtype}");
            assert_eq!(
                DTypeSet::of_keys(bit | DispatchKeySet::CPU),
                DTypeSet::of(&[dtype])
            );
            assert_eq!(DType::from_name(dtype.name()), Some(dtype));
        }
        assert!(crate::key::NUM_KEYS <= DType::KEY_SHIFT as usize);
        assert_eq!(
            DTypeSet::of(&[DType::F32, DType::I32]).to_string(),
            "i32|f32"
        );
    }

    #[test]
    fn every_dtype_byte_has_its_column() {
        for byte in 0..=u8::MAX {
            let keys = DispatchKeySet::CPU.with_dtypes(DTypeSet::from_bits(byte));
            let expected = match byte.count_ones() {
                0 => DTypeColumn::Untyped,
                1 => DTypeColumn::from(DType::ALL[byte.trailing_zeros() as usize]),
                _ => DTypeColumn::Mixed,
            };
            assert_eq!(keys.column(), expected, "{byte:#010b}");
            assert_eq!(keys.dtypes().bits(), byte);
            // The keys are untouched by the dtype bits, whatever they are.
            assert_eq!(keys.keys_only(), DispatchKeySet::CPU);
            assert_eq!(keys.highest(), Some(crate::key::DispatchKey::CpuSimd));
            assert_eq!(
                keys.below(crate::key::DispatchKey::CpuSimd),
                DispatchKeySet::CPU_NAIVE.with_dtypes(DTypeSet::from_bits(byte))
            );
        }
        assert_eq!(
            DTypeColumn::ALL.map(DTypeColumn::index),
            [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13]
        );
    }

    #[test]
    fn column_sets_parse_and_print_their_tokens() {
        let set = |list: &str| ColumnSet::parse(list).unwrap();
        assert_eq!(set("all"), ColumnSet::ALL);
        assert_eq!(set("float").iter().count(), 4);
        assert_eq!(set("int").iter().count(), 3);
        assert_eq!(set(" f32 , mixed ").to_string(), "f32|mixed");
        assert_eq!(set("f16,bf16,f32,f64,u8").to_string(), "float|u8");
        let user = UserDType::ALL.map(UserDType::columns);
        let user = user.into_iter().fold(ColumnSet::EMPTY, ColumnSet::union);
        assert_eq!(
            set("bool,int,float,mixed,untyped").union(user),
            ColumnSet::ALL
        );
        assert_eq!(ColumnSet::ALL.to_string(), "all");
        assert_eq!(ColumnSet::EMPTY.to_string(), "(none)");
        let unknown = ColumnSet::parse("f32,double").unwrap_err();
        assert!(unknown.contains("unknown dtype `double`"), "{unknown}");
        assert!(unknown.contains("`untyped`, `builtin`, `all`"), "{unknown}");
        assert_eq!(set("builtin").union(user), ColumnSet::ALL);
        assert_eq!(ColumnSet::BUILTIN.to_string(), "builtin");
        assert!(
            ColumnSet::parse("f32,")
                .unwrap_err()
                .contains("empty entry")
        );
        assert_eq!(ColumnSet::from(DType::F64), DTypeColumn::F64.set());
        for (name, columns) in ColumnSet::TOKENS {
            assert_eq!(ColumnSet::token(name), Some(columns));
        }
    }
}
