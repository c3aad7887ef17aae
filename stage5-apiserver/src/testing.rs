//! Test support: the real kubectl against a server, for this crate's tests and
//! the later stages' (behind the `testing` feature, as `stage5_storage::testing`
//! starts etcd).
//!
//! kubectl runs with `--server URL`, `--cache-dir` in a temporary folder and
//! `KUBECONFIG` pointing at an empty file there, so the user's own config is
//! never read or touched. Where kubectl is missing, a local run skips loudly;
//! with `CI=true` it fails. Every wait is bounded by [`WAIT`].

use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::Duration;

use tokio::sync::mpsc;
use tokio::time::timeout;

use crate::RunningServer;

/// The longest one kubectl command may take.
pub const WAIT: Duration = Duration::from_secs(60);

/// Runs `command` (a kubectl invocation) off the runtime and answers its output,
/// failing the test if it takes longer than [`WAIT`].
pub async fn output_in_time(
    mut command: std::process::Command,
) -> std::process::Output {
    timeout(WAIT, tokio::task::spawn_blocking(move || command.output()))
        .await
        .expect("kubectl in time")
        .expect("join")
        .expect("kubectl runs")
}

/// kubectl on PATH or at /usr/bin/kubectl, or `None` after saying why the test is
/// skipped (a failure with `CI=true`).
pub fn kubectl_or_skip(test: &str) -> Option<PathBuf> {
    let candidates = std::env::var_os("PATH")
        .map(|paths| {
            std::env::split_paths(&paths)
                .map(|p| p.join("kubectl"))
                .collect::<Vec<_>>()
        })
        .unwrap_or_default();
    let found = candidates
        .into_iter()
        .chain([PathBuf::from("/usr/bin/kubectl")])
        .find(|p| p.is_file());
    if found.is_none() {
        let ci = std::env::var("CI").is_ok_and(|v| v == "true");
        assert!(
            !ci,
            "{test}: kubectl is not on PATH and CI=true: install kubectl"
        );
        eprintln!(
            "\n**********\n SKIPPED {test}: kubectl is not on PATH\n**********\n"
        );
    }
    found
}

/// A kubectl for one server, with a temporary folder of its own.
pub struct Kubectl {
    bin: PathBuf,
    server: String,
    dir: tempfile::TempDir,
}

/// What one kubectl command answered.
pub struct Output {
    /// Whether it exited with success.
    pub ok: bool,
    /// Its standard output.
    pub stdout: String,
    /// Its standard error.
    pub stderr: String,
}

impl Kubectl {
    /// kubectl at `bin` against `server`.
    pub fn new(bin: PathBuf, server: &RunningServer) -> Self {
        Self::for_url(bin, server.url())
    }

    /// kubectl at `bin` against the server at `url`.
    pub fn for_url(bin: PathBuf, url: impl Into<String>) -> Self {
        let dir = tempfile::tempdir().expect("tempdir");
        std::fs::write(dir.path().join("kubeconfig"), "").expect("empty kubeconfig");
        Kubectl {
            bin,
            server: url.into(),
            dir,
        }
    }

    /// The command `kubectl ARGS`, not started.
    pub fn command(&self, args: &[&str]) -> Command {
        let mut command = Command::new(&self.bin);
        command
            .env("KUBECONFIG", self.dir.path().join("kubeconfig"))
            .env_remove("KUBERNETES_SERVICE_HOST")
            .arg("--server")
            .arg(&self.server)
            .arg("--cache-dir")
            .arg(self.dir.path().join("cache"))
            .arg("--request-timeout=20s")
            .args(args)
            .stdin(Stdio::null());
        command
    }

    /// Runs `kubectl ARGS` and answers what it printed.
    pub async fn run(&self, args: &[&str]) -> Output {
        let output = output_in_time(self.command(args)).await;
        let out = Output {
            ok: output.status.success(),
            stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
        };
        eprintln!("$ kubectl {}\n{}{}", args.join(" "), out.stdout, out.stderr);
        out
    }

    /// Runs `kubectl ARGS`, which must succeed, and answers its output.
    pub async fn ok(&self, args: &[&str]) -> String {
        let out = self.run(args).await;
        assert!(
            out.ok,
            "kubectl {args:?} failed:\n{}{}",
            out.stdout, out.stderr
        );
        out.stdout
    }

    /// A file in its temporary folder.
    pub fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }
}

/// A kubectl that keeps printing (`get -w`), read line by line; it is killed when
/// [`Watching::stop`] is called or the test ends.
pub struct Watching {
    child: Option<std::process::Child>,
    lines: mpsc::UnboundedReceiver<String>,
    reader: Option<std::thread::JoinHandle<()>>,
}

impl Watching {
    /// Starts `kubectl ARGS` with its output read on a thread of its own.
    pub fn start(kubectl: &Kubectl, args: &[&str]) -> Watching {
        let mut child = kubectl
            .command(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("kubectl starts");
        let stdout = child.stdout.take().expect("stdout");
        let (tx, lines) = mpsc::unbounded_channel::<String>();
        let reader = std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                eprintln!("kubectl -w: {line}");
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        Watching {
            child: Some(child),
            lines,
            reader: Some(reader),
        }
    }

    /// The next line it prints, within [`WAIT`].
    pub async fn next_line(&mut self) -> String {
        timeout(WAIT, self.lines.recv())
            .await
            .expect("kubectl prints in time")
            .expect("kubectl still runs")
    }

    /// Kills it and waits for it and its reader.
    pub async fn stop(mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = tokio::task::spawn_blocking(move || child.wait()).await;
        }
        if let Some(reader) = self.reader.take() {
            let _ = tokio::task::spawn_blocking(move || reader.join()).await;
        }
    }
}

impl Drop for Watching {
    fn drop(&mut self) {
        if let Some(child) = self.child.as_mut() {
            let _ = child.kill();
        }
    }
}
