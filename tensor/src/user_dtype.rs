//! Tensors of a user dtype: a storage of a built-in dtype of the same element size, seen as a
//! [`UserDType`] declared with `switchyard::declare_dtype!` (a `complex64` held as `i64` words, an
//! `f8e4m3` as `u8`). The view carries the user dtype's key bit in place of the storage dtype's,
//! so calls dispatch to the kernels that declared `dtypes = [THAT_DTYPE]`, and to nothing else.

use switchyard::{DType, DispatchError, DispatchKeySet, UserDType};

use crate::Tensor;
use crate::storage::Holder;

impl Tensor {
    /// The user dtype this tensor is seen as ([`as_user_dtype`](Tensor::as_user_dtype)), or
    /// `None` for a tensor of its storage's dtype. [`dtype`](Tensor::dtype) is the storage's
    /// either way.
    pub fn user_dtype(&self) -> Option<UserDType> {
        self.keys().user_dtypes().next()
    }

    /// The same elements seen as `dtype`, a [`UserDType`] claimed with `declare_dtype!`: a view
    /// over this tensor's storage (shape, strides and device kept) whose calls dispatch on
    /// `dtype`'s column, so only kernels declared with `dtypes = [dtype]` serve it and every
    /// other op is a "no kernel for dtype …" error, never a computation on the raw storage.
    /// Views of it (`reshape`, `transpose`, …) keep `dtype`; a kernel reads its storage as the
    /// built-in dtype ([`dtype`](Tensor::dtype)) and makes its result with `as_user_dtype` too.
    ///
    /// Errors: `dtype` declared nowhere, or its element size (`bytes = …`) not the storage
    /// dtype's, or a tensor that records autograd (a user dtype has no derivatives here).
    ///
    /// ```
    /// use switchyard::{Tensor, UserDType, declare_dtype};
    ///
    /// pub const COMPLEX64: UserDType = UserDType::PrivateUse3;
    /// declare_dtype!(COMPLEX64, "complex64", bytes = 8, kind = Other);
    ///
    /// // 1 + 2i and 3 − 1i, each element one `i64` word pair: the real part's `f32` bits low.
    /// let pack = |re: f32, im: f32| (u64::from(im.to_bits()) << 32 | u64::from(re.to_bits())) as i64;
    /// let z = Tensor::from_vec(vec![pack(1.0, 2.0), pack(3.0, -1.0)], &[2])
    ///     .unwrap()
    ///     .as_user_dtype(COMPLEX64)
    ///     .unwrap();
    /// assert_eq!(z.user_dtype(), Some(COMPLEX64));
    /// assert_eq!(z.dtype(), switchyard::DType::I64); // its storage
    /// assert!(format!("{z:?}").contains("complex64"));
    /// // No kernel serves `neg` on complex64 here: an error, not a negation of the words.
    /// assert!(switchyard::ops::try_neg(&z).is_err());
    /// ```
    pub fn as_user_dtype(&self, dtype: UserDType) -> Result<Tensor, DispatchError> {
        const OP: &str = "as_user_dtype";
        let storage = self.dtype();
        let Some(decl) = dtype.declaration() else {
            return Err(DispatchError::kernel(
                OP,
                format!(
                    "the user dtype slot `{}` is declared nowhere in this binary: name it with \
                     `switchyard::declare_dtype!({}, \"my_dtype\", bytes = {}, kind = …)` in the \
                     crate that owns it",
                    dtype.slot_name(),
                    dtype.slot_name(),
                    storage.size_of()
                ),
            ));
        };
        if decl.bytes != storage.size_of() {
            return Err(DispatchError::kernel(
                OP,
                format!(
                    "`{}` elements take {} bytes and this tensor's `{storage}` elements take {}: \
                     a user dtype views a storage of its own element size (for {} bytes: {})",
                    decl.name,
                    decl.bytes,
                    storage.size_of(),
                    decl.bytes,
                    same_size(decl.bytes)
                ),
            ));
        }
        if self.requires_grad() {
            return Err(DispatchError::kernel(
                OP,
                format!(
                    "{} records autograd, and `{}` has no derivatives: `detach()` it first",
                    self.summary(),
                    decl.name
                ),
            ));
        }
        Ok(self.with_dtype_bits(dtype.key_bit()))
    }

    /// The dtype's name as messages print it: the user dtype this tensor is seen as
    /// (`complex64`), else [`dtype`](Tensor::dtype)'s (`f32`).
    pub fn dtype_name(&self) -> &'static str {
        dtype_label(self.keys(), self.dtype())
    }

    /// The same elements as their storage's built-in dtype: the view
    /// [`as_user_dtype`](Tensor::as_user_dtype) undoes (this tensor itself, shared, when it is not seen as a user
    /// dtype). Kernels of a user dtype use it to read their inputs with the built-in ops
    /// (`to_vec`, `to`, `contiguous`) and the wgpu operand API.
    pub fn as_storage_dtype(&self) -> Tensor {
        if self.user_dtype().is_none() {
            return self.clone();
        }
        self.with_dtype_bits(self.dtype().key_bit())
    }

    /// A view of the same layout and storage whose dtype bits are `bits`.
    fn with_dtype_bits(&self, bits: DispatchKeySet) -> Tensor {
        Tensor::with_layout(
            Holder::Of(self.storage().clone()),
            self.device(),
            self.device().keys() | bits,
            self.numel(),
            self.storage_offset(),
            self.inner.sizes.clone(),
            self.inner.strides.clone(),
            self.dtype(),
            self.inner.contiguous,
        )
    }
}

/// A tensor's dtype as messages name it: the user dtype it is seen as (`complex64`, or its slot
/// while undeclared), else its storage's (`f32`).
pub(crate) fn dtype_label(keys: DispatchKeySet, storage: DType) -> &'static str {
    match keys.user_dtypes().next() {
        Some(user) => user.name().unwrap_or(user.slot_name()),
        None => storage.name(),
    }
}

/// The built-in dtypes whose elements take `bytes` bytes, for the size error.
fn same_size(bytes: usize) -> String {
    let names: Vec<&str> = DType::ALL
        .into_iter()
        .filter(|d| d.size_of() == bytes)
        .map(|d| d.name())
        .collect();
    if names.is_empty() {
        "no built-in dtype has that size".to_owned()
    } else {
        names.join(", ")
    }
}
