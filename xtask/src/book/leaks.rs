//! The check that no page but a solution page gives an exercise away, run on the
//! built HTML of both editions.
//!
//! The `exercise-stubs` preprocessor (see [`super::stubs`]) keeps the reference
//! bodies out of the listings it rewrites; this check looks at what the reader gets,
//! whatever way it got there: a listing included some other way, or code typed into
//! the markdown. It reads every exercise region's body from its source file and every
//! page's code (the text of its `<code>` elements, tags stripped and entities
//! decoded), compares them line by line, each line trimmed, and counts only the
//! *distinctive* lines of a body: those with at least [`DISTINCTIVE`] letters, digits
//! and underscores, so that `}`, `Ok(())`, `None` or `continue;` never count, and
//! that its file has nowhere outside its exercise regions (a sibling function's
//! `let Some(node) = &res.node else {`, which a chapter may show, gives nothing
//! away). A page gives a body away when its code holds
//!
//! - more than half of the body's distinctive lines, anywhere on the page, or
//! - [`RUN`] or more of them in a row (trivial lines between them aside) in one
//!   `<code>` element.
//!
//! Pages under `solutions/` are where the bodies belong, and mdBook's print page
//! repeats every page, solutions included; neither is checked.

use std::collections::BTreeSet;
use std::fs;
use std::io;
use std::path::Path;

use super::listings::{self, Finding};
use super::stubs::is_solution_page;
use crate::error::Error;
use crate::exercise::manifest::Manifest;
use crate::exercise::region;

/// The letters, digits and underscores a line needs to count as distinctive.
pub(crate) const DISTINCTIVE: usize = 10;

/// The distinctive lines in a row that give a body away.
pub(crate) const RUN: usize = 3;

/// The reference body of one exercise region.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Body {
    /// The exercise, e.g. `ex1-split-key`.
    pub(crate) id: String,
    /// Its distinctive lines, trimmed, in order.
    pub(crate) lines: Vec<String>,
}

impl Body {
    /// The body of `id` from its text (the lines between the markers), without the
    /// lines in `elsewhere` (trimmed lines of its file outside the exercise regions).
    pub(crate) fn new(id: &str, text: &str, elsewhere: &BTreeSet<&str>) -> Body {
        Body {
            id: id.to_string(),
            lines: distinctive_lines(text)
                .into_iter()
                .filter(|line| !elsewhere.contains(line.as_str()))
                .collect(),
        }
    }
}

/// Whether a trimmed line counts, see [`DISTINCTIVE`].
fn is_distinctive(line: &str) -> bool {
    line.chars()
        .filter(|c| c.is_alphanumeric() || *c == '_')
        .count()
        >= DISTINCTIVE
}

/// The distinctive lines of `text`, trimmed, in order.
fn distinctive_lines(text: &str) -> Vec<String> {
    text.lines()
        .map(str::trim)
        .filter(|line| is_distinctive(line))
        .map(String::from)
        .collect()
}

/// The reference body of every exercise in the manifest, read from its file. A
/// region that holds a stub (a learner's checkout after `exercise start`) has no
/// reference body to give away, and is left out.
pub(crate) fn reference_bodies(
    root: &Path,
    manifest: &Manifest,
) -> Result<Vec<Body>, Error> {
    let mut bodies = Vec::new();
    for ex in &manifest.exercises {
        let path = root.join(&ex.file);
        let text = fs::read_to_string(&path).map_err(Error::io("read", &path))?;
        if region::is_stub(&text, &ex.id).map_err(Error::region(&ex.file))? {
            continue;
        }
        let body = region::body(&text, &ex.id).map_err(Error::region(&ex.file))?;
        let elsewhere = outside_regions(&text).map_err(Error::region(&ex.file))?;
        bodies.push(Body::new(&ex.id, &body, &elsewhere));
    }
    Ok(bodies)
}

/// The trimmed lines of `text` outside its exercise regions.
fn outside_regions(text: &str) -> Result<BTreeSet<&str>, region::Error> {
    let mut inside = vec![false; text.lines().count()];
    for (id, _) in region::exercise_anchors(text) {
        let found = region::find(text, &id)?;
        inside[found.open..=found.close].fill(true);
    }
    Ok(text
        .lines()
        .zip(inside)
        .filter(|(_, inside)| !inside)
        .map(|(line, _)| line.trim())
        .collect())
}

