//! The Chinese edition's translation, `book/po/zh-CN.po`: extracting the English
//! messages, merging them into the PO file, and the checks that keep the
//! translation complete and faithful.
//!
//! The English pages are the source. `mdbook-xgettext` (from mdbook-i18n-helpers)
//! cuts them into messages: a paragraph, a list item, a heading, a table cell, a
//! code comment, a whole mermaid diagram. `mdbook-gettext` puts each message's
//! translation back when the book is built with `book.language = "zh-CN"`. It runs
//! before mdBook's links preprocessor, so extraction also runs without it: a page's
//! `{{#include}}` lines are not expanded, no line of the included Rust becomes a
//! message, and the Chinese edition shows the same bytes of code as the English.
//!
//! [`check`] fails the book build when the PO file is not a complete, current and
//! faithful translation:
//! - `msgfmt --check --statistics` must report no untranslated and no fuzzy message;
//! - its messages must be exactly the ones the English pages have now (an English
//!   edit without `cargo xtask book po-update` and a translation is caught here);
//! - each translation must keep its message's code spans, link targets, inline
//!   HTML and `{{#…}}` directives, a code block its fence and line count, and a
//!   code comment its marker.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use pulldown_cmark::{Event, Parser, Tag};

use super::stubs;
use crate::error::Error;

/// The one translation: Simplified Chinese.
pub(crate) const LANGUAGE: &str = "zh-CN";

/// Where the Chinese edition is built, relative to the workspace root (mdBook 0.5
/// takes `-d` relative to the current directory): inside the English edition's
/// output, so that one directory serves both.
pub(crate) const DEST: &str = "book/book/zh-CN";

/// `book/po/zh-CN.po`.
pub(crate) fn po_path(root: &Path) -> PathBuf {
    root.join("book").join("po").join(format!("{LANGUAGE}.po"))
}

/// The environment that makes `mdbook build book` build the Chinese edition: its
/// language, and the book's title and description (in `book.toml`, which no
/// preprocessor translates).
pub(crate) fn language_env() -> [(&'static str, &'static str); 3] {
    [
        ("MDBOOK_BOOK__LANGUAGE", LANGUAGE),
        ("MDBOOK_BOOK__TITLE", "重建 Kubernetes Watch"),
        (
            "MDBOOK_BOOK__DESCRIPTION",
            "用 Rust 逐个阶段重建 client-go 的 informer 与 apiserver 的 watch cache",
        ),
    ]
}

