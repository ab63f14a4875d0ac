//! Records how the binary was built, for the report's header: the compiler's version and the
//! `RUSTFLAGS` (a `-C target-cpu=native` build reports itself as one).

use std::process::Command;

fn main() {
    let rustc = std::env::var("RUSTC").unwrap_or_else(|_| "rustc".into());
    let version = Command::new(rustc)
        .arg("--version")
        .output()
        .ok()
        .and_then(|out| String::from_utf8(out.stdout).ok())
        .map_or_else(|| "unknown".into(), |v| v.trim().to_string());
    println!("cargo:rustc-env=PEERS_RUSTC_VERSION={version}");

    // Cargo passes the flags as one string separated by 0x1f.
    let flags = std::env::var("CARGO_ENCODED_RUSTFLAGS").unwrap_or_default();
    println!(
        "cargo:rustc-env=PEERS_RUSTFLAGS={}",
        flags.split('\x1f').collect::<Vec<_>>().join(" ")
    );
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-env-changed=CARGO_ENCODED_RUSTFLAGS");
}
