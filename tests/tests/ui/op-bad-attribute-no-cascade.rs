use switchyard::{DispatchKeySet, Tensor, kernel, op};

// `name` takes a string, not a path: one error, on `sub2`. The op is still generated (named after
// its function), so neither its kernel nor its callers nor its module's items add a "cannot find"
// error to it.
#[op(name = sub2)]
pub fn sub2(x: &Tensor, y: &Tensor) -> Tensor;

#[kernel(op = sub2, key = CpuNaive)]
fn sub2_naive(x: &Tensor, y: &Tensor) -> Tensor {
    let _ = y;
    x.clone()
}

#[kernel(op = "sub2", key = CpuSimd, cpu = "avx2")]
fn sub2_avx2(x: &Tensor, y: &Tensor) -> Tensor {
    let _ = y;
    x.clone()
}

fn main() {
    let (x, y) = (Tensor::scalar(1.0), Tensor::scalar(2.0));
    let _ = sub2(&x, &y);
    let _ = try_sub2(&x, &y);
    let _ = sub2::redispatch(DispatchKeySet::EMPTY, &x, &y);
    let _ = sub2::handle().name();
    let _: sub2::Signature = sub2_naive;
}
