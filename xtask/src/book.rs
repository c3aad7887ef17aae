//! `cargo xtask book build|serve|preprocess`: the pinned mdBook tools, the include
//! check, the calls to `mdbook`, and the book's own preprocessor.
//!
//! mdBook renders an `{{#include file:anchor}}` whose anchor does not exist as an
//! empty code block, without a warning. Chapters in this book show only code
//! included from the crates, so a renamed or deleted anchor would silently empty a
//! listing. [`check_includes`] runs before every build and turns each such case into
//! an error with its `file:line`.
//!
//! The chapters show an exercise's function with a stub for its body: the
//! preprocessor `exercise-stubs` ([`stubs`], `cargo xtask book preprocess`) puts it
//! there, and after each build [`leaks`] checks that no page but a solution page
//! shows a reference body.

use std::fmt;
use std::fs;
use std::io;
use std::path::{Component, Path, PathBuf};
use std::process::Command;

use crate::error::Error;
use crate::exercise::manifest::Manifest;

mod browser;
mod leaks;
mod listings;
mod po;
mod stubs;

pub(crate) use po::update as po_update;
pub(crate) use stubs::{preprocess, supports};

/// A tool the book needs, pinned to one version and installed with `cargo install
/// --locked`.
struct Tool {
    /// The executable's name, looked up on `PATH`.
    bin: &'static str,
    /// Whether `BIN --version` names the version; if not, `cargo install --list`
    /// is asked.
    has_version_flag: bool,
    /// The crates.io package that provides it.
    package: &'static str,
    /// The exact version the book is built with.
    version: &'static str,
}

/// The pinned tools: mdBook, and mdbook-i18n-helpers for the Chinese edition
/// (`mdbook-gettext` translates, `mdbook-xgettext` extracts). Diagrams need none:
/// they are ```` ```text,mermaid ```` blocks that the vendored `book/mermaid.min.js`
/// renders in the browser (see `book/book.toml`).
const TOOLS: [Tool; 2] = [
    Tool {
        bin: "mdbook",
        has_version_flag: true,
        package: "mdbook",
        version: "0.5.4",
    },
    Tool {
        bin: "mdbook-gettext",
        has_version_flag: false,
        package: "mdbook-i18n-helpers",
        version: "0.4.0",
    },
];

/// `cargo xtask book build`: check the includes and where they stand, ensure the
/// tools, build the English edition into `book/book` and the Chinese one into
/// `book/book/zh-CN`, then fail on any warning mdBook printed, on any listing too
/// wide for the page or too long (see [`listings`]), on a page outside `solutions/`
/// that shows an exercise's reference body (see [`leaks`]), on a page one edition
/// has and the other lacks, and on a translation that is incomplete, stale or
/// unfaithful (see [`po`]).
pub(crate) fn build(root: &Path) -> Result<(), Error> {
    let src = root.join("book").join("src");
    let report = check_includes(&src).map_err(Error::io("read", &src))?;
    let mut problems: Vec<String> = report
        .problems
        .iter()
        .map(|problem| problem.relative_to(root).to_string())
        .collect();
    problems.extend(source_findings(root, &src)?.iter().map(ToString::to_string));
    let manifest = Manifest::load(root)?;
    let (stubbed, refused) =
        stub_findings(root, &src, &stubs::Notes::from_manifest(&manifest))?;
    problems.extend(refused.iter().map(ToString::to_string));
    if !problems.is_empty() {
        for problem in &problems {
            eprintln!("{problem}");
        }
        return Err(Error::Check(format!(
            "{} problem(s) in book/src: broken or misplaced includes (mdBook would \
             render them as empty or broken listings, or show an exercise's reference \
             body on a chapter page), or headings and diagrams the Chinese edition \
             cannot translate safely",
            problems.len()
        )));
    }
    println!(
        "xtask: checked {} include(s) in {} markdown file(s): all resolve, each at \
         the start of a line outside lists, {stubbed} show an exercise's function with \
         its stub; every heading has its {{#id}}",
        report.directives, report.files
    );
    ensure_tools()?;
    let command = preprocessor_command(root);
    let preprocessor = preprocessor_env(command.as_ref());
    let output = run_mdbook_captured(root, &["build", "book"], &preprocessor)?;
    let mut findings: Vec<String> = listings::warnings(&output)
        .into_iter()
        .map(|line| format!("mdbook: {}", line.trim()))
        .collect();
    let mut chinese = po::language_env().to_vec();
    chinese.extend(preprocessor.iter().copied());
    let output =
        run_mdbook_captured(root, &["build", "book", "-d", po::DEST], &chinese)?;
    findings.extend(
        listings::warnings(&output)
            .into_iter()
            .map(|line| format!("mdbook ({}): {}", po::LANGUAGE, line.trim())),
    );
    let out = root.join("book").join("book");
    let (count, rendered) =
        listings::check_rendered(&out).map_err(Error::io("read", &out))?;
    findings.extend(rendered.iter().map(ToString::to_string));
    let bodies = leaks::reference_bodies(root, &manifest)?;
    let translated = out.join(po::LANGUAGE);
    let (english_pages, leaked) = leaks::check(&out, Some(&translated), "", &bodies)
        .map_err(Error::io("read", &out))?;
    findings.extend(leaked.iter().map(ToString::to_string));
    let (chinese_pages, leaked) =
        leaks::check(&translated, None, po::LANGUAGE, &bodies)
            .map_err(Error::io("read", &translated))?;
    findings.extend(leaked.iter().map(ToString::to_string));
    findings.extend(edition_findings(&out)?);
    let (translation, stats) = po::check(root)?;
    findings.extend(translation);
    if !findings.is_empty() {
        for finding in &findings {
            eprintln!("{finding}");
        }
        return Err(Error::Check(format!(
            "{} problem(s) in the built book: mdBook warnings, listings wider than \
             {} columns or longer than {} lines, exercise bodies outside the solution \
             pages, editions that differ in pages, or an incomplete or stale translation",
            findings.len(),
            listings::PAGE_COLUMNS,
            listings::MAX_LINES
        )));
    }
    println!(
        "xtask: both editions built, no mdBook warnings; {count} listing(s), each \
         within {} columns and {} lines (or marked `{}`); no reference body of the {} \
         exercise(s) on the {english_pages} English and {chinese_pages} Chinese pages \
         outside solutions/; book/po/{}.po: {stats}",
        listings::PAGE_COLUMNS,
        listings::MAX_LINES,
        listings::LONG_LISTING,
        bodies.len(),
        po::LANGUAGE
    );
    Ok(())
}

