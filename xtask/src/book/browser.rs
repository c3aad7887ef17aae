//! `cargo xtask book browser-check`: opens every page of the built book in headless
//! Chromium and fails on what only a browser shows. A console message (a script
//! error, a failed load), a raw `{{#include`, a listing that broke out of its fence,
//! a listing wider than the page, or a mermaid diagram that did not render.
//!
//! No browser driver is needed. The tool copies the built book to a scratch
//! directory and adds one script to each page (`browser-check.js`). It then runs
//! `chromium --headless --dump-dom` on the page, with Chromium's log on stderr. The
//! script writes its findings into the page, and `--dump-dom` prints the page, so
//! the tool reads them from stdout. Chromium logs every console message as a
//! `CONSOLE` line, which the tool reads from stderr.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::thread;
use std::time::{Duration, Instant};

use super::listings::{Finding, collect_pages};
use crate::error::Error;

/// The script added to each page.
const SCRIPT: &str = include_str!("browser-check.js");

/// The id of the element the script writes its findings into.
const RESULT_ID: &str = "xtask-browser-check";

/// How long one page may take before the check gives up on it.
const PAGE_TIMEOUT: Duration = Duration::from_secs(60);

/// Browsers to try, in order, when `CHROMIUM` is not set.
const BROWSERS: [&str; 4] = [
    "chromium",
    "chromium-browser",
    "google-chrome",
    "google-chrome-stable",
];

/// Checks every page of the book built under `out` (mdBook's HTML output).
pub(crate) fn check(out: &Path) -> Result<(), Error> {
    if !out.join("index.html").is_file() {
        return Err(Error::Check(format!(
            "no built book at {}; run `cargo xtask book build` first",
            out.display()
        )));
    }
    let browser = find_browser()?;
    let scratch = std::env::temp_dir()
        .join(format!("xtask-browser-check-{}", std::process::id()));
    let result = check_in(out, &scratch, &browser);
    // Best effort: the scratch copy is ours alone, and a leftover does no harm.
    let _ = fs::remove_dir_all(&scratch);
    let (pages, findings) = result?;
    for finding in &findings {
        eprintln!("{finding}");
    }
    if findings.is_empty() {
        println!("xtask: browser check: {pages} page(s) in {browser}, no problems");
        Ok(())
    } else {
        Err(Error::Check(format!(
            "{} problem(s) on the book's pages in {browser}",
            findings.len()
        )))
    }
}

/// The Chromium to run: `$CHROMIUM`, or the first of [`BROWSERS`] that answers
/// `--version`.
fn find_browser() -> Result<String, Error> {
    if let Some(browser) = std::env::var_os("CHROMIUM") {
        return Ok(browser.to_string_lossy().into_owned());
    }
    BROWSERS
        .iter()
        .find(|bin| {
            Command::new(bin)
                .arg("--version")
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .status()
                .is_ok_and(|s| s.success())
        })
        .map(|bin| bin.to_string())
        .ok_or_else(|| {
            Error::Check(
                "no Chromium found (tried chromium, chromium-browser, google-chrome); \
                 install Debian's `chromium` package or set CHROMIUM to its path"
                    .to_string(),
            )
        })
}

