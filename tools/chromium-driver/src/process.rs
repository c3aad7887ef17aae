//! Starting one headless Chromium, and getting rid of it and its profile again.

use std::ffi::OsString;
use std::io::{BufRead, BufReader, PipeReader};
use std::path::Path;
use std::sync::Mutex;
use std::sync::mpsc::Receiver;
use std::time::Duration;

use tempfile::TempDir;
use tokio::process::{Child, Command};
use tokio::sync::mpsc::{UnboundedReceiver, UnboundedSender, unbounded_channel};
use tokio::time::Instant;

use crate::{Error, lock};

/// How long Chromium may take to print its DevTools address.
const LAUNCH_TIMEOUT: Duration = Duration::from_secs(30);

/// How long a drop waits for Chromium's helper processes to exit after the
/// browser is killed (they usually take well under a second).
const EXIT_TIMEOUT: Duration = Duration::from_secs(5);

/// The flags after `--user-data-dir`: quiet, headless, and a blank first tab.
const FLAGS: [&str; 7] = [
    "--no-sandbox",
    "--disable-gpu",
    "--no-first-run",
    "--no-default-browser-check",
    "--hide-scrollbars",
    "--mute-audio",
    "about:blank",
];

/// A running Chromium.
///
/// Dropping it kills the browser and waits (at most 5 s) until its helper
/// processes have exited too and its profile directory is removed: they keep
/// writing to it for a moment after the browser dies, and would otherwise
/// leave it behind.
pub(crate) struct Process {
    child: Child,
    /// Disconnected once every process that had Chromium's stderr has exited
    /// and the profile is removed.
    gone: Mutex<Receiver<()>>,
}

impl Process {
    /// Starts `program` headless with a fresh profile, and returns it with the
    /// `ws://` address of its DevTools.
    pub(crate) async fn start(program: &Path) -> Result<(Process, String), Error> {
        let profile = tempfile::Builder::new()
            .prefix("chromium-driver-")
            .tempdir()?;
        let (stderr, writer) = std::io::pipe()?;
        let child =
            command(program, profile.path(), writer)
                .spawn()
                .map_err(|error| {
                    Error::Launch(format!(
                        "could not start {}: {error}",
                        program.display()
                    ))
                })?;
        let (lines, mut received) = unbounded_channel();
        let (done, gone) = std::sync::mpsc::channel::<()>();
        std::thread::Builder::new()
            .name("chromium-stderr".to_owned())
            .spawn(move || {
                read_stderr(stderr, lines, profile);
                drop(done);
            })?;
        let mut process = Process {
            child,
            gone: Mutex::new(gone),
        };
        let url = process.devtools_url(&mut received).await?;
        Ok((process, url))
    }

    /// Waits for the `DevTools listening on ws://…` line among Chromium's
    /// stderr `lines`.
    async fn devtools_url(
        &mut self,
        lines: &mut UnboundedReceiver<String>,
    ) -> Result<String, Error> {
        let deadline = Instant::now() + LAUNCH_TIMEOUT;
        let mut seen = String::new();
        loop {
            let Ok(line) = tokio::time::timeout_at(deadline, lines.recv()).await
            else {
                let waited = LAUNCH_TIMEOUT.as_secs();
                let message = format!(
                    "no DevTools address within {waited} s; stderr:\n{seen}"
                );
                return Err(Error::Launch(message));
            };
            let Some(line) = line else {
                return Err(Error::Launch(self.exited(&seen)));
            };
            if let Some(url) = listening_url(&line) {
                return Ok(url.to_owned());
            }
            seen.push_str(&line);
        }
    }

    /// Why the launch failed when Chromium's stderr ended early.
    fn exited(&mut self, stderr: &str) -> String {
        let status = match self.child.try_wait() {
            Ok(Some(status)) => format!("Chromium exited ({status})"),
            _ => "Chromium closed its stderr".to_owned(),
        };
        format!("{status} before printing its DevTools address; stderr:\n{stderr}")
    }
}

impl Drop for Process {
    fn drop(&mut self) {
        // An error means it has already exited.
        let _ = self.child.start_kill();
        let _ = lock(&self.gone).recv_timeout(EXIT_TIMEOUT);
    }
}

/// The command line that starts Chromium headless with `profile` as its
/// profile and `stderr` as its stderr.
fn command(program: &Path, profile: &Path, stderr: std::io::PipeWriter) -> Command {
    let mut user_data_dir = OsString::from("--user-data-dir=");
    user_data_dir.push(profile);
    let mut command = Command::new(program);
    command
        .args(["--headless=new", "--remote-debugging-port=0"])
        .arg(user_data_dir)
        .args(FLAGS)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(stderr)
        .kill_on_drop(true);
    command
}

/// Sends Chromium's stderr line by line to `lines` while anyone listens, then
/// reads it to its end, which comes once the browser and every helper process
/// (they all inherit it) have exited; only then is `profile` removed.
fn read_stderr(
    stderr: PipeReader,
    lines: UnboundedSender<String>,
    profile: TempDir,
) {
    let mut stderr = BufReader::new(stderr);
    let mut line = Vec::new();
    while !lines.is_closed() {
        line.clear();
        match stderr.read_until(b'\n', &mut line) {
            Ok(0) | Err(_) => break,
            Ok(_) => {
                let _ = lines.send(String::from_utf8_lossy(&line).into_owned());
            }
        }
    }
    let _ = std::io::copy(&mut stderr, &mut std::io::sink());
    drop(profile);
}

/// The `ws://` address in Chromium's `DevTools listening on …` line.
pub(crate) fn listening_url(line: &str) -> Option<&str> {
    let url = line.trim().strip_prefix("DevTools listening on ")?;
    url.starts_with("ws://").then_some(url)
}