/// What the `exercise-stubs` preprocessor will do with the pages under `src`: how
/// many includes it stubs, and the includes it refuses, each with its `file:line`,
/// found here before mdBook runs.
fn stub_findings(
    root: &Path,
    src: &Path,
    notes: &stubs::Notes,
) -> Result<(usize, Vec<Problem>), Error> {
    let mut files = Vec::new();
    collect_markdown(src, &mut files).map_err(Error::io("read", src))?;
    files.sort();
    let (mut stubbed, mut refused) = (0, Vec::new());
    for file in files {
        let page = file.strip_prefix(src).unwrap_or(&file);
        if stubs::is_solution_page(page) {
            continue;
        }
        let text = fs::read_to_string(&file).map_err(Error::io("read", &file))?;
        let rewritten = stubs::rewrite(&text, file.parent().unwrap_or(src), notes);
        stubbed += rewritten.stubbed;
        refused.extend(rewritten.refusals.into_iter().map(|refusal| Problem {
            file: file.strip_prefix(root).unwrap_or(&file).to_path_buf(),
            line: refusal.line,
            directive: refusal.directive,
            reason: refusal.reason,
        }));
    }
    Ok((stubbed, refused))
}

/// The command that runs the `exercise-stubs` preprocessor as this very program, for
/// [`stubs::COMMAND_ENV`]: `book.toml` runs it through `cargo xtask`, for a hand-run
/// `mdbook`, and a build need not start cargo again for each of its calls. `None`
/// when `book/book.toml` does not register the preprocessor (the variable would
/// register it).
pub(crate) fn preprocessor_command(root: &Path) -> Option<String> {
    let config = fs::read_to_string(root.join("book").join("book.toml")).ok()?;
    let config: toml::Table = toml::from_str(&config).ok()?;
    config.get("preprocessor")?.get(stubs::NAME)?;
    let exe = std::env::current_exe().ok()?;
    Some(format!(
        "{} book preprocess",
        shell_word(&exe.display().to_string())
    ))
}

/// [`preprocessor_command`] as the environment of an `mdbook` run.
fn preprocessor_env(command: Option<&String>) -> Vec<(&'static str, &str)> {
    command
        .map(|command| (stubs::COMMAND_ENV, command.as_str()))
        .into_iter()
        .collect()
}

/// `word` as one word for the shell-like split mdBook makes of a command.
fn shell_word(word: &str) -> String {
    let plain = |c: char| c.is_ascii_alphanumeric() || "/._-+:@%,=".contains(c);
    if !word.is_empty() && word.chars().all(plain) {
        word.to_string()
    } else {
        format!("'{}'", word.replace('\'', "'\"'\"'"))
    }
}

/// The pages one edition has and the other lacks: the language button links each
/// page to its namesake in the other edition.
fn edition_findings(out: &Path) -> Result<Vec<String>, Error> {
    let translated = out.join(po::LANGUAGE);
    let relative = |dir: &Path,
                    skip: Option<&Path>|
     -> Result<Vec<PathBuf>, Error> {
        let mut pages = Vec::new();
        listings::collect_pages(dir, &mut pages).map_err(Error::io("read", dir))?;
        let mut pages: Vec<PathBuf> = pages
            .into_iter()
            .filter(|page| skip.is_none_or(|skip| !page.starts_with(skip)))
            .filter_map(|page| page.strip_prefix(dir).ok().map(Path::to_path_buf))
            .collect();
        pages.sort();
        Ok(pages)
    };
    let english = relative(out, Some(&translated))?;
    let chinese = relative(&translated, None)?;
    let mut findings = Vec::new();
    for page in english.iter().filter(|p| !chinese.contains(p)) {
        findings.push(format!("{}: in the English edition only", page.display()));
    }
    for page in chinese.iter().filter(|p| !english.contains(p)) {
        findings.push(format!(
            "{}/{}: in the Chinese edition only",
            po::LANGUAGE,
            page.display()
        ));
    }
    Ok(findings)
}

/// `cargo xtask book browser-check`: every page of the built book in headless
/// Chromium (see [`browser`]).
pub(crate) fn browser_check(root: &Path) -> Result<(), Error> {
    browser::check(&root.join("book").join("book"))
}

