//! Finding, launching and owning one headless Chromium.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde_json::{Value, json};
use tokio::task::JoinHandle;

use crate::Error;
use crate::connection::Connection;
use crate::page::Page;
use crate::process::Process;

/// The names looked for on `PATH`, in order.
const CANDIDATES: [&str; 3] = ["chromium", "chromium-browser", "google-chrome"];

/// A running headless Chromium and the DevTools connection to it.
///
/// Dropping it kills the process, and removes its profile directory once
/// Chromium's helper processes have exited too (waiting at most 5 s).
pub struct Browser {
    connection: Arc<Connection>,
    reader: JoinHandle<()>,
    _process: Process,
}

impl Browser {
    /// The Chromium to launch: `$CHROMIUM` if set, else the first of
    /// `chromium`, `chromium-browser` and `google-chrome` found on `PATH`.
    pub fn find() -> Option<PathBuf> {
        if let Some(path) =
            std::env::var_os("CHROMIUM").filter(|path| !path.is_empty())
        {
            return Some(PathBuf::from(path));
        }
        let path = std::env::var_os("PATH")?;
        CANDIDATES.iter().find_map(|name| {
            std::env::split_paths(&path)
                .map(|dir| dir.join(name))
                .find(|candidate| is_executable(candidate))
        })
    }

    /// Launches a headless Chromium with a fresh profile and connects to it.
    ///
    /// Waits (at most 30 s) for Chromium to print `DevTools listening on ws://…`
    /// on its stderr; if it exits first, the error holds what it printed.
    pub async fn launch() -> Result<Browser, Error> {
        let program = Self::find().ok_or_else(|| {
            Error::Launch(
                "no Chromium found: set $CHROMIUM or put chromium, chromium-browser \
                 or google-chrome on PATH"
                    .to_owned(),
            )
        })?;
        let (process, url) = Process::start(&program).await?;
        let (connection, reader) = Connection::connect(&url).await?;
        Ok(Browser {
            connection,
            reader,
            _process: process,
        })
    }

    /// Opens a new tab of `width`×`height` CSS pixels and loads `url` in it.
    ///
    /// Returns once the page's load event has fired (at most 30 s).
    pub async fn open(
        &self,
        url: &str,
        width: u32,
        height: u32,
    ) -> Result<Page, Error> {
        let blank = json!({ "url": "about:blank" });
        let created = self.call("Target.createTarget", blank).await?;
        let target = string_field(&created, "targetId", "Target.createTarget")?;
        let attach = json!({ "targetId": target, "flatten": true });
        let attached = self.call("Target.attachToTarget", attach).await?;
        let session = string_field(&attached, "sessionId", "Target.attachToTarget")?;
        let page = Page::attach(Arc::clone(&self.connection), session)?;
        page.prepare(width, height).await?;
        page.navigate(url).await?;
        Ok(page)
    }

    /// Sends a browser-level command (one without a session).
    async fn call(
        &self,
        method: &'static str,
        params: Value,
    ) -> Result<Value, Error> {
        self.connection.call(None, method, params).await
    }
}

impl Drop for Browser {
    fn drop(&mut self) {
        self.reader.abort();
        self.connection.close();
        // Then `Process`'s drop kills Chromium.
    }
}

/// The string `field` of a command's result.
fn string_field(
    result: &Value,
    field: &str,
    method: &'static str,
) -> Result<String, Error> {
    match result.get(field).and_then(Value::as_str) {
        Some(value) => Ok(value.to_owned()),
        None => Err(Error::Cdp {
            method,
            message: format!("the answer has no {field}"),
        }),
    }
}

/// Whether `path` is a file someone may execute.
#[cfg(unix)]
fn is_executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    let metadata = path.metadata();
    metadata.is_ok_and(|metadata| {
        metadata.is_file() && metadata.permissions().mode() & 0o111 != 0
    })
}

/// Whether `path` is a file (the best guess at "executable" off Unix).
#[cfg(not(unix))]
fn is_executable(path: &Path) -> bool {
    path.is_file()
}
