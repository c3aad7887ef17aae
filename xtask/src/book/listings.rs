//! The strict half of `cargo xtask book build`: where each `{{#include}}` stands in
//! its markdown, what mdBook says while it builds, and how wide and how long each
//! listing is once mdBook has rendered it.
//!
//! An include inside a list item is the classic way to break a page: mdBook pastes
//! the file in, the pasted lines are not indented like the item, and the code
//! leaves its fence, taking the rest of the page with it as raw markdown. The
//! listing checks read the rendered HTML, so they measure exactly what a reader
//! sees, whichever way the code got there.

use std::fmt;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use pulldown_cmark::{CodeBlockKind, Event, Options, Parser, Tag, TagEnd};
use unicode_width::UnicodeWidthStr;

/// Columns of code that fit on mdBook's page without scrolling. Its content column
/// is 750 px wide, a listing pads 10 px on each side, and code is set in 14 px
/// Source Code Pro at 8.4 px a column: 730 / 8.4 = 86.9. The workspace's
/// `rustfmt.toml` keeps code within 85.
pub(crate) const PAGE_COLUMNS: usize = 86;

/// The most lines a listing may have, unless it is marked [`LONG_LISTING`].
pub(crate) const MAX_LINES: usize = 60;

/// The code-block attribute that marks a deliberate long listing: a fence opened
/// with ```` ```rust,long-listing ````. mdBook turns it into a class.
pub(crate) const LONG_LISTING: &str = "long-listing";

/// One thing the strict build found wrong.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Finding {
    /// Where: `file:line` for a markdown source, the page and listing for HTML.
    pub(crate) place: String,
    /// What is wrong.
    pub(crate) what: String,
}

impl fmt::Display for Finding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.place, self.what)
    }
}

/// Checks where the include directives of one markdown file stand: each must be the
/// first thing on its line, and no list item may contain it. `label` names the file
/// in the findings.
pub(crate) fn check_placement(label: &str, text: &str) -> Vec<Finding> {
    let items: Vec<std::ops::Range<usize>> = Parser::new_ext(text, Options::empty())
        .into_offset_iter()
        .filter_map(|(event, range)| {
            matches!(event, Event::Start(Tag::Item)).then_some(range)
        })
        .collect();
    let mut findings = Vec::new();
    for directive in super::find_directives(text) {
        let place = format!("{label}:{}", directive.line);
        let line_start = text[..directive.offset].rfind('\n').map_or(0, |p| p + 1);
        if directive.offset != line_start {
            findings.push(Finding {
                place: place.clone(),
                what: format!(
                    "{} does not start its line (mdBook pastes the file where the \
                     directive stands, so an indented one breaks the listing)",
                    directive.text
                ),
            });
        }
        if items.iter().any(|item| item.contains(&directive.offset)) {
            findings.push(Finding {
                place,
                what: format!(
                    "{} is inside a list item (its code would leave the fence); end \
                     the list before the listing",
                    directive.text
                ),
            });
        }
    }
    findings
}

/// Checks that one markdown page translates safely: each heading carries its anchor
/// as `{#id}`, so that a translated heading keeps the id the book's links point to;
/// and each ```` ```text,mermaid ```` diagram holds a `"`, without which
/// `mdbook-xgettext` does not extract it (it takes a code block of a language it
/// does not know, such as `text`, only when the block has a string or a `//`), and
/// the diagram would stay English in the Chinese edition.
pub(crate) fn check_translatable(label: &str, text: &str) -> Vec<Finding> {
    let line_of = |offset: usize| text[..offset].matches('\n').count() + 1;
    let mut findings = Vec::new();
    let mut diagram: Option<(usize, String)> = None;
    for (event, range) in
        Parser::new_ext(text, Options::ENABLE_HEADING_ATTRIBUTES).into_offset_iter()
    {
        match event {
            Event::Start(Tag::Heading { id: None, .. }) => findings.push(Finding {
                place: format!("{label}:{}", line_of(range.start)),
                what: format!(
                    "the heading `{}` has no `{{#id}}`; add the id mdBook gives it, so \
                     that the Chinese edition's translated heading keeps its anchor",
                    text[range].trim()
                ),
            }),
            Event::Start(Tag::CodeBlock(CodeBlockKind::Fenced(info)))
                if info.split([',', ' ']).any(|word| word == "mermaid") =>
            {
                diagram = Some((line_of(range.start), String::new()));
            }
            Event::Text(body) => {
                if let Some((_, source)) = &mut diagram {
                    source.push_str(&body);
                }
            }
            Event::End(TagEnd::CodeBlock) => {
                if let Some((line, source)) = diagram.take()
                    && !source.contains('"')
                {
                    findings.push(Finding {
                        place: format!("{label}:{line}"),
                        what: "a mermaid diagram without a `\"`: mdbook-xgettext skips \
                               it, so its labels cannot be translated; quote a label, \
                               or add a `%%` comment that holds a quote"
                            .into(),
                    });
                }
            }
            _ => {}
        }
    }
    findings
}