/// Where the include directives stand, in every markdown file under `src`, and
/// whether its headings and diagrams translate safely (`SUMMARY.md`'s part titles
/// are not page headings and need no anchor).
fn source_findings(
    root: &Path,
    src: &Path,
) -> Result<Vec<listings::Finding>, Error> {
    let mut files = Vec::new();
    collect_markdown(src, &mut files).map_err(Error::io("read", src))?;
    files.sort();
    let mut findings = Vec::new();
    for file in files {
        let text = fs::read_to_string(&file).map_err(Error::io("read", &file))?;
        let label = file
            .strip_prefix(root)
            .unwrap_or(&file)
            .display()
            .to_string();
        findings.extend(listings::check_placement(&label, &text));
        if file.file_name().is_none_or(|name| name != "SUMMARY.md") {
            findings.extend(listings::check_translatable(&label, &text));
        }
    }
    Ok(findings)
}

/// `cargo xtask book serve [--lang zh-CN] [ARGS]`: ensure the tools, run `mdbook
/// serve book [ARGS]`; with `--lang zh-CN`, serve the Chinese edition (built into
/// `book/book/zh-CN`).
///
/// Binds 127.0.0.1 unless ARGS choose a hostname themselves.
pub(crate) fn serve(
    root: &Path,
    language: Option<&str>,
    extra: &[String],
) -> Result<(), Error> {
    let env: &[(&str, &str)] = match language {
        None | Some("en") => &[],
        Some(po::LANGUAGE) => &po::language_env(),
        Some(other) => {
            return Err(Error::Usage(format!(
                "no edition in `{other}`: the book has `en` (the default) and `{}`",
                po::LANGUAGE
            )));
        }
    };
    ensure_tools()?;
    let mut args = serve_args(extra);
    if !env.is_empty() {
        args.extend(["-d", po::DEST]);
    }
    let command = preprocessor_command(root);
    let mut env = env.to_vec();
    env.extend(preprocessor_env(command.as_ref()));
    run_mdbook(root, &args, &env)
}

/// The arguments of `mdbook serve`: the book, `--hostname 127.0.0.1` unless `extra`
/// chooses a hostname, then `extra`.
fn serve_args(extra: &[String]) -> Vec<&str> {
    let mut args = vec!["serve", "book"];
    let has_hostname = extra.iter().any(|a| {
        a == "-n"
            || a.starts_with("--hostname")
            || (a.starts_with("-n") && a.len() > 2)
    });
    if !has_hostname {
        args.extend(["--hostname", "127.0.0.1"]);
    }
    args.extend(extra.iter().map(String::as_str));
    args
}

/// Runs `mdbook ARGS` in the workspace root, with `env` added to its environment,
/// and turns a failure into an error message.
fn run_mdbook(
    root: &Path,
    args: &[&str],
    env: &[(&str, &str)],
) -> Result<(), Error> {
    let status = Command::new("mdbook")
        .args(args)
        .envs(env.iter().copied())
        .current_dir(root)
        .status()
        .map_err(Error::spawn("mdbook"))?;
    if status.success() {
        Ok(())
    } else {
        Err(Error::Tool {
            command: format!("mdbook {}", args.join(" ")),
            detail: status.to_string(),
        })
    }
}

/// Runs `mdbook ARGS` in the workspace root, with `env` added to its environment,
/// echoing its output, and returns that output (stdout, then stderr) for the
/// warning check.
fn run_mdbook_captured(
    root: &Path,
    args: &[&str],
    env: &[(&str, &str)],
) -> Result<String, Error> {
    let output = Command::new("mdbook")
        .args(args)
        .envs(env.iter().copied())
        .current_dir(root)
        .output()
        .map_err(Error::spawn("mdbook"))?;
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    print!("{text}");
    if output.status.success() {
        Ok(text)
    } else {
        Err(Error::Tool {
            command: format!("mdbook {}", args.join(" ")),
            detail: output.status.to_string(),
        })
    }
}

/// Makes sure every pinned tool is on `PATH` at its pinned version, installing it if
/// not.
fn ensure_tools() -> Result<(), Error> {
    let mut pinned = Vec::new();
    for tool in &TOOLS {
        let found = installed_version(tool);
        pinned.push(format!("{} {}", tool.bin, tool.version));
        if found
            .as_deref()
            .is_some_and(|out| version_matches(out, tool.version))
        {
            continue;
        }
        match &found {
            Some(out) => println!(
                "xtask: `{} --version` says `{out}`; installing the pinned {} {} (cargo install --locked, once)",
                tool.bin, tool.package, tool.version
            ),
            None => println!(
                "xtask: {} not found; installing {} {} (cargo install --locked, once; this takes a few minutes)",
                tool.bin, tool.package, tool.version
            ),
        }
        install(tool)?;
        match installed_version(tool) {
            Some(out) if version_matches(&out, tool.version) => {}
            other => {
                return Err(Error::Tool {
                    command: format!("{} --version", tool.bin),
                    detail: format!(
                        "installed {} {} but it now says {:?}; is cargo's bin directory \
                         (usually ~/.cargo/bin) on PATH, ahead of any other {}?",
                        tool.package, tool.version, other, tool.bin
                    ),
                });
            }
        }
    }
    println!("xtask: using {}", pinned.join(", "));
    Ok(())
}