/// Copies the book into `scratch`, adds the script to every page, and checks the
/// pages with two browsers at a time. Returns the page count and the findings, in
/// page order.
fn check_in(
    out: &Path,
    scratch: &Path,
    browser: &str,
) -> Result<(usize, Vec<Finding>), Error> {
    copy_tree(out, scratch).map_err(Error::io("copy the book to", scratch))?;
    let script = scratch.join("xtask-browser-check.js");
    fs::write(&script, SCRIPT).map_err(Error::io("write", &script))?;
    let mut pages = Vec::new();
    collect_pages(scratch, &mut pages).map_err(Error::io("read", scratch))?;
    pages.sort();
    let tag = format!("<script src=\"{}\"></script>", file_url(&script));
    for page in &pages {
        let html = fs::read_to_string(page).map_err(Error::io("read", page))?;
        let html = match html.rfind("</body>") {
            Some(at) => format!("{}{tag}{}", &html[..at], &html[at..]),
            None => format!("{html}{tag}"),
        };
        fs::write(page, html).map_err(Error::io("write", page))?;
    }
    let next = AtomicUsize::new(0);
    let results: Mutex<Vec<(usize, Vec<Finding>)>> = Mutex::new(Vec::new());
    let failure: Mutex<Option<Error>> = Mutex::new(None);
    thread::scope(|scope| {
        for worker in 0..2 {
            let (next, results, failure, pages) =
                (&next, &results, &failure, &pages);
            scope.spawn(move || {
                loop {
                    let index = next.fetch_add(1, Ordering::Relaxed);
                    let Some(page) = pages.get(index) else { break };
                    let label = page.strip_prefix(scratch).unwrap_or(page);
                    let label = label.display().to_string();
                    let profile = scratch.join(format!("profile-{worker}"));
                    match check_page(browser, page, &profile, &label) {
                        Ok(found) => lock(results).push((index, found)),
                        Err(error) => {
                            *lock(failure) = Some(error);
                            break;
                        }
                    }
                }
            });
        }
    });
    if let Some(error) = lock(&failure).take() {
        return Err(error);
    }
    let mut results = std::mem::take(&mut *lock(&results));
    results.sort_by_key(|(index, _)| *index);
    let findings = results.into_iter().flat_map(|(_, found)| found).collect();
    Ok((pages.len(), findings))
}

/// Locks a mutex whose holder cannot have panicked mid-update (its critical
/// sections are single pushes), recovering it if one did.
fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// Opens one page and returns its findings.
fn check_page(
    browser: &str,
    page: &Path,
    profile: &Path,
    label: &str,
) -> Result<Vec<Finding>, Error> {
    let stdout_path = profile.with_extension("out");
    let stderr_path = profile.with_extension("err");
    let stdout =
        fs::File::create(&stdout_path).map_err(Error::io("create", &stdout_path))?;
    let stderr =
        fs::File::create(&stderr_path).map_err(Error::io("create", &stderr_path))?;
    let mut child = Command::new(browser)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--no-first-run",
            "--window-size=1280,900",
            "--enable-logging=stderr",
            "--v=0",
            "--virtual-time-budget=10000",
            "--dump-dom",
        ])
        .arg(format!("--user-data-dir={}", profile.display()))
        .arg(file_url(page))
        .stdin(Stdio::null())
        .stdout(stdout)
        .stderr(stderr)
        .spawn()
        .map_err(Error::spawn(browser))?;
    let started = Instant::now();
    let timed_out = loop {
        if child.try_wait().map_err(Error::spawn(browser))?.is_some() {
            break false;
        }
        if started.elapsed() > PAGE_TIMEOUT {
            // Our own child, stopped by its handle.
            let _ = child.kill();
            let _ = child.wait();
            break true;
        }
        thread::sleep(Duration::from_millis(20));
    };
    let dom =
        fs::read_to_string(&stdout_path).map_err(Error::io("read", &stdout_path))?;
    let log =
        fs::read_to_string(&stderr_path).map_err(Error::io("read", &stderr_path))?;
    let mut findings = parse_findings(label, &dom, &log);
    if timed_out {
        findings.push(Finding {
            place: label.to_string(),
            what: format!("{browser} did not finish within {PAGE_TIMEOUT:?}"),
        });
    }
    Ok(findings)
}

