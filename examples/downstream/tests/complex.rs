//! This crate's own dtype, `complex64`, through standard ops: its kernels serve `add` and `mul`
//! on it (broadcast and strided views included), every other op and every mix with another dtype
//! is an error naming `complex64`, and dumps list its kernels in its own column.

use switchyard::ops::{add, mul, try_add, try_exp, try_mul, try_neg};
use switchyard::{DType, ErrorKind, Tensor, UserDType};
use switchyard_backends as _;
use switchyard_example_downstream::{COMPLEX64, complex, complex_values};

fn z(values: &[(f32, f32)], shape: &[usize]) -> Tensor {
    complex(values, shape).unwrap()
}

#[test]
fn add_and_mul_compute_complex_arithmetic() {
    let x = z(&[(1.0, 2.0), (3.0, -1.0), (0.0, 1.0)], &[3]);
    let y = z(&[(0.5, 0.5), (-3.0, 1.0), (0.0, 1.0)], &[3]);
    let sum = add(&x, &y);
    assert_eq!(sum.user_dtype(), Some(COMPLEX64));
    assert_eq!(
        complex_values(&sum).unwrap(),
        [(1.5, 2.5), (0.0, 0.0), (0.0, 2.0)]
    );
    // (1+2i)(0.5+0.5i) = −0.5+1.5i; (3−i)(−3+i) = −8+6i; i·i = −1
    assert_eq!(
        complex_values(&mul(&x, &y)).unwrap(),
        [(-0.5, 1.5), (-8.0, 6.0), (-1.0, 0.0)]
    );
}

#[test]
fn views_keep_the_dtype_and_broadcast_like_any_tensor() {
    let x = z(&[(1.0, 0.0), (2.0, 0.0), (3.0, 0.0), (4.0, 0.0)], &[2, 2]);
    let t = x.t();
    assert_eq!(t.user_dtype(), Some(COMPLEX64), "a view keeps the dtype");
    let i = z(&[(0.0, 1.0)], &[1]);
    // [[1, 3], [2, 4]] · i, the scalar broadcast over the transposed view.
    assert_eq!(
        complex_values(&mul(&t, &i)).unwrap(),
        [(0.0, 1.0), (0.0, 3.0), (0.0, 2.0), (0.0, 4.0)]
    );
}

#[test]
fn ops_without_a_complex_kernel_say_so_instead_of_computing_on_the_words() {
    let x = z(&[(1.0, 2.0)], &[1]);
    for err in [try_neg(&x).unwrap_err(), try_exp(&x).unwrap_err()] {
        let ErrorKind::MissingKernel { .. } = err.kind() else {
            panic!("expected a missing kernel, got {err}");
        };
        assert!(err.to_string().contains("complex64"), "{err}");
    }
    // Mixed with a built-in dtype: the engine promotes nothing across a user dtype.
    let err = try_add(&x, &Tensor::vector(&[1.0])).unwrap_err();
    assert!(err.to_string().contains("complex64"), "{err}");
    let err = try_mul(&Tensor::vector(&[1.0]), &x).unwrap_err();
    assert!(err.to_string().contains("complex64"), "{err}");
}

#[test]
fn the_view_is_checked_and_undone() {
    let words = Tensor::from_vec(vec![0i64, 1], &[2]).unwrap();
    let x = words.as_user_dtype(COMPLEX64).unwrap();
    assert_eq!(x.dtype(), DType::I64, "dtype() is the storage's");
    assert_eq!(x.as_storage_dtype().user_dtype(), None);
    assert_eq!(x.as_storage_dtype().to_vec::<i64>(), [0, 1]);
    assert!(
        format!("{x}").starts_with("(complex64, stored as i64)"),
        "{x}"
    );

    // An element size that is not 8 bytes.
    let err = Tensor::vector(&[1.0])
        .as_user_dtype(COMPLEX64)
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("complex64") && err.contains("8 bytes") && err.contains("i64"),
        "{err}"
    );
    // A slot nobody declared.
    let err = words
        .as_user_dtype(UserDType::PrivateUse3)
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("PrivateUse3") && err.contains("declare_dtype!"),
        "{err}"
    );
}

#[test]
fn the_dump_lists_the_kernels_in_the_complex64_column() {
    let dump = switchyard::ops::mul::handle().table_dump();
    assert!(dump.contains("complex64"), "{dump}");
}
