//! The mdBook preprocessor `exercise-stubs` (`cargo xtask book preprocess`): the
//! chapters show each exercise's function with the stub in place of its body.
//!
//! A chapter teaches the function an exercise is about, so it includes the function
//! from its crate through an anchor around it, and mdBook would paste the reference
//! body with it. This preprocessor runs after `gettext` and before `links` (see
//! `book/book.toml`). On every page that is not under a `solutions/` folder it
//! replaces each `{{#include file:anchor}}` (or line range, or whole file) whose lines
//! hold an exercise region with those lines, already included the way mdBook would
//! include them (the `ANCHOR` lines of an anchor dropped), in which the region's body
//! is the stub that `cargo xtask exercise start` writes ([`region::stub`]). A
//! `{{#rustdoc_include}}` puts the whole file on the page (the lines outside its
//! selection hidden, not absent), so it gets every region of the file stubbed, as
//! does a `{{#playground}}`, which is a whole file. The solution pages keep the
//! reference bodies: there, mdBook's `links` does the including as usual.
//!
//! Two things are errors, with the page's `file:line`: a chapter page that includes a
//! region itself (`file:ex1-…`), which is nothing but the reference body, and an
//! include whose lines hold part of a region, which no stub can replace.
//!
//! The code stays in one place: the preprocessor reads the same files and anchors as
//! `links`, and the stub comes from the same function as the learner's.
//!
//! The protocol (mdBook 0.5): `COMMAND supports RENDERER` exits 0 when the
//! preprocessor runs for that renderer; `COMMAND` reads `[context, book]` as JSON
//! from stdin and writes the book back to stdout. The book is handled as plain JSON,
//! so only the fields this module reads (`root`, `config.book.src`, and a chapter's
//! `content`, `path` and `source_path`) need to keep their names.

use std::collections::BTreeMap;
use std::fs;
use std::io::{self, Read, Write};
use std::path::{Component, Path, PathBuf};

use serde_json::Value;

use super::{
    Directive, Kind, Problem, Selection, anchor_name, find_directives, parse_path,
};
use crate::error::Error;
use crate::exercise::manifest::Manifest;
use crate::exercise::region::{self, Note};

/// The preprocessor's name in `book/book.toml` (`[preprocessor.exercise-stubs]`).
pub(crate) const NAME: &str = "exercise-stubs";

/// The environment variable that overrides its command, as mdBook reads it.
pub(crate) const COMMAND_ENV: &str = "MDBOOK_PREPROCESSOR__EXERCISE_STUBS__COMMAND";

/// The environment variable that overrides its `before` list.
pub(crate) const BEFORE_ENV: &str = "MDBOOK_PREPROCESSOR__EXERCISE_STUBS__BEFORE";

/// Whether the preprocessor runs for `renderer`: for every renderer but `xgettext`,
/// which extracts the messages of the pages as written, includes unexpanded.
pub(crate) fn supports(renderer: &str) -> bool {
    renderer != "xgettext"
}

/// Whether a page (its path under `book/src`) is a solution page, which keeps the
/// reference bodies.
pub(crate) fn is_solution_page(path: &Path) -> bool {
    path.components()
        .any(|c| matches!(c, Component::Normal(name) if name == "solutions"))
}

/// What the stubs say, by exercise id.
#[derive(Debug, Clone, Default)]
pub(crate) struct Notes(BTreeMap<String, Note>);

impl Notes {
    /// The note of every exercise in the manifest.
    pub(crate) fn from_manifest(manifest: &Manifest) -> Notes {
        Notes(
            manifest
                .exercises
                .iter()
                .map(|ex| (ex.id.clone(), manifest.stub_note(ex)))
                .collect(),
        )
    }
}

/// One include the preprocessor refuses, in the page as mdBook handed it over.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Refusal {
    /// The directive's line in the page, from 1.
    pub(crate) line: usize,
    /// The directive as written.
    pub(crate) directive: String,
    /// Why, and what to do instead.
    pub(crate) reason: String,
}

