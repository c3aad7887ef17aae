//! The frame every live page of the project shares: `mini-apiserver`'s
//! `/debug/ui` and an informer's. A page is plain HTML, CSS and JavaScript the
//! project writes, with no library: this crate holds what is common to all of
//! them, and each page brings its panels, its words and its drawing.
//!
//! - [`STYLE`]: large type for a projector, light and dark (the system's
//!   choice, or the ◐ button), panels, meters, the event strip and the
//!   moments list;
//! - [`SCRIPT`]: small helpers (`$`, `el`, `secs`, `clock`), the words in
//!   English and Chinese (`t`, the 中文 / English button, `?lang=zh`), and
//!   `livePage`, which opens one `EventSource` and hands its `view` and `note`
//!   events to the page;
//! - [`page`]: the whole document;
//! - [`serve`]: a small server for a process that has no HTTP server of its
//!   own (an informer, a controller manager): the page at `/debug/ui` and its
//!   stream at `/debug/ui/events`, a `view` pushed when its [`Source`] says
//!   something changed (at most ten a second) and at least once a second
//!   ([`router`] for a process that has a server to merge it into).
//!
//! Nothing polls: a page holds one server-sent event stream, and the server
//! pushes.

/// The shared style sheet.
pub const STYLE: &str = include_str!("page.css");

/// The shared script; a page's own script comes after it.
pub const SCRIPT: &str = include_str!("common.js");

/// The whole page: `title_key` names its title among the page's words, `body`
/// is its panels (HTML), `style` and `script` are its own.
pub fn page(title_key: &str, body: &str, style: &str, script: &str) -> String {
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <title data-i18n=\"{title_key}\">{title_key}</title>\n\
         <style>{STYLE}{style}</style>\n</head>\n<body>\n<header>\n\
         <h1 data-i18n=\"{title_key}\"></h1>\n<div class=\"controls\" id=\"controls\">\n\
         <button id=\"lang\" type=\"button\">中文</button>\n\
         <button id=\"theme\" type=\"button\" aria-label=\"light or dark\">◐</button>\n\
         <span id=\"conn\" class=\"conn\" data-state=\"connecting\"></span>\n</div>\n\
         </header>\n<main>\n{body}\n</main>\n<script>{SCRIPT}\n{script}</script>\n\
         </body>\n</html>\n"
    )
}

mod serve;

pub use serve::{Source, router, serve};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_page_has_the_frame_and_its_own_parts() {
        let html = page("title", "<section id=\"x\"></section>", ".x{}", "go();");
        assert!(html.starts_with("<!DOCTYPE html>"));
        for part in [
            "<section id=\"x\"></section>",
            ".x{}",
            "go();",
            "function livePage",
            "prefers-color-scheme: dark",
            "id=\"lang\"",
        ] {
            assert!(html.contains(part), "{part}");
        }
        assert!(html.find("function livePage") < html.find("go();"));
    }
}
