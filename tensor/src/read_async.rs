//! Reading values back without blocking: `try_to_vec_async` and `try_item_async`, for a caller
//! that cannot wait for its device in place (a web page, whose GPU answers only once control
//! returns to the browser). They await the storage's
//! [`read_bytes_async`](crate::BackendStorage::read_bytes_async); on the CPU, and for a backend
//! that reads synchronously, they are ready at once with `try_to_vec`'s answer.

use switchyard::DispatchError;

use crate::element::{Element, Scalar};
use crate::tensor::Tensor;

impl Tensor {
    /// [`Tensor::try_to_vec`] as a future: the elements, row-major, once the device has them.
    /// On the web, the way to read a GPU tensor (where `try_to_vec` is an error that says so).
    ///
    /// Checks an op could not make at its call because it could not read its arguments' values
    /// then (`cross_entropy`'s target range, on the web) are read first: a failed one is this
    /// read's error.
    ///
    /// ```
    /// use switchyard::Tensor;
    ///
    /// let x = Tensor::vector(&[1.0, 2.0]);
    /// let values = pollster::block_on(x.try_to_vec_async::<f32>()).unwrap();
    /// assert_eq!(values, [1.0, 2.0]);
    /// ```
    pub async fn try_to_vec_async<T: Element>(&self) -> Result<Vec<T>, DispatchError> {
        crate::deferred::settle().await?;
        self.fetch_async().await
    }

    /// The elements, row-major, read without blocking and without settling the deferred checks.
    pub(crate) async fn fetch_async<T: Element>(&self) -> Result<Vec<T>, DispatchError> {
        const OP: &str = "Tensor::to_vec_async";
        let Some(backend) = self.storage().backend() else {
            return self.try_to_vec();
        };
        let mut out = self.vec_for::<T>(OP)?;
        let bytes = backend.read_bytes_async().await?;
        self.gather(OP, &bytes, &mut out)?;
        Ok(out)
    }

    /// [`Tensor::try_item`] as a future: the single element of a one-element tensor, widened.
    pub async fn try_item_async(&self) -> Result<Scalar, DispatchError> {
        if self.numel() != 1 {
            // `try_item`'s error, which it returns before reading anything.
            return self.try_item();
        }
        crate::with_element!(self.dtype(), T => Ok(self.try_to_vec_async::<T>().await?[0].to_scalar()))
    }
}
