//! Drives a real headless Chromium over the Chrome DevTools Protocol (CDP), so
//! tests can use the project's live web pages as a person would: open a page
//! served on loopback, wait for what it shows, read it, switch to dark mode,
//! take a screenshot, and see what it logged to its console.
//!
//! It runs the Chromium that CI installs (`$CHROMIUM`, else `chromium`,
//! `chromium-browser` or `google-chrome` on `PATH`), headless and with a fresh
//! profile, and speaks only the few CDP methods it needs: `Target.createTarget`
//! and `Target.attachToTarget` (one flat session per tab), `Page.enable`,
//! `Page.navigate` and `Page.captureScreenshot`, `Runtime.enable` and
//! `Runtime.evaluate`, and `Emulation.setDeviceMetricsOverride` and
//! `Emulation.setEmulatedMedia`; of the events, the page's load and its console
//! errors. Every command waits at most 30 s for its answer.
//!
//! ```no_run
//! # async fn example() -> Result<(), chromium_driver::Error> {
//! use std::time::Duration;
//! use chromium_driver::Browser;
//!
//! let browser = Browser::launch().await?;
//! let page = browser.open("http://127.0.0.1:8080/", 1280, 800).await?;
//! let shown = "document.querySelector('h1') !== null";
//! page.wait_for(shown, Duration::from_secs(5), "document.body.innerText").await?;
//! let png = page.screenshot().await?;
//! # let _ = png;
//! # Ok(())
//! # }
//! ```