/// The text of every `<code>` element of a page (inline code too), tags stripped and
/// entities decoded.
pub(crate) fn code_texts(html: &str) -> Vec<String> {
    let mut found = Vec::new();
    let mut rest = html;
    while let Some(at) = rest.find("<code") {
        rest = &rest[at + 5..];
        // `<code>` or `<code class=…>`, not `<codex>`.
        if !rest.starts_with(['>', ' ', '\t', '\n']) {
            continue;
        }
        let Some(open_end) = rest.find('>') else {
            break;
        };
        let Some(close) = rest.find("</code>") else {
            break;
        };
        if close > open_end {
            found.push(listings::unescape(&listings::strip_tags(
                &rest[open_end + 1..close],
            )));
        }
        rest = &rest[close..];
    }
    found
}

/// How much of `body` the code of a page shows, when it is enough to give the body
/// away: e.g. `5 of its 7 distinctive lines, 4 in a row`.
pub(crate) fn gives_away(body: &Body, codes: &[String]) -> Option<String> {
    if body.lines.is_empty() {
        return None;
    }
    let blocks: Vec<Vec<String>> =
        codes.iter().map(|code| distinctive_lines(code)).collect();
    let shown = body
        .lines
        .iter()
        .filter(|line| blocks.iter().flatten().any(|l| l == *line))
        .count();
    let run = blocks
        .iter()
        .map(|block| longest_common_run(&body.lines, block))
        .max()
        .unwrap_or(0);
    (shown * 2 > body.lines.len() || run >= RUN).then(|| {
        format!(
            "{shown} of its {} distinctive line(s), {run} in a row",
            body.lines.len()
        )
    })
}

/// The length of the longest run of consecutive lines that `a` and `b` share.
fn longest_common_run(a: &[String], b: &[String]) -> usize {
    let mut best = 0;
    let mut previous = vec![0usize; b.len() + 1];
    for x in a {
        let mut current = vec![0usize; b.len() + 1];
        for (j, y) in b.iter().enumerate() {
            if x == y {
                current[j + 1] = previous[j] + 1;
                best = best.max(current[j + 1]);
            }
        }
        previous = current;
    }
    best
}

/// Checks every page under `dir` (one edition's output), except the pages under
/// `skip` (the other edition, built inside this one), the solution pages and the
/// print page. Returns how many pages were checked, and the findings, each placed
/// as `label/page.html`.
pub(crate) fn check(
    dir: &Path,
    skip: Option<&Path>,
    label: &str,
    bodies: &[Body],
) -> io::Result<(usize, Vec<Finding>)> {
    let mut pages = Vec::new();
    listings::collect_pages(dir, &mut pages)?;
    pages.sort();
    let mut checked = 0;
    let mut findings = Vec::new();
    for page in pages {
        if skip.is_some_and(|skip| page.starts_with(skip)) {
            continue;
        }
        let relative = page.strip_prefix(dir).unwrap_or(&page);
        if is_solution_page(relative) {
            continue;
        }
        checked += 1;
        let codes = code_texts(&fs::read_to_string(&page)?);
        for body in bodies {
            if let Some(how_much) = gives_away(body, &codes) {
                findings.push(Finding {
                    place: Path::new(label).join(relative).display().to_string(),
                    what: format!(
                        "shows the reference body of {} ({how_much}); a chapter shows the \
                         function's signature with the stub, and the body belongs on its \
                         solution page",
                        body.id
                    ),
                });
            }
        }
    }
    Ok((checked, findings))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::book::tests::TempDir;

    /// The body of an exercise: five distinctive lines and some trivial ones.
    const BODY: &str = "\
    if old_values == new_values {
        return;
    }
    for value in old_values {
        if !new_values.contains(value) {
            delete_key_from_index(index, key, value);
        }
    }
    Ok(())
