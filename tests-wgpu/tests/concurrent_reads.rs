//! Many threads reading GPU values back at once: each read maps its own staging buffer and
//! waits, while other threads' waits may run its mapping callback. Every read must return its
//! own values, no read may fail, and no staging buffer may go back to the pool still mapped
//! (a later copy into it would fail with "still mapped"). Its own binary, so the threads are the
//! only users of the device.

use switchyard::ops::add;
use switchyard::{Device, Tensor};
use switchyard_tests_wgpu::gpu_or_skip;

#[test]
fn reads_from_many_threads_at_once_each_get_their_values() {
    if !gpu_or_skip("reads_from_many_threads_at_once_each_get_their_values") {
        return;
    }
    const THREADS: usize = 8;
    const READS: usize = 150;
    std::thread::scope(|scope| {
        for k in 0..THREADS {
            scope.spawn(move || {
                for r in 0..READS {
                    // Sizes vary so that threads share some staging classes and not others.
                    let len = 1 + (k * 37 + r * 11) % 300;
                    let base = (k * 1000 + r) as f32;
                    let x = Tensor::from_fn(&[len], |i| base + i as f32).to(Device::Wgpu);
                    let y = add(&x, &x);
                    let got = y
                        .try_to_vec::<f32>()
                        .unwrap_or_else(|e| panic!("thread {k}, read {r}: {e}"));
                    let want: Vec<f32> = (0..len).map(|i| 2.0 * (base + i as f32)).collect();
                    assert_eq!(got, want, "thread {k}, read {r}");
                }
            });
        }
    });
}
