//! The generated parts of the book: each exercise's hints on its own page
//! (`book/src/stage1/exercises/ex1-split-key.md`, see
//! [`Manifest::exercise_page`]).
//!
//! The hints live in `exercises.toml`, which `cargo xtask exercise hint` reads. An
//! exercise's page shows the same hints folded in `<details>` blocks, between two
//! marker comments:
//!
//! ```text
//! <!-- hints:ex1-split-key:begin -->
//! ...generated...
//! <!-- hints:ex1-split-key:end -->
//! ```
//!
//! [`update`] rewrites those blocks from the manifest; with `check`, it only reports
//! the pages that differ. Everything outside the markers is written by hand. The
//! chapter's exercises index (`stage1/exercises.md`) holds no hints: it links to the
//! exercises' pages.

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

/// The exercise ids whose hints markers (opening or closing) appear in `text`, in
/// order, each once.
fn marked_ids(text: &str) -> Vec<&str> {
    let mut ids: Vec<&str> = Vec::new();
    for (at, _) in text.match_indices("<!-- hints:") {
        let rest = &text[at + "<!-- hints:".len()..];
        let Some(stop) = rest.find(" -->") else {
            continue;
        };
        let id = rest[..stop]
            .strip_suffix(":begin")
            .or_else(|| rest[..stop].strip_suffix(":end"))
            .unwrap_or(&rest[..stop]);
        if !ids.contains(&id) {
            ids.push(id);
        }
    }
    ids
}

