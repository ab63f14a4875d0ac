//! A fake training step counts the memory a real one takes: the peak that fake mode reports for
//! one step of a small MLP equals the CPU allocator's peak for the same step run for real.
//!
//! One test in its own binary: the allocator's figures are process-wide, and another test
//! running beside it would move them.

use switchyard::ops::try_narrow;
use switchyard::optim::Adam;
use switchyard::{DType, Device, DispatchError, fake, memory_stats, reset_peak};
use switchyard_backends as _;
use switchyard_examples::mlp::{Mlp, train_step};
use switchyard_examples::spirals::{Spirals, SpiralsConfig};

/// Builds a model, its optimizer and a batch, and takes two steps (the second with Adam's state
/// and the gradients of the first alive).
fn two_steps(widths: &[usize], batch: usize) -> Result<(), DispatchError> {
    let model = Mlp::new(widths, 7)?;
    let mut adam = Adam::try_new(model.parameters(), 0.01)?;
    let (x, y) = Spirals::generate(SpiralsConfig::default()).tensors()?;
    let (x, y) = (try_narrow(&x, 0, 0, batch)?, try_narrow(&y, 0, 0, batch)?);
    for _ in 0..2 {
        let loss = train_step(&model, &mut adam, &x, &y)?;
        assert_eq!((loss.shape(), loss.dtype()), (&[][..], DType::F32));
    }
    Ok(())
}

#[test]
fn a_fake_steps_peak_is_the_allocators_peak_of_the_real_step() {
    for (widths, batch) in [(&[2, 64, 64, 2][..], 64), (&[2, 96, 33, 2][..], 50)] {
        let before = memory_stats(Device::Cpu).unwrap().allocated;
        reset_peak();
        two_steps(widths, batch).unwrap();
        let real = memory_stats(Device::Cpu).unwrap().peak - before;

        let (result, memory) = fake::fake(|| two_steps(widths, batch));
        result.unwrap();
        let counted = memory.device(Device::Cpu);
        assert!(real > 0);
        assert_eq!(
            counted.peak, real,
            "{widths:?}, batch {batch}: fake mode counted {counted:?}, the allocator's peak was \
             {real} bytes"
        );
        assert_eq!(counted.live, 0, "everything the steps made is dropped");
    }
}