/// What [`rewrite`] made of one page.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Rewritten {
    /// The page, with the includes that hold a region replaced by their stubbed text.
    pub(crate) content: String,
    /// How many includes were replaced.
    pub(crate) stubbed: usize,
    /// The includes refused, in page order (they are left as written).
    pub(crate) refusals: Vec<Refusal>,
}

/// Rewrites the includes of one chapter page (not a solution page) whose markdown
/// lives in `dir`, as the module doc says. Includes without a region, and those whose
/// file or anchor is missing (the include check reports those), are left to `links`.
pub(crate) fn rewrite(content: &str, dir: &Path, notes: &Notes) -> Rewritten {
    let mut out = String::with_capacity(content.len());
    let mut done = 0;
    let mut stubbed = 0;
    let mut refusals = Vec::new();
    for directive in find_directives(content) {
        match expand(dir, &directive, notes) {
            Ok(None) => {}
            Ok(Some(text)) => {
                out.push_str(&content[done..directive.offset]);
                out.push_str(&text);
                done = directive.offset + directive.text.len();
                stubbed += 1;
            }
            Err(reason) => refusals.push(Refusal {
                line: directive.line,
                directive: directive.text.clone(),
                reason,
            }),
        }
    }
    out.push_str(&content[done..]);
    Rewritten {
        content: out,
        stubbed,
        refusals,
    }
}

/// The lines of `text`, from 0, that a selection takes, as `[first, end)`; for an
/// anchor, the lines between its marker lines. `None` when the anchor is missing.
fn span(text: &str, selection: &Selection) -> Option<(usize, usize)> {
    let count = text.lines().count();
    match selection {
        Selection::All => Some((0, count)),
        Selection::Lines { start, end } => {
            let first = start.saturating_sub(1);
            Some((first, end.unwrap_or(count).max(first)))
        }
        Selection::Anchor(name) => {
            let mut lines = text.lines().enumerate();
            let open = lines
                .by_ref()
                .find(|(_, line)| anchor_name(line, "ANCHOR:") == Some(name))?
                .0;
            let close = lines
                .find(|(_, line)| anchor_name(line, "ANCHOR_END:") == Some(name))
                .map_or(count, |(index, _)| index);
            Some((open + 1, close))
        }
    }
}