/// Reads a page under the workspace root, or `None` if it does not exist.
fn read_page(root: &Path, rel: &str) -> Result<Option<String>, Error> {
    let path = root.join(rel);
    match fs::read_to_string(&path) {
        Ok(text) => Ok(Some(text)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(Error::io("read", path)(e)),
    }
}

/// Regenerates (or, with `check`, compares) the hints on every exercise's own page
/// (see [`Manifest::exercise_page`]). Returns the pages that changed (or differ)
/// and notes about chapters whose exercises pages do not exist yet.
///
/// A chapter whose exercises index exists must have a page for each of its
/// exercises, and hints only where they belong: a hints block on the index, or on
/// another exercise's page, would never be regenerated, so it is an error, as is a
/// page without its exercise's markers.
pub(crate) fn update(
    root: &Path,
    manifest: &Manifest,
    check: bool,
) -> Result<(Vec<String>, Vec<String>), Error> {
    let mut changed = Vec::new();
    let mut notes = Vec::new();
    for chapter in &manifest.chapters {
        let index_rel = format!("book/src/{}", chapter.exercises_page);
        let index = read_page(root, &index_rel)?;
        if let Some(text) = &index
            && let Some(id) = marked_ids(text).first()
        {
            return Err(Error::Check(match manifest.exercise(id) {
                Some(ex) => format!(
                    "{index_rel}: holds the hints markers of {id}; an exercise's hints \
                     belong on its own page, book/src/{}",
                    manifest.exercise_page(ex)
                ),
                None => format!(
                    "{index_rel}: holds the hints markers of {id}, which is no exercise \
                     of exercises.toml"
                ),
            }));
        }
        for ex in manifest.stage_exercises(chapter.stage) {
            let rel = format!("book/src/{}", manifest.exercise_page(ex));
            let Some(text) = read_page(root, &rel)? else {
                if index.is_some() {
                    return Err(Error::Check(format!(
                        "{rel} does not exist: every exercise of a chapter with an \
                         exercises page ({index_rel}) has a page of its own, which holds \
                         its hints"
                    )));
                }
                notes.push(format!(
                    "{rel} does not exist yet; its hints are not generated"
                ));
                continue;
            };
            if let Some(other) =
                marked_ids(&text).into_iter().find(|id| *id != ex.id)
            {
                return Err(Error::Check(format!(
                    "{rel}: holds the hints markers of {other}; only {}'s hints belong here",
                    ex.id
                )));
            }
            let updated = regenerate(&text, &rel, &[ex])?;
            if updated != text {
                if !check {
                    let path = root.join(&rel);
                    fs::write(&path, &updated).map_err(Error::io("write", &path))?;
                }
                changed.push(rel);
            }
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

    /// A scratch workspace with a manifest of two stage 1 exercises.
    struct Scratch(std::path::PathBuf);

    impl Scratch {
        fn new(name: &str) -> Scratch {
            let dir = std::env::temp_dir()
                .join(format!("xtask-pages-{name}-{}", std::process::id()));
            let _ = fs::remove_dir_all(&dir);
            fs::create_dir_all(dir.join("book/src/stage1/exercises")).unwrap();
            Scratch(dir)
        }

        fn write(&self, rel: &str, text: &str) {
            fs::write(self.0.join(rel), text).unwrap();
        }

        fn read(&self, rel: &str) -> String {
            fs::read_to_string(self.0.join(rel)).unwrap()
        }
    }

    impl Drop for Scratch {
        fn drop(&mut self) {
            let _ = fs::remove_dir_all(&self.0);
        }
    }

    fn manifest() -> Manifest {
        Manifest::parse(
            r#"
[[chapter]]
stage = 1
title = "1. S"
page = "stage1/index.md"
exercises_page = "stage1/exercises.md"
minutes = 30

[[exercise]]
id = "ex1-a"
crate = "stage1-x"
file = "stage1-x/src/a.rs"
title = "A"
page = "stage1/index.md"
tests = "ex1_a"
hints = ["First.", "Second."]
minutes = 5

[[exercise]]
id = "ex1-b"
crate = "stage1-x"
file = "stage1-x/src/b.rs"
title = "B"
page = "stage1/index.md"
tests = "ex1_b"
hints = ["One.", "Two."]
minutes = 5
"#,
        )
        .unwrap()
    }

    fn marked(id: &str) -> String {
        format!("# {id}\n\n<!-- hints:{id}:begin -->\n<!-- hints:{id}:end -->\n")
    }

    #[test]
    fn each_exercise_gets_its_hints_on_its_own_page() {
        let dir = Scratch::new("own");
        let manifest = manifest();
        dir.write("book/src/stage1/exercises.md", "# Exercises\n");
        dir.write("book/src/stage1/exercises/ex1-a.md", &marked("ex1-a"));
        dir.write("book/src/stage1/exercises/ex1-b.md", &marked("ex1-b"));
        let (stale, notes) = update(&dir.0, &manifest, true).unwrap();
        assert_eq!(
            stale,
            [
                "book/src/stage1/exercises/ex1-a.md",
                "book/src/stage1/exercises/ex1-b.md"
            ]
        );
        assert!(notes.is_empty());
        assert_eq!(
            dir.read("book/src/stage1/exercises/ex1-a.md"),
            marked("ex1-a")
        );
        let (changed, _) = update(&dir.0, &manifest, false).unwrap();
        assert_eq!(changed.len(), 2);
        assert!(
            dir.read("book/src/stage1/exercises/ex1-b.md")
                .contains("Hint 2 of 2")
        );
        assert_eq!(
            update(&dir.0, &manifest, true).unwrap().0,
            Vec::<String>::new()
        );
    }

    #[test]
    fn hints_anywhere_else_or_a_missing_page_fail_the_check() {
        let dir = Scratch::new("strict");
        let manifest = manifest();
        dir.write("book/src/stage1/exercises/ex1-a.md", &marked("ex1-a"));
        let (_, notes) = update(&dir.0, &manifest, true).unwrap();
        assert_eq!(
            notes,
            [
                "book/src/stage1/exercises/ex1-b.md does not exist yet; its hints are not generated"
            ]
        );

        dir.write("book/src/stage1/exercises.md", "# Exercises\n");
        let err = update(&dir.0, &manifest, true).unwrap_err().to_string();
        assert!(
            err.starts_with("book/src/stage1/exercises/ex1-b.md does not exist"),
            "{err}"
        );

        dir.write(
            "book/src/stage1/exercises/ex1-b.md",
            &(marked("ex1-b") + &marked("ex1-a")),
        );
        let err = update(&dir.0, &manifest, true).unwrap_err().to_string();
        assert_eq!(
            err,
            "book/src/stage1/exercises/ex1-b.md: holds the hints markers of ex1-a; only \
             ex1-b's hints belong here"
        );

        dir.write("book/src/stage1/exercises/ex1-b.md", "# B\n");
        let err = update(&dir.0, &manifest, true).unwrap_err().to_string();
        assert_eq!(
            err,
            "book/src/stage1/exercises/ex1-b.md: no `<!-- hints:ex1-b:begin -->` line for ex1-b"
        );

        dir.write("book/src/stage1/exercises/ex1-b.md", &marked("ex1-b"));
        dir.write("book/src/stage1/exercises.md", &marked("ex1-a"));
        let err = update(&dir.0, &manifest, true).unwrap_err().to_string();
        assert_eq!(
            err,
            "book/src/stage1/exercises.md: holds the hints markers of ex1-a; an exercise's \
             hints belong on its own page, book/src/stage1/exercises/ex1-a.md"
        );
    }
}
