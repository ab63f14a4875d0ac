//! Prints docs/ops.md's table of ops × backends × dtypes, generated from the registry of a binary
//! that links every backend; with `--write`, puts it into docs/ops.md between its markers
//! (`tests/readme_table.rs` fails while the two differ).

use std::process::ExitCode;

use switchyard_backends::testing::op_table;
use switchyard_tests_wgpu::readme_table::{replaced, table_path};

fn main() -> ExitCode {
    let table = op_table();
    if std::env::args().nth(1).as_deref() != Some("--write") {
        print!("{table}");
        return ExitCode::SUCCESS;
    }
    let path = table_path();
    let written = std::fs::read_to_string(&path)
        .map_err(|e| format!("reading {}: {e}", path.display()))
        .and_then(|doc| replaced(&doc, &table))
        .and_then(|doc| {
            std::fs::write(&path, doc).map_err(|e| format!("writing {}: {e}", path.display()))
        });
    match written {
        Ok(()) => {
            println!("wrote the op table into {}", path.display());
            ExitCode::SUCCESS
        }
        Err(error) => {
            eprintln!("{error}");
            ExitCode::FAILURE
        }
    }
}