/// `cargo install --locked PACKAGE --version VERSION`, with the cargo that runs
/// xtask.
fn install(tool: &Tool) -> Result<(), Error> {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let status = Command::new(&cargo)
        .args([
            "install",
            "--locked",
            tool.package,
            "--version",
            tool.version,
        ])
        .status()
        .map_err(Error::spawn("cargo install"))?;
    if status.success() {
        Ok(())
    } else {
        Err(Error::Tool {
            command: format!(
                "cargo install --locked {} --version {}",
                tool.package, tool.version
            ),
            detail: status.to_string(),
        })
    }
}

/// The trimmed output of `BIN --version`, or for a tool without that flag its
/// package's line in `cargo install --list` (`mdbook-i18n-helpers v0.4.0:`), or
/// `None` when the tool is not on `PATH`.
fn installed_version(tool: &Tool) -> Option<String> {
    if !tool.has_version_flag {
        // The binary must be reachable, whatever cargo remembers installing.
        Command::new(tool.bin)
            .arg("supports")
            .arg("html")
            .output()
            .ok()?;
        let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
        let out = Command::new(cargo)
            .args(["install", "--list"])
            .output()
            .ok()?;
        return String::from_utf8_lossy(&out.stdout)
            .lines()
            .find(|line| line.starts_with(&format!("{} ", tool.package)))
            .map(|line| line.trim_end_matches(':').to_string());
    }
    let out = Command::new(tool.bin).arg("--version").output().ok()?;
    if !out.status.success() {
        return None;
    }
    Some(String::from_utf8_lossy(&out.stdout).trim().to_string())
}

/// Whether a `--version` output such as `mdbook v0.5.4` names exactly `version`.
fn version_matches(output: &str, version: &str) -> bool {
    output
        .split_whitespace()
        .any(|word| word.strip_prefix('v').unwrap_or(word) == version)
}

/// The outcome of [`check_includes`].
#[derive(Debug, Default)]
pub(crate) struct Report {
    /// Markdown files read.
    pub(crate) files: usize,
    /// Include directives checked.
    pub(crate) directives: usize,
    /// Every broken include, in file order.
    pub(crate) problems: Vec<Problem>,
}

/// One broken include directive.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Problem {
    /// The markdown file that holds the directive.
    pub(crate) file: PathBuf,
    /// The directive's line in that file, from 1.
    pub(crate) line: usize,
    /// The directive as written, e.g. `{{#include ../x.rs:anchor}}`.
    pub(crate) directive: String,
    /// What is wrong with it.
    pub(crate) reason: String,
}

impl Problem {
    /// The same problem with its file shown relative to `base` when possible.
    fn relative_to(&self, base: &Path) -> Problem {
        let file = self.file.strip_prefix(base).unwrap_or(&self.file);
        Problem {
            file: file.to_path_buf(),
            ..self.clone()
        }
    }
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}:{}: {}: {}",
            self.file.display(),
            self.line,
            self.directive,
            self.reason
        )
    }
}

/// Checks every `{{#include}}`, `{{#rustdoc_include}}` and `{{#playground}}` in the
/// markdown files under `src` (recursively).
///
/// For each directive the path is resolved against the markdown file's directory, as
/// mdBook does, and the file must exist. Then, depending on what follows the path:
///
/// - `path:name`: the file has a `ANCHOR: name` line and, after it, an `ANCHOR_END:
///   name` line, and the lines between them, less any other `ANCHOR`/`ANCHOR_END`
///   lines, are not all blank. The name must also not open a second anchor, since
///   mdBook uses only the first.
/// - `path:N`, `path:N:M`, `path:N:`, `path::M`: the file has those lines (numbered
///   from 1, inclusive), and they are not all blank.
/// - `path` alone: the file is not blank.
///
/// Directives escaped the mdBook way, `\{{#include ...}}`, are skipped.
pub(crate) fn check_includes(src: &Path) -> io::Result<Report> {
    let mut files = Vec::new();
    collect_markdown(src, &mut files)?;
    files.sort();
    let mut report = Report::default();
    for file in files {
        let text = fs::read_to_string(&file)?;
        let dir = file.parent().unwrap_or(src);
        report.files += 1;
        for directive in find_directives(&text) {
            report.directives += 1;
            if let Err(reason) = check_directive(dir, &directive) {
                report.problems.push(Problem {
                    file: file.clone(),
                    line: directive.line,
                    directive: directive.text.clone(),
                    reason,
                });
            }
        }
    }
    Ok(report)
}

/// Appends every `*.md` file under `dir` to `out`.
fn collect_markdown(dir: &Path, out: &mut Vec<PathBuf>) -> io::Result<()> {
    for entry in fs::read_dir(dir)? {
        let path = entry?.path();
        if path.is_dir() {
            collect_markdown(&path, out)?;
        } else if path.extension().is_some_and(|ext| ext == "md") {
            out.push(path);
        }
    }
    Ok(())
}

/// The directive kinds this check understands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// `{{#include path[:anchor|:range]}}`
    Include,
    /// `{{#rustdoc_include path[:anchor|:range]}}`: same path syntax as `include`.
    RustdocInclude,
    /// `{{#playground path [attributes]}}`: a whole file, no anchor or range.
    Playground,
}

