//! The library's own diagnostics (the `SWITCHYARD_TRACE` lines, the `SWITCHYARD_CPU_CAPABILITY`
//! warning) go to stderr; when stderr is a broken pipe, calls still work. Each case runs this
//! binary again in a child process whose stderr is a pipe with its read end closed.

use std::io::{Read, Write};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use switchyard::Tensor;
use switchyard::ops::{try_matmul, try_mul, try_sum};
use switchyard_backends as _;

/// Waits until writing to stderr fails: the parent has closed the pipe's read end.
fn wait_for_broken_stderr() {
    let deadline = Instant::now() + Duration::from_secs(20);
    while std::io::stderr().write_all(b"\n").is_ok() {
        assert!(
            Instant::now() < deadline,
            "stderr never became a broken pipe"
        );
        std::thread::sleep(Duration::from_millis(1));
    }
}

/// The child half: dispatches (each of which may print) into a broken stderr.
#[test]
#[ignore = "run by the tests below in a child process"]
fn calls_with_a_broken_stderr_child() {
    // Stderr is about to break: a panic's message goes to stdout, which the parent shows.
    std::panic::set_hook(Box::new(|info| println!("child panicked: {info}")));
    wait_for_broken_stderr();
    let x = Tensor::vector(&[1.0, 2.0, 3.0]);
    assert_eq!(try_mul(&x, &x).unwrap().to_vec::<f32>(), [1.0, 4.0, 9.0]);
    assert_eq!(try_sum(&x).unwrap().to_vec::<f32>(), [6.0]);
    // A failing call prints its error under `SWITCHYARD_TRACE`, too.
    let error = try_matmul(&x, &Tensor::vector(&[1.0, 2.0])).unwrap_err();
    assert!(error.to_string().contains("matmul"), "{error}");
    println!("child done");
}

/// Runs the child with `var=value` and stderr a pipe whose read end is closed at once.
fn run_child_with_broken_stderr(var: &str, value: &str) {
    let mut child = Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "calls_with_a_broken_stderr_child",
            "--ignored",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(var, value)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stderr.take());
    let mut stdout = String::new();
    child
        .stdout
        .take()
        .unwrap()
        .read_to_string(&mut stdout)
        .unwrap();
    let status = child.wait().unwrap();
    assert!(status.success(), "{status}\n{stdout}");
    assert!(stdout.contains("child done"), "{stdout}");
    assert!(stdout.contains("1 passed"), "{stdout}");
}

#[test]
fn dispatch_trace_into_a_broken_stderr_does_not_panic() {
    run_child_with_broken_stderr("SWITCHYARD_TRACE", "1");
}

#[test]
fn cpu_capability_warning_into_a_broken_stderr_does_not_panic() {
    run_child_with_broken_stderr("SWITCHYARD_CPU_CAPABILITY", "bogus");
}