use std::sync::{Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use tokio_tungstenite::tungstenite;

mod browser;
mod connection;
mod page;
mod process;

pub use browser::Browser;
pub use page::Page;

/// What can go wrong driving Chromium.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// Chromium was not found, did not start, or did not print its DevTools
    /// address (the message then holds what it printed on stderr).
    #[error("could not launch Chromium: {0}")]
    Launch(String),
    /// A command (or a page load) got no answer in time.
    #[error("CDP {method}: no answer in time")]
    Timeout {
        /// The command (or event) waited for.
        method: &'static str,
    },
    /// Chromium answered a command with an error.
    #[error("CDP {method} failed: {message}")]
    Cdp {
        /// The command.
        method: &'static str,
        /// Chromium's error message.
        message: String,
    },
    /// Evaluated JavaScript threw, or its promise rejected.
    #[error("the page threw: {text} {description}")]
    Exception {
        /// CDP's summary, e.g. `Uncaught`.
        text: String,
        /// The exception, e.g. `Error: …` with its stack.
        description: String,
    },
    /// A [`Page::wait_for`] condition was still false when its time ran out.
    #[error(
        "`{condition}` was not true within {timeout:?}{}; the page showed:\n{page}",
        thrown(.last_thrown)
    )]
    WaitTimeout {
        /// The condition waited for.
        condition: String,
        /// How long it was given.
        timeout: Duration,
        /// What evaluating it last threw, if it ever threw.
        last_thrown: String,
        /// The `describe` expression's value at the end.
        page: String,
    },
    /// The connection to Chromium is closed: it exited, or the [`Browser`] was
    /// dropped.
    #[error("the connection to Chromium is closed")]
    Closed,
    /// Reading Chromium's output or making its profile directory failed.
    #[error("I/O: {0}")]
    Io(#[from] std::io::Error),
    /// The DevTools websocket failed.
    #[error("DevTools websocket: {0}")]
    WebSocket(#[source] Box<tungstenite::Error>),
}

impl From<tungstenite::Error> for Error {
    fn from(error: tungstenite::Error) -> Self {
        Error::WebSocket(Box::new(error))
    }
}

/// The ` (it last threw …)` part of a [`Error::WaitTimeout`] message.
fn thrown(last_thrown: &str) -> String {
    if last_thrown.is_empty() {
        String::new()
    } else {
        format!(" (it last threw {last_thrown})")
    }
}

/// Locks `mutex`, also after a panic elsewhere held it.
pub(crate) fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

#[cfg(test)]
mod tests {
    use std::time::{Duration, Instant};

    use serde_json::json;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    use tokio::net::{TcpListener, TcpStream};

    use super::*;
    use crate::connection::Event;
    use crate::page::console_line;
    use crate::process::listening_url;

    /// The page under test: it logs an error at once, and 200 ms later adds an
    /// element.
    const PAGE: &str = r#"<!doctype html>
<html><head><meta charset="utf-8"><title>driver test</title></head>
<body>
<p id="status">waiting</p>
<script>
console.error("early", 42);
setTimeout(() => {
  const late = document.createElement("p");
  late.id = "late";
  late.textContent = "the late paragraph";
  document.body.appendChild(late);
  document.getElementById("status").textContent = "ready";
}, 200);
</script>
</body></html>
"#;

    const PNG_SIGNATURE: [u8; 8] = [0x89, b'P', b'N', b'G', 0x0d, 0x0a, 0x1a, 0x0a];

    /// Serves [`PAGE`] at `/` (and 404 elsewhere) on loopback; returns its URL.
    async fn serve() -> String {
        let listener = TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind loopback");
        let address = listener.local_addr().expect("local address");
        tokio::spawn(async move {
            while let Ok((stream, _)) = listener.accept().await {
                tokio::spawn(respond(stream));
            }
        });
        format!("http://{address}/")
    }

    /// Reads one request's head and writes one HTTP/1.1 response.
    async fn respond(mut stream: TcpStream) {
        let mut head = Vec::new();
        let mut buffer = [0; 1024];
        while !head.windows(4).any(|window| window == b"\r\n\r\n") {
            match stream.read(&mut buffer).await {
                Ok(0) | Err(_) => return,
                Ok(read) => head.extend_from_slice(&buffer[..read]),
            }
        }
        let (status, body) = if head.starts_with(b"GET / ") {
            ("200 OK", PAGE)
        } else {
            ("404 Not Found", "")
        };
        let response = format!(
            "HTTP/1.1 {status}\r\nContent-Type: text/html; charset=utf-8\r\n\
             Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
            body.len()
        );
        let _ = stream.write_all(response.as_bytes()).await;
        let _ = stream.shutdown().await;
    }

    /// Whether Chromium is here to test with; without it the test fails on CI
    /// and is skipped elsewhere.
    fn chromium_present() -> bool {
        if Browser::find().is_some() {
            return true;
        }
        let on_ci = std::env::var("CI").is_ok_and(|ci| ci == "true");
        assert!(
            !on_ci,
            "no Chromium on CI: set $CHROMIUM or install chromium"
        );
        eprintln!("skipped: no Chromium (set $CHROMIUM or put chromium on PATH)");
        false
    }

    #[tokio::test]
    async fn drives_a_live_page() {
        if !chromium_present() {
            return;
        }
        let url = serve().await;
        let browser = Browser::launch().await.expect("launch Chromium");
        let page = browser.open(&url, 800, 600).await.expect("open the page");

        let late = "document.getElementById('late') !== null";
        let describe = "document.body.innerText";
        page.wait_for(late, Duration::from_secs(10), describe)
            .await
            .expect("late element");
        let text = page
            .eval("document.getElementById('late').textContent")
            .await;
        assert_eq!(text.expect("eval textContent"), json!("the late paragraph"));

        assert_eq!(page.eval("1+1").await.expect("eval 1+1"), json!(2));
        assert_eq!(
            page.eval("Promise.resolve('later')")
                .await
                .expect("promise"),
            json!("later")
        );
        assert_eq!(
            page.eval("undefined").await.expect("undefined"),
            json!(null)
        );
        assert_eq!(
            page.eval("[innerWidth, innerHeight]").await.expect("size"),
            json!([800, 600])
        );

        let thrown = page.eval("throw new Error('kaput')").await;
        match thrown {
            Err(Error::Exception { description, .. }) => {
                assert!(description.contains("kaput"))
            }
            other => panic!("expected an exception, got {other:?}"),
        }

        let started = Instant::now();
        let never = page
            .wait_for("false", Duration::from_millis(300), describe)
            .await;
        let waited = started.elapsed();
        let message = never.expect_err("a never-true condition").to_string();
        assert!(message.contains("the late paragraph"), "{message}");
        assert!(message.contains("false"), "{message}");
        assert!(waited < Duration::from_secs(3), "took {waited:?}");

        let dark = "matchMedia('(prefers-color-scheme: dark)').matches";
        page.set_color_scheme(true).await.expect("dark");
        assert_eq!(page.eval(dark).await.expect("dark query"), json!(true));
        page.set_color_scheme(false).await.expect("light");
        assert_eq!(page.eval(dark).await.expect("light query"), json!(false));

        let png = page.screenshot().await.expect("screenshot");
        assert!(
            png.starts_with(&PNG_SIGNATURE),
            "not a PNG: {:?}",
            &png[..png.len().min(8)]
        );

        let console = page.console_errors();
        assert!(
            console.iter().any(|line| line == "error: early 42"),
            "{console:?}"
        );
    }

    #[test]
    fn reads_the_devtools_line() {
        let line =
            "DevTools listening on ws://127.0.0.1:40123/devtools/browser/ab-cd\n";
        let url = listening_url(line);
        assert_eq!(url, Some("ws://127.0.0.1:40123/devtools/browser/ab-cd"));
        assert_eq!(listening_url("[0101/000000.0:ERROR:foo] bar"), None);
    }

    #[test]
    fn keeps_errors_warnings_and_exceptions() {
        let event = |method: &str, params| Event {
            method: method.to_owned(),
            session: Some("s".to_owned()),
            params,
        };
        let warn = json!({ "type": "warning", "args": [{ "type": "string", "value": "careful" }] });
        let log = json!({ "type": "log", "args": [{ "type": "string", "value": "fine" }] });
        let exception = json!({ "exceptionDetails": {
            "text": "Uncaught",
            "exception": { "type": "object", "description": "Error: boom" },
        } });
        let called = "Runtime.consoleAPICalled";
        assert_eq!(
            console_line(&event(called, warn)).as_deref(),
            Some("warning: careful")
        );
        assert_eq!(console_line(&event(called, log)), None);
        let line = console_line(&event("Runtime.exceptionThrown", exception));
        assert_eq!(line.as_deref(), Some("Uncaught Error: boom"));
    }
}