/// The text one directive stands for with its regions stubbed, `None` when it holds
/// no region (or cannot be read: `links` and the include check report that), or why
/// it is refused.
fn expand(
    dir: &Path,
    directive: &Directive,
    notes: &Notes,
) -> Result<Option<String>, String> {
    let spec = directive.target.split_whitespace().next().unwrap_or("");
    let (path, selection) = match directive.kind {
        Kind::Include | Kind::RustdocInclude => parse_path(spec),
        Kind::Playground => (spec, Selection::All),
    };
    let Ok(text) = fs::read_to_string(dir.join(path)) else {
        return Ok(None);
    };
    if let Selection::Anchor(name) = &selection
        && region::exercise_stage(name).is_some()
    {
        let function = region::locate(&text, name)
            .map(|(_, function)| format!("`fn {function}`"))
            .unwrap_or_else(|_| "the function".to_string());
        return Err(format!(
            "a chapter page may not include the exercise region `{name}` itself: it is \
             the reference body. Include the anchor around {function} instead (add \
             `// ANCHOR: <name>` and `// ANCHOR_END: <name>` lines around the function \
             in `{path}` if it has none), and the page shows its signature with the stub; \
             the body belongs on the exercise's solution page"
        ));
    }
    let Some((first, end)) = span(&text, &selection) else {
        return Ok(None);
    };
    let mut regions = Vec::new();
    for (id, _) in region::exercise_anchors(&text) {
        let found =
            region::find(&text, &id).map_err(|e| format!("in `{path}`: {e}"))?;
        regions.push((id, found));
    }
    regions.sort_by_key(|(_, found)| found.open);
    let shows_all = directive.kind != Kind::Include;
    let mut stubbed = text.clone();
    let (mut shift_first, mut shift_end, mut count) = (0isize, 0isize, 0);
    for (id, found) in &regions {
        let inside = first <= found.open && found.close < end;
        let outside = found.close < first || found.open >= end;
        if !inside && !outside {
            return Err(format!(
                "its lines in `{path}` cut through the exercise region `{id}` (lines {}-{}); \
                 include the whole function around it, or stop before it",
                found.open + 1,
                found.close + 1
            ));
        }
        if !inside && !shows_all {
            continue;
        }
        let note = notes.0.get(id).ok_or_else(|| {
            format!("the exercise region `{id}` in `{path}` has no entry in exercises.toml")
        })?;
        let before = stubbed.lines().count();
        stubbed = region::stub(&stubbed, id, note)
            .map_err(|e| format!("in `{path}`: {e}"))?;
        let delta = stubbed.lines().count() as isize - before as isize;
        if found.close < first {
            shift_first += delta;
        }
        if found.open < end {
            shift_end += delta;
        }
        count += 1;
    }
    if count == 0 {
        return Ok(None);
    }
    let first = first.saturating_add_signed(shift_first);
    let end = end.saturating_add_signed(shift_end);
    Ok(Some(match (directive.kind, &selection) {
        (Kind::Include, Selection::Anchor(name)) => {
            take_anchored_lines(&stubbed, name)
        }
        (Kind::Include, _) => take_lines(&stubbed, first, end),
        (Kind::RustdocInclude, Selection::Anchor(name)) => {
            take_rustdoc_include_anchored_lines(&stubbed, name)
        }
        (Kind::RustdocInclude, _) => {
            take_rustdoc_include_lines(&stubbed, first, end)
        }
        (Kind::Playground, _) => {
            let attributes: Vec<&str> =
                directive.target.split_whitespace().skip(1).collect();
            let kind = if attributes.is_empty() {
                "rust"
            } else {
                "rust,"
            };
            let mut contents = stubbed;
            if !contents.ends_with('\n') {
                contents.push('\n');
            }
            format!("```{kind}{}\n{contents}```\n", attributes.join(","))
        }
    }))
}

/// Lines `[first, end)` of `text`, joined by `\n`: mdBook's `take_lines`.
fn take_lines(text: &str, first: usize, end: usize) -> String {
    let lines: Vec<&str> = text
        .lines()
        .skip(first)
        .take(end.saturating_sub(first))
        .collect();
    lines.join("\n")
}

/// Whether a line is an anchor marker, which mdBook drops from an anchor's lines.
fn is_marker(line: &str) -> bool {
    anchor_name(line, "ANCHOR:").is_some()
        || anchor_name(line, "ANCHOR_END:").is_some()
}

/// The lines of the anchor `name`, without marker lines: mdBook's
/// `take_anchored_lines`.
fn take_anchored_lines(text: &str, name: &str) -> String {
    let mut kept = Vec::new();
    let mut inside = false;
    for line in text.lines() {
        if inside {
            if anchor_name(line, "ANCHOR_END:") == Some(name) {
                break;
            }
            if !is_marker(line) {
                kept.push(line);
            }
        } else if anchor_name(line, "ANCHOR:") == Some(name) {
            inside = true;
        }
    }
    kept.join("\n")
}

/// Every line of `text`, those outside `[first, end)` behind `# `: mdBook's
/// `take_rustdoc_include_lines`.
fn take_rustdoc_include_lines(text: &str, first: usize, end: usize) -> String {
    let lines: Vec<String> = text
        .lines()
        .enumerate()
        .map(|(index, line)| {
            if (first..end).contains(&index) {
                line.to_string()
            } else {
                format!("# {line}")
            }
        })
        .collect();
    lines.join("\n")
}

