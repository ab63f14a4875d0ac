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
//! about their values: a tensor library maps its own element types onto them.

use std::fmt;

use crate::key::DispatchKeySet;

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
}
