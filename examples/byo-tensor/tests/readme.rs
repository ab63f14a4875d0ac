//! The README's Rust snippets are this crate's code: each part of a snippet (between `// …`
//! lines, which mark lines left out) is found line for line, in order, in one file of `src/`.
//! Blank lines and indentation are ignored.

use std::fs;
use std::path::Path;

fn code_lines(text: &str) -> Vec<&str> {
    text.lines()
        .map(str::trim)
        .filter(|line| !line.is_empty())
        .collect()
}

/// The Rust code blocks of a Markdown text.
fn rust_snippets(markdown: &str) -> Vec<String> {
    let mut snippets = Vec::new();
    let mut current: Option<String> = None;
    for line in markdown.lines() {
        let fence = line.trim_start();
        match &mut current {
            None if fence == "```rust" => current = Some(String::new()),
            Some(snippet) if fence == "```" => {
                snippets.push(std::mem::take(snippet));
                current = None;
            }
            Some(snippet) => {
                snippet.push_str(line);
                snippet.push('\n');
            }
            None => {}
        }
    }
    snippets
}

#[test]
fn every_rust_snippet_of_the_readme_is_in_src() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let readme = fs::read_to_string(root.join("README.md")).unwrap();
    let sources: Vec<String> = fs::read_dir(root.join("src"))
        .unwrap()
        .map(|entry| fs::read_to_string(entry.unwrap().path()).unwrap())
        .collect();
    let snippets = rust_snippets(&readme);
    assert!(snippets.len() >= 6, "found {} snippets", snippets.len());
    for snippet in &snippets {
        let lines = code_lines(snippet);
        for part in lines
            .split(|line| *line == "// …")
            .filter(|part| !part.is_empty())
        {
            let found = sources.iter().any(|source| {
                code_lines(source)
                    .windows(part.len())
                    .any(|window| window == part)
            });
            assert!(
                found,
                "this part of a README snippet is not in src/ line for line:\n{}",
                part.join("\n")
            );
        }
    }
}