/// Every line of `text`, those outside the anchor `name` behind `# `, marker lines
/// dropped: mdBook's `take_rustdoc_include_anchored_lines`.
fn take_rustdoc_include_anchored_lines(text: &str, name: &str) -> String {
    let mut kept = Vec::new();
    let mut inside = false;
    for line in text.lines() {
        if inside {
            if anchor_name(line, "ANCHOR_END:") == Some(name) {
                inside = false;
            } else if anchor_name(line, "ANCHOR:").is_none() {
                kept.push(line.to_string());
            }
        } else if anchor_name(line, "ANCHOR:") == Some(name) {
            inside = true;
        } else if anchor_name(line, "ANCHOR_END:").is_none() {
            kept.push(format!("# {line}"));
        }
    }
    kept.join("\n")
}

/// `cargo xtask book preprocess`: mdBook's `[context, book]` from stdin, the book
/// with its chapters rewritten to stdout. Refused includes are printed as
/// `file:line: directive: reason` and fail the build.
pub(crate) fn preprocess(root: &Path) -> Result<(), Error> {
    let mut input = String::new();
    io::stdin()
        .read_to_string(&mut input)
        .map_err(Error::io("read", "standard input"))?;
    let notes = Notes::from_manifest(&Manifest::load(root)?);
    let (book, problems) = process(root, &input, &notes)?;
    if !problems.is_empty() {
        for problem in &problems {
            eprintln!("{problem}");
        }
        return Err(Error::Check(format!(
            "{} include(s) on chapter pages would show an exercise's reference body",
            problems.len()
        )));
    }
    io::stdout()
        .write_all(book.as_bytes())
        .map_err(Error::io("write", "standard output"))
}

/// The preprocessor's work on mdBook's input: the book as JSON, and the refused
/// includes, each placed in its page's source file (`book/src/…:line`).
fn process(
    root: &Path,
    input: &str,
    notes: &Notes,
) -> Result<(String, Vec<Problem>), Error> {
    let (context, mut book): (Value, Value) = serde_json::from_str(input).map_err(|e| {
        Error::Check(format!(
            "the {NAME} preprocessor expects mdBook's `[context, book]` as JSON on its \
             standard input: {e}"
        ))
    })?;
    let pinned = super::TOOLS[0].version;
    if let Some(version) = context["mdbook_version"].as_str()
        && version != pinned
    {
        eprintln!(
            "Warning: the {NAME} preprocessor is written for mdBook {pinned}, and this is \
             mdBook {version}; `cargo xtask book build` installs {pinned}"
        );
    }
    let book_root = PathBuf::from(context["root"].as_str().unwrap_or("."));
    let src =
        book_root.join(context["config"]["book"]["src"].as_str().unwrap_or("src"));
    let mut problems = Vec::new();
    let items = book
        .get_mut("items")
        .and_then(Value::as_array_mut)
        .ok_or_else(|| {
            Error::Check(format!(
                "the {NAME} preprocessor found no `items` in mdBook's book; it speaks \
                 mdBook {pinned}'s protocol"
            ))
        })?;
    for item in items {
        visit(item, &mut |chapter| {
            problems.extend(rewrite_chapter(root, &src, chapter, notes));
        });
    }
    let json = serde_json::to_string(&book)
        .map_err(|e| Error::Check(format!("cannot write the book as JSON: {e}")))?;
    Ok((json, problems))
}

/// Calls `f` on every chapter of a book item, depth first.
fn visit(item: &mut Value, f: &mut dyn FnMut(&mut serde_json::Map<String, Value>)) {
    let Some(chapter) = item.get_mut("Chapter").and_then(Value::as_object_mut)
    else {
        return;
    };
    f(chapter);
    if let Some(children) =
        chapter.get_mut("sub_items").and_then(Value::as_array_mut)
    {
        for child in children {
            visit(child, f);
        }
    }
}

