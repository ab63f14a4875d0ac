//! `--write-readme`: the generated tables go between two marker lines of README.md, and nowhere
//! else. A README without exactly one pair of markers, in order, is refused and left untouched.

use std::fs;
use std::path::Path;

/// The start marker line begins with this (the rest of the line says how to regenerate).
pub const START: &str = "<!-- peers:start";
/// The end marker line.
pub const END: &str = "<!-- peers:end -->";

/// `readme` with everything between the marker lines replaced by `generated`.
pub fn replaced(readme: &str, generated: &str) -> Result<String, String> {
    let count = |marker: &str| readme.matches(marker).count();
    let (starts, ends) = (count(START), count(END));
    if starts != 1 || ends != 1 {
        return Err(format!(
            "the tables go between a line starting `{START}` and a line `{END}`, one of each; \
             found {starts} and {ends}"
        ));
    }
    let start_line = readme.find(START).expect("counted");
    let body_start = readme[start_line..]
        .find('\n')
        .map_or(readme.len(), |i| start_line + i + 1);
    let body_end = readme.find(END).expect("counted");
    if body_end < body_start {
        return Err(format!(
            "`{END}` comes before the end of the `{START}` line"
        ));
    }
    let mut generated = generated.to_string();
    if !generated.ends_with('\n') {
        generated.push('\n');
    }
    Ok(format!(
        "{}{generated}{}",
        &readme[..body_start],
        &readme[body_end..]
    ))
}

/// Rewrites the section of the README at `path`; on any error the file is not written.
pub fn write(path: &Path, generated: &str) -> Result<(), String> {
    let readme =
        fs::read_to_string(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    let new = replaced(&readme, generated).map_err(|e| format!("{}: {e}", path.display()))?;
    fs::write(path, new).map_err(|e| format!("cannot write {}: {e}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    const README: &str = "# Title\n\n<!-- peers:start: generated; do not edit -->\nold\ntable\n<!-- peers:end -->\n\nAfter.\n";

    #[test]
    fn only_the_section_between_the_markers_changes() {
        let new = replaced(README, "new").unwrap();
        assert_eq!(
            new,
            "# Title\n\n<!-- peers:start: generated; do not edit -->\nnew\n<!-- peers:end -->\n\nAfter.\n"
        );
        // Regenerating gives the same file.
        assert_eq!(replaced(&new, "new\n").unwrap(), new);
    }

    #[test]
    fn a_readme_without_its_markers_is_refused() {
        let err = replaced("# Title\n\nNo markers.\n", "new").unwrap_err();
        assert!(err.contains("found 0 and 0"), "{err}");
        let twice = format!("{README}{README}");
        assert!(
            replaced(&twice, "new")
                .unwrap_err()
                .contains("found 2 and 2")
        );
        let reversed = "<!-- peers:end -->\n<!-- peers:start -->\n";
        assert!(
            replaced(reversed, "new")
                .unwrap_err()
                .contains("comes before")
        );
    }

    #[test]
    fn a_refused_readme_is_left_untouched() {
        let dir = std::env::temp_dir().join(format!("peers-readme-{}", std::process::id()));
        fs::create_dir_all(&dir).unwrap();
        let path = dir.join("README.md");
        fs::write(&path, "# Title\n\nNo markers.\n").unwrap();
        let err = write(&path, "new").unwrap_err();
        assert!(
            err.contains("README.md") && err.contains("found 0 and 0"),
            "{err}"
        );
        assert_eq!(
            fs::read_to_string(&path).unwrap(),
            "# Title\n\nNo markers.\n"
        );

        fs::write(&path, README).unwrap();
        write(&path, "new").unwrap();
        assert!(
            fs::read_to_string(&path)
                .unwrap()
                .contains("-->\nnew\n<!-- peers:end")
        );
        fs::remove_dir_all(&dir).unwrap();
    }
}
