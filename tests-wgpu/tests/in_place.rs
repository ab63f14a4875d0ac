//! In-place ops on GPU tensors: `copy_` (the wgpu kernel: a scatter through the destination's
//! strides), and the composites over it (`fill_`, `zero_`, `add_`, …), each against the same
//! calls on the CPU. Writes through a GPU view reach the base; the version counts; a refused call
//! writes nothing.

use switchyard::{DType, Device, Tensor};
use switchyard_tests_wgpu::{gpu, gpu_or_skip, tensor};

/// The same in-place call on a CPU tensor and on its GPU copy: equal values afterwards (the
/// elementwise ops here are exact on both), one version each.
#[track_caller]
fn same_on_both(shape: &[usize], write: impl Fn(&Tensor)) {
    let cpu = tensor(shape, 3, 4.0);
    let on_gpu = gpu(&cpu);
    write(&cpu);
    write(&on_gpu);
    assert_eq!(on_gpu.device(), Device::Wgpu);
    assert_eq!(on_gpu.to_vec::<f32>(), cpu.to_vec::<f32>());
    assert_eq!(on_gpu.version(), cpu.version());
}

#[test]
fn copy_and_fill_through_views() {
    if !gpu_or_skip("copy_and_fill_through_views") {
        return;
    }
    // A column of a matrix, every other row, a transposed block: writes land in the base.
    same_on_both(&[4, 6], |base| base.select(1, 2).fill_(7.5));
    same_on_both(&[8, 3], |base| base.slice(0, 1, 8, 2).zero_());
    same_on_both(&[5, 5], |base| {
        let source = Tensor::from_fn::<f32>(&[2, 3], |i| i as f32);
        let source = if base.device() == Device::Wgpu {
            gpu(&source)
        } else {
            source
        };
        base.narrow(0, 1, 3).narrow(1, 2, 2).t().copy_(&source);
    });
    // A broadcast source, and more elements than one workgroup.
    same_on_both(&[300, 7], |base| {
        let row = Tensor::from_fn::<f32>(&[7], |i| -(i as f32));
        let row = if base.device() == Device::Wgpu {
            gpu(&row)
        } else {
            row
        };
        base.clone().copy_(&row);
    });
}

#[test]
fn in_place_arithmetic_matches_the_cpu() {
    if !gpu_or_skip("in_place_arithmetic_matches_the_cpu") {
        return;
    }
    same_on_both(&[3, 4], |x| {
        let y = x.t().contiguous().t(); // the same values, another tensor of the device
        let mut x = x.clone();
        x.add_(&y);
        let row = x.select(0, 0);
        x.mul_(&row);
        x.neg_();
        x.relu_();
    });
}

#[test]
fn copies_between_devices_and_dtypes() {
    if !gpu_or_skip("copies_between_devices_and_dtypes") {
        return;
    }
    // CPU f64 into a GPU view: converted, uploaded, scattered.
    let base = gpu(&Tensor::from_vec::<f32>(vec![0.0; 6], &[2, 3]).unwrap());
    let source = Tensor::from_vec::<f64>(vec![1.5, -2.5], &[2]).unwrap();
    base.narrow(1, 0, 2).select(0, 1).copy_(&source);
    assert_eq!(base.to_vec::<f32>(), [0.0, 0.0, 0.0, 1.5, -2.5, 0.0]);
    assert_eq!(base.version(), 1);
    // A GPU source into a CPU i32 destination: read back, then converted on the CPU.
    let mut ints = Tensor::from_vec::<i32>(vec![0; 6], &[2, 3]).unwrap();
    ints.copy_(&base);
    assert_eq!(ints.to_vec::<i32>(), [0, 0, 0, 1, -2, 0]);
    assert_eq!(ints.version(), 1);
}

#[test]
fn an_overlapping_source_in_the_same_buffer_reads_before_it_writes() {
    if !gpu_or_skip("an_overlapping_source_in_the_same_buffer_reads_before_it_writes") {
        return;
    }
    let base = gpu(&Tensor::from_fn::<f32>(&[6], |i| i as f32));
    base.narrow(0, 1, 5).copy_(&base.narrow(0, 0, 5));
    assert_eq!(base.to_vec::<f32>(), [0.0, 0.0, 1.0, 2.0, 3.0, 4.0]);
}

#[test]
fn refused_writes_leave_the_gpu_tensor_as_it_was() {
    if !gpu_or_skip("refused_writes_leave_the_gpu_tensor_as_it_was") {
        return;
    }
    let x = gpu(&Tensor::from_vec::<f32>(vec![1.0, 2.0], &[2, 1]).unwrap());
    let expanded = x.expand(&[2, 3]);
    let error = expanded.clone().try_fill_(0.0).unwrap_err().to_string();
    assert!(error.contains("overlap"), "{error}");
    let error = x
        .clone()
        .try_copy_(&gpu(&Tensor::from_vec::<f32>(vec![1.0; 3], &[3]).unwrap()))
        .unwrap_err()
        .to_string();
    assert!(error.contains("copy_") && error.contains("[3]"), "{error}");
    let error = x
        .clone()
        .try_add_(&Tensor::from_vec::<f64>(vec![1.0; 2], &[2, 1]).unwrap())
        .unwrap_err()
        .to_string();
    assert!(error.contains("add_"), "{error}");
    assert_eq!(x.to_vec::<f32>(), [1.0, 2.0]);
    assert_eq!(x.version(), 0);
    assert_eq!(x.dtype(), DType::F32);
}

/// `to_dtype` on the GPU: to `f32` it is the tensor itself (GPU buffers hold `f32`); to another
/// dtype an error that says to convert on the CPU.
#[test]
fn to_dtype_on_the_gpu() {
    if !gpu_or_skip("to_dtype_on_the_gpu") {
        return;
    }
    let x = gpu(&Tensor::from_vec::<f32>(vec![1.5, -2.0], &[2]).unwrap());
    assert!(x.to_dtype(DType::F32).same(&x));
    let error = x.try_to_dtype(DType::F64).unwrap_err().to_string();
    assert!(
        error.contains("f64") && error.contains("to(Device::Cpu)"),
        "{error}"
    );
}