/// The lines of mdBook's output that are warnings or errors. mdBook logs
/// ` WARN …` and ` ERROR …`; preprocessors print their own `Warning:` lines.
pub(crate) fn warnings(output: &str) -> Vec<&str> {
    output
        .lines()
        .filter(|line| {
            let word = line.trim_start();
            ["WARN", "ERROR", "Warning", "warning:", "Error", "error:"]
                .iter()
                .any(|w| word.starts_with(w) || line.contains(&format!("[{w}")))
        })
        .collect()
}

/// One listing of a rendered page.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Listing {
    /// The classes of its `<code>`: `language-rust`, `long-listing`, …
    pub(crate) classes: Vec<String>,
    /// Its text, as the reader sees it.
    pub(crate) text: String,
}

/// The listings (`<pre><code …>…</code></pre>`) of one HTML page, in page order.
pub(crate) fn listings(html: &str) -> Vec<Listing> {
    let mut found = Vec::new();
    let mut rest = html;
    while let Some(at) = rest.find("<pre") {
        rest = &rest[at + 4..];
        let Some(open_end) = rest.find('>') else {
            break;
        };
        let after_pre = rest[open_end + 1..].trim_start();
        if !after_pre.starts_with("<code") {
            continue;
        }
        let Some(code_end) = after_pre.find('>') else {
            break;
        };
        let tag = &after_pre[..code_end];
        let Some(close) = after_pre.find("</code>") else {
            break;
        };
        let classes = tag
            .split_once("class=\"")
            .and_then(|(_, c)| c.split_once('"'))
            .map(|(c, _)| c.split_whitespace().map(String::from).collect())
            .unwrap_or_default();
        found.push(Listing {
            classes,
            text: unescape(&strip_tags(&after_pre[code_end + 1..close])),
        });
        rest = &after_pre[close..];
    }
    found
}

/// `html` without its tags.
pub(crate) fn strip_tags(html: &str) -> String {
    let mut out = String::with_capacity(html.len());
    let mut in_tag = false;
    for c in html.chars() {
        match c {
            '<' => in_tag = true,
            '>' if in_tag => in_tag = false,
            c if !in_tag => out.push(c),
            _ => {}
        }
    }
    out
}

/// Text with the entities mdBook writes in code turned back into characters.
pub(crate) fn unescape(text: &str) -> String {
    text.replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&#39;", "'")
        .replace("&#x27;", "'")
        .replace("&amp;", "&")
}

/// What is wrong with one listing: too wide for the page, or too long unless
/// marked [`LONG_LISTING`].
pub(crate) fn check_listing(listing: &Listing) -> Vec<String> {
    let text = listing.text.trim_end_matches('\n');
    let lines: Vec<&str> = text.split('\n').collect();
    let mut problems = Vec::new();
    if let Some((number, widest)) = lines
        .iter()
        .enumerate()
        .map(|(i, line)| (i + 1, line.width()))
        .max_by_key(|&(_, width)| width)
        .filter(|&(_, width)| width > PAGE_COLUMNS)
    {
        problems.push(format!(
            "{widest} columns wide at its line {number}; the page holds {PAGE_COLUMNS}"
        ));
    }
    if lines.len() > MAX_LINES && !listing.classes.iter().any(|c| c == LONG_LISTING)
    {
        problems.push(format!(
            "{} lines long; show it in parts of at most {MAX_LINES}, or mark the \
             fence `{LONG_LISTING}` if the length is deliberate",
            lines.len()
        ));
    }
    problems
}

/// Checks every listing of every page under `out` (mdBook's HTML output), except
/// the print page, which repeats them all. Returns how many listings were checked,
/// and the findings.
pub(crate) fn check_rendered(out: &Path) -> io::Result<(usize, Vec<Finding>)> {
    let mut pages = Vec::new();
    collect_pages(out, &mut pages)?;
    pages.sort();
    let mut count = 0;
    let mut findings = Vec::new();
    for page in pages {
        let html = fs::read_to_string(&page)?;
        let label = page
            .strip_prefix(out)
            .unwrap_or(&page)
            .display()
            .to_string();
        for (index, listing) in listings(&html).iter().enumerate() {
            // A diagram's source is not a listing: the browser draws it, and
            // `book browser-check` checks the drawing.
            if listing.classes.iter().any(|c| c == "mermaid") {
                continue;
            }
            count += 1;
            for what in check_listing(listing) {
                let first = listing.text.lines().find(|l| !l.trim().is_empty());
                let first: String =
                    first.unwrap_or("").trim().chars().take(60).collect();
                findings.push(Finding {
                    place: format!("{label}: listing {} (`{first}`)", index + 1),
                    what,
                });
            }
        }
    }
    Ok((count, findings))
}