/// One directive found in a markdown file.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Directive {
    /// Its byte offset in the file.
    offset: usize,
    /// Its line, from 1.
    line: usize,
    /// Its kind.
    kind: Kind,
    /// What follows the kind, trimmed: `path[:anchor|:range] [attributes]`.
    target: String,
    /// The whole directive as written.
    text: String,
}

/// Finds the directives in `text` the way mdBook's link regex does: `{{`, optional
/// whitespace, `#kind`, whitespace, a target without `}`, `}}`. A `\{{#` starts an
/// escaped directive that runs to the last `}}` on its line and is skipped. Kinds
/// other than those in [`Kind`] (such as `title`) are skipped too.
fn find_directives(text: &str) -> Vec<Directive> {
    let bytes = text.as_bytes();
    let mut found = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i..].starts_with(b"\\{{#") {
            let eol = text[i..].find('\n').map_or(text.len(), |p| i + p);
            if let Some(p) = text[i + 4..eol].rfind("}}") {
                i += 4 + p + 2;
                continue;
            }
        } else if bytes[i..].starts_with(b"{{")
            && let Some((end, kind, target)) = parse_directive(text, i + 2)
        {
            if let Some(kind) = kind {
                found.push(Directive {
                    offset: i,
                    line: 1 + text[..i].matches('\n').count(),
                    kind,
                    target: target.trim().to_string(),
                    text: text[i..end].to_string(),
                });
            }
            i = end;
            continue;
        }
        i += 1;
    }
    found
}

/// Parses a directive whose `{{` ends just before `start`. Returns the byte offset
/// after its `}}`, its kind (`None` for kinds this check ignores) and its raw
/// target.
fn parse_directive(text: &str, start: usize) -> Option<(usize, Option<Kind>, &str)> {
    let bytes = text.as_bytes();
    let mut i = start;
    while i < bytes.len() && bytes[i].is_ascii_whitespace() {
        i += 1;
    }
    if bytes.get(i) != Some(&b'#') {
        return None;
    }
    i += 1;
    let kind_start = i;
    while i < bytes.len() && (bytes[i].is_ascii_alphanumeric() || bytes[i] == b'_') {
        i += 1;
    }
    let kind = &text[kind_start..i];
    if kind.is_empty() || !bytes.get(i).is_some_and(u8::is_ascii_whitespace) {
        return None;
    }
    let target_start = i + 1;
    let target_end = target_start + text[target_start..].find('}')?;
    if target_end == target_start || !text[target_end..].starts_with("}}") {
        return None;
    }
    let kind = match kind {
        "include" => Some(Kind::Include),
        "rustdoc_include" => Some(Kind::RustdocInclude),
        "playground" | "playpen" => Some(Kind::Playground),
        _ => None,
    };
    Some((target_end + 2, kind, &text[target_start..target_end]))
}

/// What part of a file a directive selects.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Selection {
    /// The whole file.
    All,
    /// The lines between `ANCHOR: name` and `ANCHOR_END: name`.
    Anchor(String),
    /// Lines `start..=end` (from 1); `end: None` means to the end of the file.
    Lines {
        /// First line, from 1.
        start: usize,
        /// Last line, inclusive.
        end: Option<usize>,
    },
}

/// Splits `path[:anchor|:range]` as mdBook does: the first `:` ends the path; then a
/// number (or nothing) starts a line range, anything else is an anchor name.
fn parse_path(spec: &str) -> (&str, Selection) {
    let Some((path, rest)) = spec.split_once(':') else {
        return (spec, Selection::All);
    };
    let mut parts = rest.splitn(3, ':');
    let first = parts.next().unwrap_or("");
    let start = match first.parse::<usize>() {
        Ok(n) => Some(n),
        Err(_) if first.is_empty() => None,
        Err(_) => return (path, Selection::Anchor(first.to_string())),
    };
    let end = parts.next().map(str::parse::<usize>);
    let selection = match (start, end) {
        (Some(start), Some(Ok(end))) => Selection::Lines {
            start,
            end: Some(end),
        },
        (Some(start), Some(Err(_))) => Selection::Lines { start, end: None },
        (Some(start), None) => Selection::Lines {
            start,
            end: Some(start),
        },
        (None, Some(Ok(end))) => Selection::Lines {
            start: 1,
            end: Some(end),
        },
        (None, _) => Selection::All,
    };
    (path, selection)
}

/// Checks one directive found in a markdown file that lives in `dir`.
fn check_directive(dir: &Path, directive: &Directive) -> Result<(), String> {
    let spec = directive.target.split_whitespace().next().unwrap_or("");
    if spec.is_empty() {
        return Err("no path given".to_string());
    }
    let (path, selection) = match directive.kind {
        Kind::Include | Kind::RustdocInclude => parse_path(spec),
        Kind::Playground => (spec, Selection::All),
    };
    let full = dir.join(path);
    if full.is_dir() {
        return Err(format!("`{path}` is a directory"));
    }
    let content = match fs::read_to_string(&full) {
        Ok(content) => content,
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            return Err(format!(
                "file `{path}` not found (resolved to {})",
                tidy(&full).display()
            ));
        }
        Err(e) => return Err(format!("cannot read `{path}`: {e}")),
    };
    match selection {
        Selection::All => {
            if content.trim().is_empty() {
                Err(format!("`{path}` is empty"))
            } else {
                Ok(())
            }
        }
        Selection::Anchor(name) => {
            check_anchor(&content, &name).map_err(|e| format!("{e} in `{path}`"))
        }
        Selection::Lines { start, end } => {
            check_lines(&content, start, end).map_err(|e| format!("{e} in `{path}`"))
        }
    }
}