/// The findings in one page's dumped DOM and Chromium log.
fn parse_findings(label: &str, dom: &str, log: &str) -> Vec<Finding> {
    let finding = |what: String| Finding {
        place: label.to_string(),
        what,
    };
    let mut findings: Vec<Finding> = log
        .lines()
        .filter_map(|line| line.split_once(":CONSOLE").map(|(_, message)| message))
        .map(|message| {
            let message = message.split_once("] ").map_or(message, |(_, m)| m);
            finding(format!("console: {message}"))
        })
        .collect();
    let open = format!("<pre id=\"{RESULT_ID}\">");
    let result = dom.find(&open).and_then(|at| {
        let body = &dom[at + open.len()..];
        body.find("</pre>").map(|end| &body[..end])
    });
    match result.map(|text| serde_json::from_str::<Vec<String>>(&unescape(text))) {
        Some(Ok(problems)) => findings.extend(problems.into_iter().map(finding)),
        Some(Err(error)) => findings.push(finding(format!(
            "the check script's result is not a JSON list of strings: {error}"
        ))),
        None => findings.push(finding(
            "the check script did not report (the page did not load, or a script \
             before it hung)"
                .to_string(),
        )),
    }
    findings
}

/// Text of an HTML element with `<`, `>` and `&` turned back into characters.
fn unescape(text: &str) -> String {
    text.replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&nbsp;", "\u{a0}")
        .replace("&amp;", "&")
}

/// A `file://` URL for an absolute path.
fn file_url(path: &Path) -> String {
    let absolute = if path.is_absolute() {
        path.to_path_buf()
    } else {
        std::env::current_dir()
            .map(|dir| dir.join(path))
            .unwrap_or_else(|_| path.to_path_buf())
    };
    let mut url = String::from("file://");
    for byte in absolute.to_string_lossy().bytes() {
        match byte {
            b'A'..=b'Z'
            | b'a'..=b'z'
            | b'0'..=b'9'
            | b'/'
            | b'-'
            | b'_'
            | b'.'
            | b'~' => url.push(byte as char),
            other => url.push_str(&format!("%{other:02X}")),
        }
    }
    url
}

/// Copies the directory tree `from` to `to`.
fn copy_tree(from: &Path, to: &Path) -> io::Result<()> {
    fs::create_dir_all(to)?;
    for entry in fs::read_dir(from)? {
        let entry = entry?;
        let target: PathBuf = to.join(entry.file_name());
        if entry.file_type()?.is_dir() {
            copy_tree(&entry.path(), &target)?;
        } else {
            fs::copy(entry.path(), &target)?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn findings_come_from_the_console_and_from_the_script() {
        let log = "[1:1:1124/020645.2:INFO:CONSOLE:2] \"Uncaught ReferenceError: x is not \
                   defined\", source: file:///b/a.html (2)\n[1:1:1124/0:WARNING:gpu] noise\n";
        let dom = "<html><body><main>x</main><pre id=\"xtask-browser-check\">[\"a \
                   listing 12 px wider than the page: fn a() -&gt; &amp;str\"]</pre>\
                   </body></html>";
        let found: Vec<String> = parse_findings("a.html", dom, log)
            .iter()
            .map(ToString::to_string)
            .collect();
        assert_eq!(
            found,
            vec![
                "a.html: console: \"Uncaught ReferenceError: x is not defined\", source: \
                 file:///b/a.html (2)",
                "a.html: a listing 12 px wider than the page: fn a() -> &str",
            ]
        );
    }

    #[test]
    fn a_page_whose_script_never_reported_is_a_finding() {
        let found = parse_findings("a.html", "<html><body></body></html>", "");
        assert_eq!(found.len(), 1);
        assert!(found[0].what.contains("did not report"), "{found:?}");
        let found =
            parse_findings("a.html", "<pre id=\"xtask-browser-check\">[]</pre>", "");
        assert!(found.is_empty(), "{found:?}");
    }

    #[test]
    fn file_urls_escape_what_a_url_cannot_hold() {
        assert_eq!(
            file_url(Path::new("/tmp/a b/c.html")),
            "file:///tmp/a%20b/c.html"
        );
    }
}