/// Runs `mdbook-xgettext` over the English pages, with the default preprocessors
/// off (no `{{#include}}` is expanded), into a scratch directory, and returns the
/// template's path.
pub(crate) fn extract_template(root: &Path) -> Result<PathBuf, Error> {
    let scratch =
        std::env::temp_dir().join(format!("xtask-pot-{}", std::process::id()));
    let _ = fs::remove_dir_all(&scratch);
    let scratch_arg = scratch.display().to_string();
    let mut command = Command::new("mdbook");
    command
        .args(["build", "book", "-d", &scratch_arg])
        .env("MDBOOK_OUTPUT", r#"{"xgettext": {}}"#)
        .env("MDBOOK_BUILD__USE_DEFAULT_PREPROCESSORS", "false")
        // Only the links preprocessor is named in `before`, and it is off here.
        .env("MDBOOK_PREPROCESSOR__GETTEXT__BEFORE", "[]")
        // The exercise stubs say they do not run for xgettext.
        .env(stubs::BEFORE_ENV, "[]");
    if let Some(preprocessor) = super::preprocessor_command(root) {
        command.env(stubs::COMMAND_ENV, preprocessor);
    }
    let output = command
        .current_dir(root)
        .output()
        .map_err(Error::spawn("mdbook"))?;
    if !output.status.success() {
        return Err(Error::Tool {
            command: "mdbook build book (the xgettext renderer)".into(),
            detail: String::from_utf8_lossy(&output.stderr).trim().to_string(),
        });
    }
    Ok(scratch.join("messages.pot"))
}

/// `cargo xtask book po-update`: merges the English pages' messages into
/// `book/po/zh-CN.po`. A new message arrives untranslated, a changed one fuzzy with
/// its old translation; the messages the pages no longer have are dropped. Then the
/// build fails until each is translated and its fuzzy mark removed.
pub(crate) fn update(root: &Path) -> Result<(), Error> {
    let template = extract_template(root)?;
    let po = po_path(root);
    let po_arg = po.display().to_string();
    let template_arg = template.display().to_string();
    if po.is_file() {
        run_gettext(
            "msgmerge",
            &[
                "--quiet",
                "--update",
                "--backup=none",
                &po_arg,
                &template_arg,
            ],
        )?;
        run_gettext("msgattrib", &["--no-obsolete", "-o", &po_arg, &po_arg])?;
    } else {
        run_gettext(
            "msginit",
            &[
                "--no-translator",
                "--locale=zh_CN.UTF-8",
                "-i",
                &template_arg,
                "-o",
                &po_arg,
            ],
        )?;
    }
    let _ = fs::remove_dir_all(template.parent().unwrap_or(&template));
    let stats = statistics(&po)?;
    println!("xtask: {}: {stats}", po.display());
    Ok(())
}

/// Runs a GNU gettext tool, with a hint where to get it when it is missing.
fn run_gettext(tool: &str, args: &[&str]) -> Result<String, Error> {
    let output = Command::new(tool)
        .args(args)
        .env("LC_ALL", "C")
        .output()
        .map_err(|source| {
            if source.kind() == std::io::ErrorKind::NotFound {
                Error::Check(format!(
                    "`{tool}` not found: install GNU gettext (Debian: apt-get install \
                     gettext)"
                ))
            } else {
                Error::Spawn {
                    program: tool.into(),
                    source,
                }
            }
        })?;
    let stderr = String::from_utf8_lossy(&output.stderr).trim().to_string();
    if output.status.success() {
        Ok(stderr)
    } else {
        Err(Error::Tool {
            command: format!("{tool} {}", args.join(" ")),
            detail: stderr,
        })
    }
}

/// What `msgfmt --check --statistics` says of the PO file, e.g. `4021 translated
/// messages.`; an error if msgfmt finds the file malformed.
fn statistics(po: &Path) -> Result<String, Error> {
    let po_arg = po.display().to_string();
    run_gettext(
        "msgfmt",
        &["--check", "--statistics", "-o", "/dev/null", &po_arg],
    )
}

/// Untranslated and fuzzy counts in a `msgfmt --statistics` line.
fn incomplete(stats: &str) -> Vec<String> {
    stats
        .trim_end_matches('.')
        .split(", ")
        .filter(|part| part.contains("untranslated") || part.contains("fuzzy"))
        .map(str::to_string)
        .collect()
}

/// The checks of the module doc. Returns the findings, each a line to print.
pub(crate) fn check(root: &Path) -> Result<(Vec<String>, String), Error> {
    let po = po_path(root);
    if !po.is_file() {
        return Err(Error::Check(format!(
            "{} is missing; `cargo xtask book po-update` creates it",
            po.display()
        )));
    }
    let stats = statistics(&po)?;
    let mut findings: Vec<String> = incomplete(&stats)
        .into_iter()
        .map(|part| {
            format!(
                "{}: {part}; translate them and remove each `#, fuzzy` mark",
                po.display()
            )
        })
        .collect();
    let translations = read_po(&po)?;
    let template = extract_template(root)?;
    let english = read_po(&template)?;
    let _ = fs::remove_dir_all(template.parent().unwrap_or(&template));
    let english: BTreeSet<&String> = english.keys().collect();
    let translated: BTreeSet<&String> = translations.keys().collect();
    let new: Vec<_> = english.difference(&translated).collect();
    let gone: Vec<_> = translated.difference(&english).collect();
    if !new.is_empty() || !gone.is_empty() {
        findings.push(format!(
            "{} is out of date with the English pages: {} message(s) the pages have \
             and it lacks (first: {:?}), {} it has and the pages no longer do; run \
             `cargo xtask book po-update` and translate what it marks",
            po.display(),
            new.len(),
            new.first().map(|id| short(id)).unwrap_or_default(),
            gone.len()
        ));
    }
    for (msgid, msgstr) in &translations {
        if msgstr.is_empty() {
            continue;
        }
        for problem in faithfulness(msgid, msgstr) {
            findings.push(format!(
                "{}: {problem}: {:?}",
                po.display(),
                short(msgid)
            ));
        }
    }
    Ok((findings, stats))
}

/// The first 60 characters of a message, for a finding.
fn short(text: &str) -> String {
    text.chars().take(60).collect()
}

/// Every message of a PO or POT file: msgid → msgstr (empty when untranslated or
/// fuzzy). polib panics on some malformed headers, so a panic becomes an error.
fn read_po(path: &Path) -> Result<BTreeMap<String, String>, Error> {
    let parsed = std::panic::catch_unwind(|| polib::po_file::parse(path));
    let catalog = match parsed {
        Ok(Ok(catalog)) => catalog,
        Ok(Err(error)) => {
            return Err(Error::Check(format!(
                "cannot parse {}: {error}",
                path.display()
            )));
        }
        Err(_) => {
            return Err(Error::Check(format!(
                "cannot parse {}: its header lacks a field gettext expects",
                path.display()
            )));
        }
    };
    Ok(catalog
        .messages()
        .filter(|m| !m.msgid().is_empty())
        .map(|m| {
            let msgstr = if m.is_translated() && !m.is_fuzzy() {
                m.msgstr().unwrap_or_default().to_string()
            } else {
                String::new()
            };
            (m.msgid().to_string(), msgstr)
        })
        .collect())
}

/// A screenshot of a page in Chinese (`images/name-zh.png`) as the English
/// edition names the same shot (`images/name-en.png`): each edition shows the
/// page in its own language. Any other link is itself.
fn english_screenshot(link: &str) -> String {
    match link.strip_suffix("-zh.png") {
        Some(stem) if link.starts_with("images/") => format!("{stem}-en.png"),
        _ => link.to_string(),
    }
}

/// What a translation changed that it must keep. Code and links are the same in
/// both editions (a screenshot is the same shot in the edition's language); only
/// prose is translated.
pub(crate) fn faithfulness(msgid: &str, msgstr: &str) -> Vec<String> {
    let mut problems = Vec::new();
    if msgid.starts_with("```") {
        let (source, translation): (Vec<_>, Vec<_>) =
            (msgid.split('\n').collect(), msgstr.split('\n').collect());
        if source.first() != translation.first()
            || source.last() != translation.last()
        {
            problems.push("a code block's translation changed its fences".into());
        }
        if source.len() != translation.len() {
            problems.push(format!(
                "a code block's translation has {} lines, not {}",
                translation.len(),
                source.len()
            ));
        }
        return problems;
    }
    for marker in ["//", "#", "--", "%%"] {
        if msgid.starts_with(marker) && msgid.ends_with('\n') {
            if !msgstr.starts_with(marker) {
                problems.push(format!(
                    "a code comment's translation lost its `{marker}`"
                ));
            }
            return problems;
        }
    }
    if msgid.matches("{{#").count() != msgstr.matches("{{#").count() {
        problems.push("a `{{#…}}` directive was changed".into());
    }
    let (source, translation) = (Inline::of(msgid), Inline::of(msgstr));
    if source.code != translation.code {
        problems.push(format!(
            "code spans differ: the English has {:?}, the translation {:?}",
            source.code, translation.code
        ));
    }
    let translated_links: Vec<String> = translation
        .links
        .iter()
        .map(|l| english_screenshot(l))
        .collect();
    if source.links != translated_links {
        problems.push(format!(
            "link targets differ: the English has {:?}, the translation {:?}",
            source.links, translation.links
        ));
    }
    if source.html != translation.html {
        problems.push(format!(
            "inline HTML differs: the English has {:?}, the translation {:?}",
            source.html, translation.html
        ));
    }
    if source.emphasis != translation.emphasis {
        problems.push(format!(
            "the English has {} bold or italic span(s), the translation {} (between \
             CJK characters, `_` emphasises nothing)",
            source.emphasis, translation.emphasis
        ));
    }
    if !translation.tight_italics.is_empty() {
        problems.push(format!(
            "italics touching a letter or CJK character ({}): mdbook-gettext writes \
             `*x*` back as `_x_`, which CommonMark does not read as emphasis there; \
             use bold (`**x**`), as Chinese type has no italics",
            translation.tight_italics.join(", ")
        ));
    }
    if !translation.stray.is_empty() {
        problems.push(format!(
            "`{}` left as text: an emphasis or code span did not parse (with CJK \
             punctuation just inside `**`, move the `**` outside it)",
            translation.stray.join("`, `")
        ));
    }
    problems
}

/// The parts of a message's inline markdown that a translation keeps, sorted so
/// that the translation may reorder them.
#[derive(Debug, Default)]
struct Inline {
    code: Vec<String>,
    links: Vec<String>,
    html: Vec<String>,
    /// How many bold or italic spans. A translation may turn italic into bold:
    /// Chinese type has no italics.
    emphasis: usize,
    /// Italic spans with a letter or CJK character right outside them.
    tight_italics: Vec<String>,
    /// Emphasis or code markers that the parser left as text.
    stray: Vec<String>,
}

impl Inline {
    fn of(text: &str) -> Inline {
        let mut inline = Inline::default();
        // The parser hands out an unmatched `**` as two `*` texts: look at each run
        // of adjacent texts as one.
        let mut run = String::new();
        let parser = Parser::new_ext(text, pulldown_cmark::Options::ENABLE_TABLES);
        for (event, range) in parser.into_offset_iter() {
            if let Event::Text(text) = &event {
                run.push_str(text);
                continue;
            }
            for marker in ["**", "`"] {
                if run.contains(marker) {
                    inline.stray.push(marker.to_string());
                }
            }
            run.clear();
            match event {
                Event::Code(code) => inline.code.push(code.to_string()),
                Event::Start(
                    Tag::Link { dest_url, .. } | Tag::Image { dest_url, .. },
                ) => {
                    inline.links.push(dest_url.to_string());
                }
                Event::InlineHtml(html) => inline.html.push(html.to_string()),
                Event::Start(Tag::Strong) => inline.emphasis += 1,
                Event::Start(Tag::Emphasis) => {
                    inline.emphasis += 1;
                    let before = text[..range.start].chars().next_back();
                    let after = text[range.end..].chars().next();
                    if before.is_some_and(char::is_alphanumeric)
                        || after.is_some_and(char::is_alphanumeric)
                    {
                        inline.tight_italics.push(text[range].to_string());
                    }
                }
                _ => {}
            }
        }
        inline.code.sort();
        inline.links.sort();
        inline.html.sort();
        inline
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_faithful_translation_passes() {
        let problems = faithfulness(
            "**Time:** 45 minutes; see [`pop`](stage2/index.md#pop) and `len`.",
            "**时间**：45 分钟；`len` 和 [`pop`](stage2/index.md#pop) 见第 2 章。",
        );
        assert_eq!(problems, Vec::<String>::new());
    }

    #[test]
    fn a_screenshot_is_shown_in_each_edition_s_language() {
        let en = "![The page](images/live-ui-relist-en.png)";
        assert!(
            faithfulness(en, "![页面](images/live-ui-relist-zh.png)").is_empty()
        );
        let other = faithfulness(en, "![页面](images/live-ui-slow-zh.png)");
        assert!(other[0].starts_with("link targets differ"), "{other:?}");
    }

    #[test]
    fn changed_code_links_and_html_are_found() {
        let problems = faithfulness(
            "Call `pop` (see [the queue](a.md#q)) <br/>.",
            "调用 `弹出`（见[队列](b.md#q)）。",
        );
        assert_eq!(problems.len(), 3, "{problems:?}");
        assert!(problems[0].starts_with("code spans differ"));
        assert!(problems[1].starts_with("link targets differ"));
        assert!(problems[2].starts_with("inline HTML differs"));
    }

    #[test]
    fn bold_closed_by_cjk_punctuation_is_found() {
        let problems = faithfulness("**Time:** 45 minutes", "**时间：**45 分钟");
        assert_eq!(problems.len(), 2, "{problems:?}");
        assert!(problems[0].starts_with("the English has 1 bold or italic span(s)"));
        assert!(problems[1].contains("left as text"));
        let problems = faithfulness("Every _delta_ is kept", "每个_增量_都会保留");
        assert_eq!(problems.len(), 1, "{problems:?}");
        // Parsed as italics, but written back as `_增量_`, which is not.
        let problems = faithfulness("Every _delta_ is kept", "每个*增量*都会保留");
        assert_eq!(problems.len(), 1, "{problems:?}");
        assert!(problems[0].starts_with("italics touching"));
        assert!(
            faithfulness("Every _delta_ is kept", "每个**增量**都会保留").is_empty()
        );
        assert!(faithfulness("_All of it._", "_全部。_").is_empty());
    }

    #[test]
    fn code_blocks_keep_fences_and_lines_and_comments_their_marker() {
        let block = "```text,mermaid\nflowchart LR\n    A[\"queue\"] --> B\n```";
        let same_shape = "```text,mermaid\nflowchart LR\n    A[\"队列\"] --> B\n```";
        assert!(faithfulness(block, same_shape).is_empty());
        let shorter = "```text,mermaid\nflowchart LR A[\"队列\"] --> B\n```";
        assert_eq!(faithfulness(block, shorter).len(), 1);
        assert!(faithfulness("# build once\n", "# 只构建一次\n").is_empty());
        assert_eq!(faithfulness("# build once\n", "只构建一次\n").len(), 1);
    }

    #[test]
    fn statistics_with_untranslated_or_fuzzy_are_incomplete() {
        assert!(incomplete("4021 translated messages.").is_empty());
        assert_eq!(
            incomplete(
                "10 translated messages, 2 fuzzy translations, 3 untranslated messages."
            ),
            vec!["2 fuzzy translations", "3 untranslated messages"]
        );
    }
}
