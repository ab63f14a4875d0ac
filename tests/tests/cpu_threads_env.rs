//! `SWITCHYARD_NUM_THREADS` (own process: it is read at the first use, and again by
//! `reset_num_threads`): a count is taken, anything else is the available cores.

use switchyard::Tensor;
use switchyard::ops::sum;
use switchyard_backends::{num_threads, reset_num_threads};

#[test]
fn the_variable_sets_the_default_and_a_bad_value_is_the_available_cores() {
    let cores = std::thread::available_parallelism().map_or(1, usize::from);
    // SAFETY: this test binary has one test, and no other thread reads the environment.
    unsafe { std::env::set_var("SWITCHYARD_NUM_THREADS", "3") };
    assert_eq!(num_threads(), 3);
    // A large sum runs on the three.
    let x = Tensor::vector(&vec![1.0; 1 << 20]);
    assert_eq!(sum(&x).to_vec::<f32>(), [(1 << 20) as f32]);
    for bad in ["0", "-2", "many", ""] {
        // SAFETY: as above.
        unsafe { std::env::set_var("SWITCHYARD_NUM_THREADS", bad) };
        reset_num_threads();
        assert_eq!(num_threads(), cores, "{bad:?}");
    }
    // SAFETY: as above.
    unsafe { std::env::remove_var("SWITCHYARD_NUM_THREADS") };
    reset_num_threads();
    assert_eq!(num_threads(), cores);
}
