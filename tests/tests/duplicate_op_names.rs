//! Two crates that declare ops of one full name (both `twin::double`; and `twin_a::triple`, which
//! `twin_b` declares in `twin_a`'s namespace): in one crate that is a compile error
//! (`ui/op-duplicate-full-name.rs`); across crates it is a run-time error of those ops only,
//! naming both crates. Builds and runs `tests/fixtures/duplicate-op-names` (a copy, pointed at
//! this checkout's engine, with this workspace's lock file) with `cargo run --offline`.

use std::collections::HashMap;
use std::path::Path;
use std::process::Command;

fn copy_tree(from: &Path, to: &Path, engine: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let (source, target) = (entry.path(), to.join(entry.file_name()));
        if entry.file_type().unwrap().is_dir() {
            copy_tree(&source, &target, engine);
        } else {
            let text = std::fs::read_to_string(&source).unwrap();
            let text = text.replace("DISPATCH_PATH", engine.to_str().unwrap());
            std::fs::write(&target, text).unwrap();
        }
    }
}

#[test]
fn ops_of_one_full_name_in_two_crates_fail_at_run_time_naming_both_crates() {
    let tests = Path::new(env!("CARGO_MANIFEST_DIR"));
    let root = tests.parent().expect("the workspace root");
    let work = root.join("target/fixtures/duplicate-op-names");
    copy_tree(
        &tests.join("fixtures/duplicate-op-names"),
        &work,
        &root.join("dispatch"),
    );
    std::fs::copy(root.join("Cargo.lock"), work.join("Cargo.lock")).unwrap();
    let output = Command::new(env!("CARGO"))
        .args(["run", "--offline", "--quiet"])
        .current_dir(&work)
        .env("CARGO_TARGET_DIR", root.join("target/fixtures/target"))
        .output()
        .expect("cargo runs");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stderr}\n{stdout}");
    let lines: HashMap<&str, &str> = stdout
        .lines()
        .filter_map(|line| line.split_once(": "))
        .collect();

    // Only the ops involved fail; `half` of each crate has its crate's namespace and works.
    assert_eq!(lines["twin_a::half"], "ok 2", "{stdout}");
    assert_eq!(lines["twin_b::half"], "ok 2", "{stdout}");
    let ops = lines["ops"];
    for name in [
        "twin_a::half",
        "twin_b::half",
        "twin::double",
        "twin_a::triple",
    ] {
        assert!(ops.split(' ').any(|op| op == name), "{name} in {ops}");
    }

    // Both `twin::double`s: one error, naming both crates and where each declared it.
    let double = lines["twin_a::double"];
    assert_eq!(lines["twin_b::double"], double);
    assert!(
        double.starts_with(
            "error two ops are named `twin::double`: one declared in crate `twin_a` at \
             twin-a/src/lib.rs:13, one in crate `twin_b` at twin-b/src/lib.rs:5"
        ),
        "{double}"
    );
    assert!(
        double.contains("namespace `twin` is claimed by both")
            && double.contains("`#[op(name = \"twin_a::double\")]` in crate `twin_a`")
            && double.contains("`#[op(name = \"twin_b::double\")]` in crate `twin_b`"),
        "the namespaces to use: {double}"
    );

    // `twin_b` declared an op in `twin_a`'s namespace: it is told to use its own.
    let triple = lines["twin_a::triple"];
    assert_eq!(lines["twin_b::triple"], triple);
    assert!(
        triple.contains("crate `twin_a`")
            && triple.contains("crate `twin_b`")
            && triple.contains("namespace `twin_a` is crate `twin_a`'s")
            && triple.contains("#[op(name = \"twin_b::triple\")]"),
        "{triple}"
    );
}