";

    fn body() -> Body {
        Body::new("ex1-update-index", BODY, &BTreeSet::new())
    }

    /// A page whose one listing is `code`, as mdBook renders it.
    fn page(code: &str) -> String {
        let escaped = code
            .replace('&', "&amp;")
            .replace('<', "&lt;")
            .replace('>', "&gt;");
        format!(
            "<p>Text with <code>inline</code>.</p><pre><code class=\"language-rust\">\
             <span class=\"hljs-keyword\">fn</span> main() {{\n{escaped}\n}}</code></pre>"
        )
    }

    #[test]
    fn distinctive_lines_leave_trivial_ones_out() {
        assert_eq!(
            body().lines,
            [
                "if old_values == new_values {",
                "for value in old_values {",
                "if !new_values.contains(value) {",
                "delete_key_from_index(index, key, value);",
            ]
        );
    }

    #[test]
    fn lines_the_file_has_outside_its_regions_do_not_count() {
        let file = format!(
            "fn sibling() {{\n    for value in old_values {{\n}}\nfn f() {{\n    \
             // ANCHOR: ex1-update-index\n{BODY}    // ANCHOR_END: ex1-update-index\n}}\n"
        );
        let elsewhere = outside_regions(&file).unwrap();
        assert!(elsewhere.contains("for value in old_values {"));
        assert!(!elsewhere.contains("if old_values == new_values {"));
        let body = Body::new("ex1-update-index", BODY, &elsewhere);
        assert_eq!(body.lines.len(), 3);
        assert!(
            !body
                .lines
                .iter()
                .any(|line| line == "for value in old_values {")
        );
    }

    #[test]
    fn code_is_read_from_every_code_element() {
        let html = "<p><code>a &amp;&amp; b</code> <codex>no</codex></p>\
                    <pre><code class=\"x\">fn <span>f</span>() -&gt; u8\n</code></pre>";
        assert_eq!(code_texts(html), ["a && b", "fn f() -> u8\n"]);
    }

    #[test]
    fn a_page_with_the_body_gives_it_away() {
        let code = format!("update(\n{BODY})\n");
        let found = gives_away(&body(), &code_texts(&page(&code)));
        assert_eq!(
            found.as_deref(),
            Some("4 of its 4 distinctive line(s), 4 in a row")
        );
    }

    #[test]
    fn three_lines_in_a_row_are_enough() {
        let code = "for value in old_values {\n    if !new_values.contains(value) {\n        \
                    delete_key_from_index(index, key, value);\n";
        assert!(gives_away(&body(), &code_texts(&page(code))).is_some());
        // Two in a row, and half of the lines, are not.
        let code =
            "for value in old_values {\n    if !new_values.contains(value) {\n";
        assert_eq!(gives_away(&body(), &code_texts(&page(code))), None);
    }

    #[test]
    fn most_lines_scattered_over_the_page_give_it_away() {
        let html = format!(
            "{}{}{}",
            page("if old_values == new_values {"),
            page("for value in old_values {"),
            page("delete_key_from_index(index, key, value);")
        );
        let found = gives_away(&body(), &code_texts(&html));
        assert_eq!(
            found.as_deref(),
            Some("3 of its 4 distinctive line(s), 1 in a row")
        );
    }

    #[test]
    fn a_page_with_the_stub_passes() {
        let code = "update_single_index(index: &mut Index, old_values: &[V], new_values: &[V]) {\n    \
                    // Exercise: see book/src/stage1/exercises/ex1-update-index.md\n    \
                    let _ = (&index, &old_values, &new_values);\n    \
                    todo!(\"ex1-update-index: Move a key between index sets\")\n}\n";
        assert_eq!(gives_away(&body(), &code_texts(&page(code))), None);
    }

    #[test]
    fn solution_and_print_pages_are_not_checked() {
        let dir = TempDir::new();
        let leaked = page(BODY);
        dir.write("stage1/index.html", &page("fn stub() { todo!() }"));
        dir.write("stage1/solutions/ex1-update-index.html", &leaked);
        dir.write("print.html", &leaked);
        dir.write("zh-CN/stage1/index.html", &leaked);
        let (checked, findings) =
            check(&dir.0, Some(&dir.0.join("zh-CN")), "", &[body()]).unwrap();
        assert_eq!((checked, findings.len()), (1, 0));
        let (checked, findings) =
            check(&dir.0.join("zh-CN"), None, "zh-CN", &[body()]).unwrap();
        assert_eq!(checked, 1);
        assert_eq!(findings.len(), 1);
        assert!(findings[0].to_string().starts_with(
            "zh-CN/stage1/index.html: shows the reference body of ex1-update-index (4 of its 4"
        ));
    }
}
