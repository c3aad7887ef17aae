//! The generated parts of the book: each exercise's hints on its chapter's exercises
//! page.
//!
//! The hints live in `exercises.toml`, which `cargo xtask exercise hint` reads. An
//! exercises page shows the same hints folded in `<details>` blocks, between two
//! marker comments per exercise:
//!
//! ```text
//! <!-- hints:ex1-split-key:begin -->
//! ...generated...
//! <!-- hints:ex1-split-key:end -->
//! ```
//!
//! [`update`] rewrites those blocks from the manifest; with `check`, it only reports
//! the pages that differ. Everything outside the markers is written by hand.

use std::fs;
use std::path::Path;

use super::manifest::{Exercise, Manifest};
use crate::error::Error;

/// The opening marker of an exercise's hints block.
fn begin(id: &str) -> String {
    format!("<!-- hints:{id}:begin -->")
}

/// The closing marker of an exercise's hints block.
fn end(id: &str) -> String {
    format!("<!-- hints:{id}:end -->")
}

/// The generated hints block of an exercise, without its markers.
pub(crate) fn hints_block(ex: &Exercise) -> String {
    let mut out = String::new();
    for (i, hint) in ex.hints.iter().enumerate() {
        // The summary's text stands as a paragraph of its own, so that
        // mdbook-xgettext extracts it for the Chinese edition (it skips the text of
        // an HTML block); the book's CSS keeps it on the disclosure triangle's line.
        out.push_str(&format!(
            "<details>\n<summary>\n\nHint {} of {}\n\n</summary>\n\n{hint}\n\n</details>\n\n",
            i + 1,
            ex.hints.len()
        ));
    }
    out.push_str(&format!(
        "The same hints, one at a time: `cargo xtask exercise hint {}`.\n",
        ex.id
    ));
    out
}

/// `text` (the page `rel`) with every listed exercise's hints block regenerated.
/// Fails naming an exercise whose markers are missing.
pub(crate) fn regenerate(
    text: &str,
    rel: &str,
    exercises: &[&Exercise],
) -> Result<String, Error> {
    let mut out = text.to_string();
    for ex in exercises {
        let (open, close) = (begin(&ex.id), end(&ex.id));
        let start = out.find(&open).ok_or_else(|| {
            Error::Check(format!("{rel}: no `{open}` line for {}", ex.id))
        })? + open.len();
        let stop =
            out[start..]
                .find(&close)
                .map(|at| start + at)
                .ok_or_else(|| {
                    Error::Check(format!("{rel}: no `{close}` line after `{open}`"))
                })?;
        out.replace_range(start..stop, &format!("\n{}", hints_block(ex)));
    }
    Ok(out)
}

/// Regenerates (or, with `check`, compares) the hints on every chapter's exercises
/// page. Returns the pages that changed (or differ) and notes about pages that do
/// not exist yet.
pub(crate) fn update(
    root: &Path,
    manifest: &Manifest,
    check: bool,
) -> Result<(Vec<String>, Vec<String>), Error> {
    let mut changed = Vec::new();
    let mut notes = Vec::new();
    for chapter in &manifest.chapters {
        let rel = format!("book/src/{}", chapter.exercises_page);
        let path = root.join(&rel);
        let text = match fs::read_to_string(&path) {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                notes.push(format!(
                    "{rel} does not exist yet; its hints are not generated"
                ));
                continue;
            }
            Err(e) => return Err(Error::io("read", path)(e)),
        };
        let exercises: Vec<&Exercise> =
            manifest.stage_exercises(chapter.stage).collect();
        let updated = regenerate(&text, &rel, &exercises)?;
        if updated != text {
            if !check {
                fs::write(&path, &updated).map_err(Error::io("write", &path))?;
            }
            changed.push(rel);
        }
    }
    Ok((changed, notes))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn exercise() -> Exercise {
        Exercise {
            id: "ex1-a".into(),
            crate_name: "stage1-x".into(),
            file: "stage1-x/src/a.rs".into(),
            title: "A".into(),
            page: "p.md".into(),
            tests: "ex1_a".into(),
            also_breaks: Vec::new(),
            hints: vec!["First `x`.".into(), "Second.".into()],
            minutes: 5,
        }
    }

    #[test]
    fn blocks_are_regenerated_between_their_markers() {
        let ex = exercise();
        let page = "# Ex\n\n## A\n\nTask.\n\n<!-- hints:ex1-a:begin -->\nstale\n<!-- hints:ex1-a:end -->\n\nMore.\n";
        let new = regenerate(page, "p.md", &[&ex]).unwrap();
        assert_eq!(
            new,
            "# Ex\n\n## A\n\nTask.\n\n<!-- hints:ex1-a:begin -->\n<details>\n<summary>\n\nHint 1 of 2\n\n</summary>\n\n\
             First `x`.\n\n</details>\n\n<details>\n<summary>\n\nHint 2 of 2\n\n</summary>\n\nSecond.\n\n</details>\n\n\
             The same hints, one at a time: `cargo xtask exercise hint ex1-a`.\n<!-- hints:ex1-a:end -->\n\nMore.\n"
        );
        assert_eq!(regenerate(&new, "p.md", &[&ex]).unwrap(), new);
        let err = regenerate("# Ex\n", "p.md", &[&ex]).unwrap_err();
        assert_eq!(
            err.to_string(),
            "p.md: no `<!-- hints:ex1-a:begin -->` line for ex1-a"
        );
    }
}