/// Rewrites one chapter of mdBook's JSON in place; returns its refused includes.
fn rewrite_chapter(
    root: &Path,
    src: &Path,
    chapter: &mut serde_json::Map<String, Value>,
    notes: &Notes,
) -> Vec<Problem> {
    let Some(path) = chapter
        .get("path")
        .and_then(Value::as_str)
        .map(PathBuf::from)
    else {
        return Vec::new();
    };
    if is_solution_page(&path) {
        return Vec::new();
    }
    let Some(content) = chapter.get("content").and_then(Value::as_str) else {
        return Vec::new();
    };
    let dir = src.join(path.parent().unwrap_or(Path::new("")));
    let rewritten = rewrite(content, &dir, notes);
    let source = chapter
        .get("source_path")
        .and_then(Value::as_str)
        .map_or_else(|| src.join(&path), |source| src.join(source));
    let problems = rewritten
        .refusals
        .iter()
        .map(|refusal| Problem {
            file: source.strip_prefix(root).unwrap_or(&source).to_path_buf(),
            line: source_line(&source, content, refusal).unwrap_or(refusal.line),
            directive: refusal.directive.clone(),
            reason: refusal.reason.clone(),
        })
        .collect();
    chapter.insert("content".into(), Value::String(rewritten.content));
    problems
}

