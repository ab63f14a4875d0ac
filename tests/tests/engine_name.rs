//! A crate that depends on `switchyard-dispatch` under its own name, without `crate = …`, gets
//! one error that names both fixes, not the errors of generated code. Builds the crate in
//! `tests/fixtures/no-engine-name` (a copy, pointed at this checkout's engine, with this
//! workspace's lock file) with `cargo check --offline`.

use std::path::Path;
use std::process::Command;

#[test]
fn a_crate_without_the_engines_name_gets_one_error_naming_both_fixes() {
    let tests = Path::new(env!("CARGO_MANIFEST_DIR"));
    let root = tests.parent().expect("the workspace root");
    let fixture = tests.join("fixtures/no-engine-name");
    let work = root.join("target/fixtures/no-engine-name");
    std::fs::create_dir_all(work.join("src")).unwrap();
    let manifest = std::fs::read_to_string(fixture.join("Cargo.toml"))
        .unwrap()
        .replace("DISPATCH_PATH", root.join("dispatch").to_str().unwrap());
    std::fs::write(work.join("Cargo.toml"), manifest).unwrap();
    std::fs::copy(fixture.join("src/lib.rs"), work.join("src/lib.rs")).unwrap();
    std::fs::copy(root.join("Cargo.lock"), work.join("Cargo.lock")).unwrap();
    let output = Command::new(env!("CARGO"))
        .args(["check", "--offline", "--quiet", "--message-format=short"])
        .current_dir(&work)
        .env("CARGO_TARGET_DIR", root.join("target/fixtures/target"))
        .output()
        .expect("cargo runs");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!output.status.success(), "the fixture compiled:\n{stderr}");
    let errors: Vec<&str> = stderr
        .lines()
        .filter(|line| line.contains("error") && !line.contains("could not compile"))
        .collect();
    assert_eq!(errors.len(), 1, "{stderr}");
    assert!(
        errors[0].contains("src/lib.rs:11:1"),
        "on the first attribute: {stderr}"
    );
    assert!(
        errors[0].contains("`switchyard = { package = \"switchyard-dispatch\"")
            && errors[0].contains("`crate = switchyard_dispatch`"),
        "{stderr}"
    );
    assert!(!stderr.contains("cargo add"), "{stderr}");
}