/// `path` with `.` and `name/..` components removed, for messages.
fn tidy(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for component in path.components() {
        match component {
            Component::CurDir => {}
            Component::ParentDir
                if matches!(
                    out.components().next_back(),
                    Some(Component::Normal(_))
                ) =>
            {
                out.pop();
            }
            other => out.push(other),
        }
    }
    out
}

/// The name of the first `MARKER name` in `line` (`marker` is `ANCHOR:` or
/// `ANCHOR_END:`), matching mdBook's `ANCHOR:\s*([\w_-]+)`.
fn anchor_name<'a>(line: &'a str, marker: &str) -> Option<&'a str> {
    line.match_indices(marker).find_map(|(at, _)| {
        let rest = line[at + marker.len()..].trim_start();
        let len = rest
            .find(|c: char| !(c.is_alphanumeric() || c == '_' || c == '-'))
            .unwrap_or(rest.len());
        (len > 0).then(|| &rest[..len])
    })
}

/// Checks that `content` has a non-blank anchor `name`, defined once.
fn check_anchor(content: &str, name: &str) -> Result<(), String> {
    let mut open: Option<usize> = None;
    let mut closed: Option<(usize, usize)> = None;
    let mut has_text = false;
    for (index, line) in content.lines().enumerate() {
        let number = index + 1;
        let starts = anchor_name(line, "ANCHOR:");
        let ends = anchor_name(line, "ANCHOR_END:");
        if let Some((first, _)) = closed {
            if starts == Some(name) {
                return Err(format!(
                    "anchor `{name}` opens twice (lines {first} and {number}; mdBook uses only the first)"
                ));
            }
        } else if let Some(start) = open {
            if ends == Some(name) {
                closed = Some((start, number));
            } else if starts.is_none() && ends.is_none() && !line.trim().is_empty() {
                has_text = true;
            }
        } else if starts == Some(name) {
            open = Some(number);
        }
    }
    match (open, closed) {
        (None, _) => Err(format!("no `ANCHOR: {name}`")),
        (Some(start), None) => Err(format!(
            "`ANCHOR: {name}` at line {start} has no `ANCHOR_END: {name}` after it"
        )),
        (Some(_), Some((start, end))) if !has_text => Err(format!(
            "anchor `{name}` (lines {start}-{end}) holds only blank or marker lines"
        )),
        _ => Ok(()),
    }
}

