//! The checks that keep the prose true where a compiler cannot: README.md's Rust blocks are a
//! facade user's code (the facade compiles and runs them as doctests), the docs cite no document
//! outside the repository, and figures that change with every optimisation (instruction counts,
//! the slot count) are not repeated in prose: benches/README.md holds the measurements, and the
//! code holds its constants.

use std::fs;
use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn read(path: &Path) -> String {
    fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// Every file under `dir` (build outputs and hidden folders left out).
fn files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        if path.is_dir() {
            if name != "target" && !name.starts_with('.') {
                files(&path, out);
            }
        } else {
            out.push(path);
        }
    }
}

fn files_ending(dir: &Path, ending: &str) -> Vec<PathBuf> {
    let mut all = Vec::new();
    files(dir, &mut all);
    all.retain(|p| p.to_string_lossy().ends_with(ending));
    all.sort();
    all
}

/// The Markdown the project's prose lives in, but the performance record and the changelog
/// (which dates its figures).
fn prose_docs() -> Vec<PathBuf> {
    let root = root();
    files_ending(&root, ".md")
        .into_iter()
        .filter(|p| {
            let p = p
                .strip_prefix(&root)
                .unwrap()
                .to_string_lossy()
                .replace('\\', "/");
            p != "benches/README.md" && p != "CHANGELOG.md"
        })
        .collect()
}

/// The comment lines of the engine's, the tensor's, the macros' and the backends' sources.
fn source_comments() -> Vec<(PathBuf, String)> {
    let mut out = Vec::new();
    for krate in ["dispatch", "tensor", "macros", "backends"] {
        for path in files_ending(&root().join(krate).join("src"), ".rs") {
            for line in read(&path).lines() {
                if line.trim_start().starts_with("//") {
                    out.push((path.clone(), line.to_owned()));
                }
            }
        }
    }
    out
}

/// The Rust blocks of a Markdown text: (first line number, the block's lines).
fn rust_blocks(text: &str) -> Vec<(usize, Vec<&str>)> {
    let mut blocks = Vec::new();
    let mut open: Option<(usize, Vec<&str>)> = None;
    for (i, line) in text.lines().enumerate() {
        match &mut open {
            None if line.starts_with("```rust") => open = Some((i + 2, Vec::new())),
            None => {}
            Some(_) if line.starts_with("```") => blocks.extend(open.take()),
            Some((_, lines)) => lines.push(line),
        }
    }
    blocks
}

#[test]
fn readme_rust_blocks_are_a_facade_users_code_as_written() {
    let readme = read(&root().join("README.md"));
    let blocks = rust_blocks(&readme);
    assert!(
        blocks.len() >= 3,
        "README.md has {} Rust blocks",
        blocks.len()
    );
    for (at, lines) in blocks {
        for (i, line) in lines.iter().enumerate() {
            let trimmed = line.trim_start();
            // rustdoc hides such a line; on GitHub it shows, and pasted it does not compile.
            let hidden = trimmed == "#" || trimmed.starts_with("# ");
            assert!(
                !hidden,
                "README.md:{}: a hidden doctest line: {line}",
                at + i
            );
            for internal in [
                "switchyard_tensor",
                "switchyard_dispatch",
                "switchyard_macros",
            ] {
                assert!(
                    !line.contains(internal),
                    "README.md:{}: `{internal}` is not a dependency of a facade user; use \
                     `switchyard::…`: {line}",
                    at + i
                );
            }
        }
    }
    // And the facade compiles and runs them.
    let facade = read(&root().join("switchyard/src/lib.rs"));
    assert!(
        facade.contains("#[cfg(doctest)]\n#[doc = include_str!(\"../../README.md\")]"),
        "switchyard/src/lib.rs no longer runs README.md's blocks as doctests"
    );
}

#[test]
fn no_document_outside_the_repository_is_cited() {
    // Spelled in two parts, so that this file does not cite it either.
    let outside = ["DESIGN", ".md"].concat();
    let mut all = Vec::new();
    files(&root(), &mut all);
    let citing: Vec<_> = all
        .iter()
        .filter(|p| {
            fs::read(p).is_ok_and(|bytes| String::from_utf8_lossy(&bytes).contains(&outside))
        })
        .collect();
    assert!(citing.is_empty(), "{outside} is cited in {citing:?}");
}

/// Whether `word` is a count of ten or more: digits, or a number word.
fn ten_or_more(word: &str) -> bool {
    let word = word
        .trim_matches(|c: char| !c.is_alphanumeric())
        .to_lowercase();
    if let Ok(n) = word.replace(',', "").parse::<u64>() {
        return n >= 10;
    }
    const WORDS: [&str; 14] = [
        "ten",
        "eleven",
        "twelve",
        "thirteen",
        "fourteen",
        "fifteen",
        "sixteen",
        "seventeen",
        "eighteen",
        "nineteen",
        "twenty",
        "thirty",
        "forty",
        "fifty",
    ];
    WORDS.iter().any(|w| word.starts_with(w)) || word.contains("hundred")
}

/// Places in `text` where `noun` follows a count of ten or more ("27 instructions", "the hot
/// path's thirty").
fn counts_of<'t>(text: &'t str, noun: &str) -> Vec<&'t str> {
    let words: Vec<&str> = text.split_whitespace().collect();
    words
        .windows(2)
        .filter(|w| {
            w[1].trim_matches(|c: char| !c.is_alphanumeric())
                .starts_with(noun)
        })
        .filter(|w| ten_or_more(w[0]))
        .map(|w| w[0])
        .collect()
}

#[test]
fn instruction_counts_live_in_the_performance_record_only() {
    let mut found = Vec::new();
    for path in prose_docs() {
        for count in counts_of(&read(&path), "instruction") {
            found.push(format!("{}: {count} instructions", path.display()));
        }
    }
    for (path, line) in source_comments() {
        for count in counts_of(&line, "instruction") {
            found.push(format!("{}: {count} instructions", path.display()));
        }
        if line.contains("hot path's")
            && line
                .split("hot path's")
                .skip(1)
                .any(|r| r.split_whitespace().next().is_some_and(ten_or_more))
        {
            found.push(format!("{}: {line}", path.display()));
        }
    }
    assert!(
        found.is_empty(),
        "instruction counts change with every optimisation; say them in benches/README.md \
         only:\n{}",
        found.join("\n")
    );
}

#[test]
fn the_slot_count_is_said_by_the_code_alone() {
    let mut found = Vec::new();
    for path in prose_docs() {
        for count in counts_of(&read(&path), "slots") {
            found.push(format!("{}: {count} slots", path.display()));
        }
    }
    for (path, line) in source_comments() {
        let rounded = line.contains("rounded up to") && line.contains("slot");
        if rounded || !counts_of(&line, "slots").is_empty() {
            found.push(format!("{}: {line}", path.display()));
        }
    }
    assert!(
        found.is_empty(),
        "a table's slot count is `SLOTS` in dispatch/src/table/mod.rs; prose that repeats it \
         drifts:\n{}",
        found.join("\n")
    );
}

#[test]
fn the_architecture_map_holds_no_timings() {
    let map = read(&root().join("ARCHITECTURE.md"));
    for unit in ["µs", " ns ", " ns)", "GB/s", "GFLOP/s", " ms "] {
        assert!(
            !map.contains(unit),
            "ARCHITECTURE.md has a timing (`{unit}`); timings go to benches/README.md"
        );
    }
}