/// The book's pages under `dir`: every `.html` file except mdBook's print page,
/// table of contents and 404 page.
pub(crate) fn collect_pages(dir: &Path, out: &mut Vec<PathBuf>) -> io::Result<()> {
    for entry in fs::read_dir(dir)? {
        let path = entry?.path();
        if path.is_dir() {
            collect_pages(&path, out)?;
        } else if path.extension().is_some_and(|e| e == "html")
            && !path.file_name().is_some_and(|n| {
                n == "print.html" || n == "toc.html" || n == "404.html"
            })
        {
            out.push(path);
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn whats(findings: &[Finding]) -> Vec<String> {
        findings.iter().map(ToString::to_string).collect()
    }

    #[test]
    fn an_include_at_the_start_of_a_line_outside_lists_passes() {
        let md =
            "# A\n\n- an item\n- another\n\n```rust\n{{#include a.rs:x}}\n```\n";
        assert_eq!(whats(&check_placement("a.md", md)), Vec::<String>::new());
    }

    #[test]
    fn an_include_inside_a_list_item_is_found() {
        let md = "# A\n\n- an item:\n\n  ```rust\n  {{#include a.rs:x}}\n  ```\n";
        let found = whats(&check_placement("a.md", md));
        assert_eq!(found.len(), 2, "{found:?}");
        assert!(found[0].starts_with("a.md:6: {{#include a.rs:x}} does not start"));
        assert!(found[1].contains("inside a list item"));
    }

    #[test]
    fn an_include_lazily_continuing_a_list_item_is_found() {
        let md = "1. first\n{{#include a.rs:x}}\n";
        let found = whats(&check_placement("a.md", md));
        assert_eq!(found.len(), 1, "{found:?}");
        assert!(found[0].starts_with("a.md:2:") && found[0].contains("list item"));
    }

    #[test]
    fn headings_need_ids_and_diagrams_a_quote() {
        let md = "# Title {#title}\n\n## Plain\n\n```text,mermaid\nflowchart LR\n  A --> B\n```\n\n\
                  ```text,mermaid\nflowchart LR\n  A[\"a\"] --> B\n```\n\n```rust\nfn a() {}\n```\n";
        let found = whats(&check_translatable("a.md", md));
        assert_eq!(found.len(), 2, "{found:?}");
        assert!(
            found[0].starts_with("a.md:3: the heading `## Plain` has no `{#id}`")
        );
        assert!(found[1].starts_with("a.md:5: a mermaid diagram without"));
    }

    #[test]
    fn mdbook_warnings_are_picked_out() {
        let out = " INFO Book building has started\n WARN missing file\nWarning: The \
                   mdbook-mermaid preprocessor was built against 0.5.0\n INFO done\n";
        assert_eq!(
            warnings(out),
            vec![
                " WARN missing file",
                "Warning: The mdbook-mermaid preprocessor was built against 0.5.0"
            ]
        );
        assert!(warnings(" INFO Running the html backend\n").is_empty());
    }

    #[test]
    fn listings_are_read_from_html_with_their_classes() {
        let html = "<p>x</p><pre class=\"playground\"><code class=\"language-rust \
                    long-listing\">fn <span class=\"hljs\">a</span>() -&gt; &amp;str \
                    {}</code></pre><pre class=\"mermaid\">graph</pre>\
                    <pre><code>b\n</code></pre>";
        let found = listings(html);
        assert_eq!(found.len(), 2);
        assert_eq!(found[0].classes, vec!["language-rust", "long-listing"]);
        assert_eq!(found[0].text, "fn a() -> &str {}");
        assert_eq!(found[1].text, "b\n");
    }

    #[test]
    fn wide_and_long_listings_are_found_and_long_ones_may_be_marked() {
        let listing = |text: String, classes: &[&str]| Listing {
            classes: classes.iter().map(|c| c.to_string()).collect(),
            text,
        };
        let fits = "x".repeat(PAGE_COLUMNS);
        assert!(check_listing(&listing(fits.clone(), &[])).is_empty());
        let wide = format!("a\n{fits}y\n");
        assert_eq!(
            check_listing(&listing(wide, &[])),
            vec![format!(
                "87 columns wide at its line 2; the page holds {PAGE_COLUMNS}"
            )]
        );
        // A CJK character takes two columns on the page.
        let cjk = "监".repeat(PAGE_COLUMNS / 2 + 1);
        assert_eq!(check_listing(&listing(cjk, &[])).len(), 1);
        let long = "x\n".repeat(MAX_LINES + 1);
        assert_eq!(check_listing(&listing(long.clone(), &[])).len(), 1);
        assert!(check_listing(&listing(long, &[LONG_LISTING])).is_empty());
        assert!(check_listing(&listing("x\n".repeat(MAX_LINES), &[])).is_empty());
    }
}