/// The line in the page's source file of a directive refused in `content` (which the
/// Chinese edition has translated, so its lines may differ): the same occurrence of
/// the same directive.
fn source_line(source: &Path, content: &str, refusal: &Refusal) -> Option<usize> {
    let occurrence = find_directives(content)
        .iter()
        .filter(|d| d.text == refusal.directive)
        .position(|d| d.line == refusal.line)?;
    let text = fs::read_to_string(source).ok()?;
    find_directives(&text)
        .into_iter()
        .filter(|d| d.text == refusal.directive)
        .nth(occurrence)
        .map(|d| d.line)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::book::tests::TempDir;

    /// A file with an exercise region inside an anchor around its function, nested
    /// in a wider anchor, next to an anchor without a region.
    const CODE: &str = "\
use std::fmt;

// ANCHOR: all
// ANCHOR: split
/// Splits a key.
pub fn split(key: &str) -> Result<(&str, &str), Error> {
    // ANCHOR: ex1-split
    let mut parts = key.split('/');
    match (parts.next(), parts.next()) {
        (Some(a), None) => Ok((\"\", a)),
        _ => Err(Error),
    }
    // ANCHOR_END: ex1-split
}
// ANCHOR_END: split

// ANCHOR: plain
fn plain(x: u8) -> u8 {
    x + 1
}
// ANCHOR_END: plain
// ANCHOR_END: all
";

    /// The stub of `ex1-split`, as the chapters show it (indented by four).
    const STUB: &str = "    // Exercise: see book/src/stage1/exercises/ex1-split.md\n    \
                        let _ = &key;\n    todo!(\"ex1-split: Split a key\")";

    fn notes() -> Notes {
        Notes(BTreeMap::from([(
            "ex1-split".to_string(),
            Note {
                message: "ex1-split: Split a key".into(),
                page: "book/src/stage1/exercises/ex1-split.md".into(),
            },
        )]))
    }

    /// A book with `code/lib.rs` and one page, `src/ch/index.md`.
    fn book(page: &str) -> TempDir {
        let dir = TempDir::new();
        dir.write("code/lib.rs", CODE);
        dir.write("src/ch/index.md", page);
        dir
    }

    fn rewrite_page(dir: &TempDir) -> Rewritten {
        let page = fs::read_to_string(dir.0.join("src/ch/index.md")).unwrap();
        rewrite(&page, &dir.0.join("src/ch"), &notes())
    }

    #[test]
    fn an_anchor_around_the_function_shows_its_signature_and_the_stub() {
        let dir = book(
            "# Ch\n\n```rust\n{{#include ../../code/lib.rs:split}}\n```\n\nAfter.\n",
        );
        let rewritten = rewrite_page(&dir);
        assert_eq!(rewritten.refusals, []);
        assert_eq!(rewritten.stubbed, 1);
        assert_eq!(
            rewritten.content,
            format!(
                "# Ch\n\n```rust\n/// Splits a key.\npub fn split(key: &str) -> Result<(&str, \
                 &str), Error> {{\n{STUB}\n}}\n```\n\nAfter.\n"
            )
        );
        assert!(!rewritten.content.contains("parts"));
        assert!(!rewritten.content.contains("ANCHOR"));
    }

    #[test]
    fn nested_anchors_lose_every_marker_line() {
        let dir = book("{{#include ../../code/lib.rs:all}}\n");
        let rewritten = rewrite_page(&dir);
        assert_eq!(rewritten.stubbed, 1);
        assert_eq!(
            rewritten.content,
            format!(
                "/// Splits a key.\npub fn split(key: &str) -> Result<(&str, &str), Error> \
                 {{\n{STUB}\n}}\n\nfn plain(x: u8) -> u8 {{\n    x + 1\n}}\n"
            )
        );
    }

    #[test]
    fn anchors_without_a_region_pass_untouched() {
        let page = "{{#include ../../code/lib.rs:plain}}\n{{#include ../../code/lib.rs:3}}\n\
                    {{#include ../../code/lib.rs:absent}}\n{{#include ../../code/gone.rs:x}}\n";
        let dir = book(page);
        let rewritten = rewrite_page(&dir);
        assert_eq!(rewritten.content, page);
        assert_eq!((rewritten.stubbed, rewritten.refusals.len()), (0, 0));
    }

    #[test]
    fn including_the_region_itself_is_refused_with_its_line() {
        let page =
            "# Ch\n\n```rust\n{{#include ../../code/lib.rs:ex1-split}}\n```\n";
        let dir = book(page);
        let rewritten = rewrite_page(&dir);
        assert_eq!(rewritten.content, page);
        assert_eq!(rewritten.refusals.len(), 1);
        let refusal = &rewritten.refusals[0];
        assert_eq!(refusal.line, 4);
        assert_eq!(
            refusal.directive,
            "{{#include ../../code/lib.rs:ex1-split}}"
        );
        assert!(
            refusal
                .reason
                .contains("the exercise region `ex1-split` itself")
                && refusal.reason.contains("the anchor around `fn split`"),
            "{}",
            refusal.reason
        );
    }

    #[test]
    fn line_ranges_and_whole_files_are_stubbed_and_keep_their_markers() {
        // Lines 6-14: the function, its region's markers included.
        let dir = book(
            "{{#include ../../code/lib.rs:6:14}}\n---\n{{#include ../../code/lib.rs}}\n",
        );
        let rewritten = rewrite_page(&dir);
        assert_eq!(rewritten.stubbed, 2);
        let (range, whole) = rewritten.content.split_once("\n---\n").unwrap();
        assert_eq!(
            range,
            format!(
                "pub fn split(key: &str) -> Result<(&str, &str), Error> {{\n    \
                 // ANCHOR: ex1-split\n{STUB}\n    // ANCHOR_END: ex1-split\n}}"
            )
        );
        assert!(
            whole.contains(STUB)
                && whole.contains("x + 1")
                && !whole.contains("parts")
        );
    }

    #[test]
    fn lines_that_cut_through_a_region_are_refused() {
        let dir = book("{{#include ../../code/lib.rs:6:9}}\n");
        let rewritten = rewrite_page(&dir);
        assert_eq!(rewritten.refusals.len(), 1);
        assert!(
            rewritten.refusals[0]
                .reason
                .contains("cut through the exercise region")
        );
    }

    #[test]
    fn rustdoc_include_hides_the_rest_of_the_file_stubbed_too() {
        let dir = book("{{#rustdoc_include ../../code/lib.rs:plain}}\n");
        let rewritten = rewrite_page(&dir);
        assert_eq!(rewritten.stubbed, 1);
        assert!(rewritten.content.contains("# pub fn split"));
        assert!(
            rewritten
                .content
                .contains("#     todo!(\"ex1-split: Split a key\")")
        );
        assert!(
            rewritten
                .content
                .contains("\nfn plain(x: u8) -> u8 {\n    x + 1\n}")
        );
        assert!(!rewritten.content.contains("parts"));
    }

    #[test]
    fn a_region_without_an_exercise_entry_is_refused() {
        let dir = book("{{#include ../../code/lib.rs:split}}\n");
        let page = fs::read_to_string(dir.0.join("src/ch/index.md")).unwrap();
        let rewritten = rewrite(&page, &dir.0.join("src/ch"), &Notes::default());
        assert!(
            rewritten.refusals[0]
                .reason
                .contains("no entry in exercises.toml")
        );
    }

    #[test]
    fn renderers_and_solution_pages() {
        assert!(supports("html"));
        assert!(!supports("xgettext"));
        assert!(is_solution_page(Path::new("stage1/solutions/ex1-split.md")));
        assert!(!is_solution_page(Path::new("stage1/index.md")));
        assert!(!is_solution_page(Path::new("stage1/solutions.md")));
    }

    /// mdBook's input for a book at `dir` whose chapter `ch/index.md` holds `page`
    /// and has the solution page `ch/solutions/ex1-split.md` under it.
    fn input(dir: &TempDir, page: &str, solution: &str) -> String {
        let chapter = |name: &str, path: &str, content: &str, sub: Vec<Value>| {
            serde_json::json!({"Chapter": {
                "name": name, "content": content, "number": null, "sub_items": sub,
                "path": path, "source_path": path, "parent_names": []
            }})
        };
        let book = serde_json::json!({"items": [
            {"PartTitle": "Part"},
            chapter("Ch", "ch/index.md", page, vec![
                chapter("Solution", "ch/solutions/ex1-split.md", solution, vec![]),
            ]),
            "Separator",
        ]});
        let context = serde_json::json!({
            "root": dir.0, "config": {"book": {"src": "src"}}, "renderer": "html",
            "mdbook_version": "0.5.4"
        });
        serde_json::to_string(&(context, book)).unwrap()
    }

    #[test]
    fn the_protocol_rewrites_chapters_and_leaves_solutions() {
        let page = "{{#include ../../code/lib.rs:split}}\n";
        let solution = "{{#include ../../../code/lib.rs:ex1-split}}\n";
        let dir = book(page);
        let (json, problems) =
            process(&dir.0, &input(&dir, page, solution), &notes()).unwrap();
        assert_eq!(problems, []);
        let book: Value = serde_json::from_str(&json).unwrap();
        let chapter = &book["items"][1]["Chapter"];
        assert!(chapter["content"].as_str().unwrap().contains(STUB));
        assert_eq!(chapter["sub_items"][0]["Chapter"]["content"], solution);
        assert_eq!(book["items"][0]["PartTitle"], "Part");
        assert_eq!(book["items"][2], "Separator");
    }

    #[test]
    fn the_protocol_places_a_refusal_in_the_source_file() {
        // The page as mdBook hands it over has lost two lines (a translation may do
        // that); the refusal is placed by the source file.
        let source = "# Ch\n\nText.\n\n{{#include ../../code/lib.rs:ex1-split}}\n";
        let dir = book(source);
        let handed = "# Ch\n{{#include ../../code/lib.rs:ex1-split}}\n";
        let (_, problems) =
            process(&dir.0, &input(&dir, handed, ""), &notes()).unwrap();
        assert_eq!(problems.len(), 1);
        assert_eq!(problems[0].line, 5);
        assert!(problems[0].file.ends_with("src/ch/index.md"));
        assert!(process(&dir.0, "{}", &notes()).is_err());
    }
}