/// Checks that `content` has lines `start..=end` (from 1; `None`: to the end) and
/// that they are not all blank.
fn check_lines(
    content: &str,
    start: usize,
    end: Option<usize>,
) -> Result<(), String> {
    let lines: Vec<&str> = content.lines().collect();
    let shown = match end {
        Some(end) if end == start => format!("line {start}"),
        Some(end) => format!("lines {start}-{end}"),
        None => format!("lines {start}-"),
    };
    if start == 0 {
        return Err(format!("{shown}: line numbers start at 1"));
    }
    let last = end.unwrap_or(lines.len());
    if start > lines.len() || last > lines.len() {
        return Err(format!(
            "{shown}: the file has only {} line(s)",
            lines.len()
        ));
    }
    if last < start {
        return Err(format!("{shown}: the range is empty"));
    }
    if lines[start - 1..last].iter().all(|l| l.trim().is_empty()) {
        return Err(format!("{shown}: only blank lines"));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

    /// A fresh directory under the system temp dir, removed on drop.
    pub(super) struct TempDir(pub(super) PathBuf);

    impl TempDir {
        pub(super) fn new() -> TempDir {
            static NEXT: AtomicUsize = AtomicUsize::new(0);
            let path = std::env::temp_dir().join(format!(
                "xtask-book-test-{}-{}",
                std::process::id(),
                NEXT.fetch_add(1, Ordering::Relaxed)
            ));
            let _ = fs::remove_dir_all(&path);
            fs::create_dir_all(&path).unwrap();
            TempDir(path)
        }

        /// Writes `contents` to `rel`, creating parent directories.
        pub(super) fn write(&self, rel: &str, contents: &str) {
            let path = self.0.join(rel);
            fs::create_dir_all(path.parent().unwrap()).unwrap();
            fs::write(path, contents).unwrap();
        }

        /// Runs the check on `src/` and returns `line: reason` for each problem.
        fn problems(&self) -> Vec<String> {
            let report = check_includes(&self.0.join("src")).unwrap();
            report
                .problems
                .iter()
                .map(|p| format!("{}: {}", p.line, p.reason))
                .collect()
        }
    }

    impl Drop for TempDir {
        fn drop(&mut self) {
            let _ = fs::remove_dir_all(&self.0);
        }
    }

    const CODE: &str = "\
fn before() {}
// ANCHOR: good
fn good() {}
// ANCHOR: inner
fn inner() {}
// ANCHOR_END: inner
// ANCHOR_END: good
// ANCHOR: empty

// ANCHOR: other
// ANCHOR_END: other
// ANCHOR_END: empty
// ANCHOR: unclosed
fn tail() {}
";

    fn with_code(chapter: &str) -> TempDir {
        let dir = TempDir::new();
        dir.write("code/lib.rs", CODE);
        dir.write("src/ch/index.md", chapter);
        dir
    }

    #[test]
    fn a_page_in_one_edition_only_is_found() {
        let dir = TempDir::new();
        for page in ["index.html", "stage1/index.html", "print.html"] {
            dir.write(page, "");
            dir.write(&format!("zh-CN/{page}"), "");
        }
        assert_eq!(edition_findings(&dir.0).unwrap(), Vec::<String>::new());
        dir.write("stage1/new.html", "");
        dir.write("zh-CN/stage2/index.html", "");
        assert_eq!(
            edition_findings(&dir.0).unwrap(),
            vec![
                "stage1/new.html: in the English edition only".to_string(),
                "zh-CN/stage2/index.html: in the Chinese edition only".to_string(),
            ]
        );
    }

    #[test]
    fn good_anchor_passes() {
        let dir =
            with_code("# Ch\n\n```rust\n{{#include ../../code/lib.rs:good}}\n```\n");
        assert_eq!(dir.problems(), Vec::<String>::new());
        let report = check_includes(&dir.0.join("src")).unwrap();
        assert_eq!((report.files, report.directives), (1, 1));
    }

    #[test]
    fn nested_anchor_passes() {
        let dir = with_code("{{#include ../../code/lib.rs:inner}}\n");
        assert_eq!(dir.problems(), Vec::<String>::new());
    }

    #[test]
    fn missing_file_is_reported_with_its_line() {
        let dir = with_code("a\nb\n{{#include ../../code/nope.rs:good}}\n");
        let problems = dir.problems();
        assert_eq!(problems.len(), 1, "{problems:?}");
        assert!(problems[0].starts_with("3: file `../../code/nope.rs` not found"));
    }

    #[test]
    fn path_is_relative_to_the_markdown_file() {
        // Relative to src/ (wrong) rather than src/ch/ (right).
        let dir = with_code("{{#include ../code/lib.rs}}\n");
        assert_eq!(dir.problems().len(), 1);
    }

    #[test]
    fn missing_anchor_is_reported() {
        let dir = with_code("{{#include ../../code/lib.rs:absent}}\n");
        assert_eq!(
            dir.problems(),
            ["1: no `ANCHOR: absent` in `../../code/lib.rs`"]
        );
    }

    #[test]
    fn anchor_name_must_match_exactly() {
        // `goo` is a prefix of `good`, not an anchor.
        let dir = with_code("{{#include ../../code/lib.rs:goo}}\n");
        assert_eq!(dir.problems().len(), 1);
    }

    #[test]
    fn empty_anchor_is_reported() {
        // Holds a blank line and the markers of another anchor, which mdBook drops.
        let dir = with_code("{{#include ../../code/lib.rs:empty}}\n");
        let problems = dir.problems();
        assert_eq!(problems.len(), 1);
        assert!(
            problems[0].contains("only blank or marker lines"),
            "{problems:?}"
        );
    }

    #[test]
    fn unclosed_anchor_is_reported() {
        let dir = with_code("{{#include ../../code/lib.rs:unclosed}}\n");
        let problems = dir.problems();
        assert_eq!(problems.len(), 1);
        assert!(
            problems[0].contains("no `ANCHOR_END: unclosed`"),
            "{problems:?}"
        );
    }

    #[test]
    fn duplicate_anchor_is_reported() {
        let dir = TempDir::new();
        dir.write(
            "code/dup.rs",
            "// ANCHOR: a\nx\n// ANCHOR_END: a\n// ANCHOR: a\ny\n// ANCHOR_END: a\n",
        );
        dir.write("src/a.md", "{{#include ../code/dup.rs:a}}\n");
        let problems = dir.problems();
        assert_eq!(problems.len(), 1);
        assert!(problems[0].contains("opens twice"), "{problems:?}");
    }

    #[test]
    fn line_ranges() {
        // CODE has 14 lines; line 9 is blank.
        let dir = with_code(
            "{{#include ../../code/lib.rs:1:3}}\n\
             {{#include ../../code/lib.rs:2:}}\n\
             {{#include ../../code/lib.rs:3}}\n\
             {{#include ../../code/lib.rs::2}}\n\
             {{#include ../../code/lib.rs:14:14}}\n\
             {{#include ../../code/lib.rs:10:20}}\n\
             {{#include ../../code/lib.rs:15:}}\n\
             {{#include ../../code/lib.rs:5:4}}\n\
             {{#include ../../code/lib.rs:9}}\n\
             {{#include ../../code/lib.rs:0:2}}\n",
        );
        assert_eq!(
            dir.problems(),
            [
                "6: lines 10-20: the file has only 14 line(s) in `../../code/lib.rs`",
                "7: lines 15-: the file has only 14 line(s) in `../../code/lib.rs`",
                "8: lines 5-4: the range is empty in `../../code/lib.rs`",
                "9: line 9: only blank lines in `../../code/lib.rs`",
                "10: lines 0-2: line numbers start at 1 in `../../code/lib.rs`",
            ]
        );
    }

    #[test]
    fn whole_file_include() {
        let dir = with_code(
            "{{#include ../../code/lib.rs}}\n{{#include ../../code/blank.rs}}\n",
        );
        dir.write("code/blank.rs", "\n  \n");
        assert_eq!(dir.problems(), ["2: `../../code/blank.rs` is empty"]);
    }

    #[test]
    fn escaped_include_is_skipped() {
        let dir = with_code(
            "Write `\\{{#include path/to/file.rs:anchor}}` to include code.\n\
             \\{{#include nope.rs}} and \\{{#include nope2.rs}}\n",
        );
        assert_eq!(dir.problems(), Vec::<String>::new());
        let report = check_includes(&dir.0.join("src")).unwrap();
        assert_eq!(report.directives, 0);
    }

    #[test]
    fn rustdoc_include_and_playground_are_checked() {
        let dir = with_code(
            "{{#rustdoc_include ../../code/lib.rs:good}}\n\
             {{#rustdoc_include ../../code/lib.rs:absent}}\n\
             {{#playground ../../code/lib.rs editable}}\n\
             {{#playground ../../code/gone.rs}}\n\
             {{#title Not a file}}\n",
        );
        let problems = dir.problems();
        assert_eq!(problems.len(), 2, "{problems:?}");
        assert!(problems[0].starts_with("2: no `ANCHOR: absent`"));
        assert!(problems[1].starts_with("4: file `../../code/gone.rs` not found"));
    }

    #[test]
    fn directive_syntax() {
        let found = find_directives(
            "x {{ #include  a.rs:b }} y {{#include c.rs}}\n{{#include}}\n{{#include d.rs",
        );
        let targets: Vec<_> =
            found.iter().map(|d| (d.line, d.target.as_str())).collect();
        assert_eq!(targets, [(1, "a.rs:b"), (1, "c.rs")]);
        assert_eq!(found[0].text, "{{ #include  a.rs:b }}");
    }

    #[test]
    fn parse_path_forms() {
        assert_eq!(parse_path("a.rs"), ("a.rs", Selection::All));
        assert_eq!(
            parse_path("a.rs:x-1"),
            ("a.rs", Selection::Anchor("x-1".into()))
        );
        assert_eq!(
            parse_path("a.rs:3"),
            (
                "a.rs",
                Selection::Lines {
                    start: 3,
                    end: Some(3)
                }
            )
        );
        assert_eq!(
            parse_path("a.rs:3:"),
            (
                "a.rs",
                Selection::Lines {
                    start: 3,
                    end: None
                }
            )
        );
        assert_eq!(
            parse_path("a.rs::4"),
            (
                "a.rs",
                Selection::Lines {
                    start: 1,
                    end: Some(4)
                }
            )
        );
    }

    #[test]
    fn anchor_markers() {
        assert_eq!(
            anchor_name("// ANCHOR: ex1-insert", "ANCHOR:"),
            Some("ex1-insert")
        );
        assert_eq!(
            anchor_name("    # ANCHOR:tail rest", "ANCHOR:"),
            Some("tail")
        );
        assert_eq!(anchor_name("// ANCHOR_END: a", "ANCHOR:"), None);
        assert_eq!(anchor_name("// ANCHOR_END: a", "ANCHOR_END:"), Some("a"));
        assert_eq!(anchor_name("// ANCHOR: ", "ANCHOR:"), None);
    }

    #[test]
    fn tidy_paths() {
        assert_eq!(
            tidy(Path::new("/a/b/src/../../c/./d.rs")),
            Path::new("/a/c/d.rs")
        );
        assert_eq!(tidy(Path::new("../x/../y")), Path::new("../y"));
    }

    #[test]
    fn serve_binds_localhost_unless_told_otherwise() {
        let args = |extra: &[&str]| -> Vec<String> {
            let extra: Vec<String> = extra.iter().map(|a| a.to_string()).collect();
            serve_args(&extra).iter().map(|a| a.to_string()).collect()
        };
        assert_eq!(
            args(&["--open", "-p", "3001"]),
            [
                "serve",
                "book",
                "--hostname",
                "127.0.0.1",
                "--open",
                "-p",
                "3001"
            ]
        );
        assert_eq!(args(&["-n", "0.0.0.0"]), ["serve", "book", "-n", "0.0.0.0"]);
        assert_eq!(args(&["--hostname=::"]), ["serve", "book", "--hostname=::"]);
    }

    #[test]
    fn the_preprocessor_command_is_one_word_for_mdbook() {
        assert_eq!(shell_word("/a/target/debug/xtask"), "/a/target/debug/xtask");
        assert_eq!(shell_word("/my dir/it's"), "'/my dir/it'\"'\"'s'");
        let dir = TempDir::new();
        assert_eq!(preprocessor_command(&dir.0), None);
        dir.write("book/book.toml", "[preprocessor.gettext]\n");
        assert_eq!(preprocessor_command(&dir.0), None);
        dir.write(
            "book/book.toml",
            "[preprocessor.exercise-stubs]\nafter = []\n",
        );
        let command = preprocessor_command(&dir.0).unwrap();
        assert!(command.ends_with(" book preprocess"), "{command}");
    }

    #[test]
    fn tool_versions() {
        assert!(version_matches("mdbook v0.5.4", "0.5.4"));
        assert!(version_matches("mdbook-i18n-helpers v0.4.0", "0.4.0"));
        assert!(!version_matches("mdbook v0.4.52", "0.5.4"));
        assert!(!version_matches("mdbook v0.5.40", "0.5.4"));
    }
}
