//! A real `etcd` for tests and examples: started on free loopback ports with a
//! temporary data directory, and stopped when dropped. And, in [`contract`],
//! apiserver's storage contract suite (`pkg/storage/testing`), which this crate's
//! tests run on the etcd3 store and stage5-cacher's on the Cacher.
//!
//! Tests call [`EtcdServer::start_or_skip`]. Where the `etcd` binary is missing, a
//! local run skips the test with a loud message; with `CI=true` the test fails, so
//! CI can't pass without etcd.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

pub mod cluster;
pub mod contract;

pub use cluster::{EtcdCluster, EtcdMember};

/// How long a started etcd may take to answer `/health`.
const START_TIMEOUT: Duration = Duration::from_secs(20);

/// The progress-notify interval the test etcd runs with (etcd's default is 10
/// minutes).
pub const TEST_PROGRESS_NOTIFY_INTERVAL: Duration = Duration::from_millis(200);

/// etcd's default progress-notify interval (10 minutes): watches see no periodic
/// progress notification in a test, only the ones asked for.
pub const ETCD_DEFAULT_PROGRESS_NOTIFY_INTERVAL: Duration = Duration::from_secs(600);

/// A running `etcd` child process.
#[derive(Debug)]
pub struct EtcdServer {
    child: Option<Child>,
    client_addr: SocketAddr,
    _data_dir: tempfile::TempDir,
}

/// Whether the `etcd` binary is on `PATH`.
pub fn etcd_available() -> bool {
    Command::new("etcd")
        .arg("--version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

impl EtcdServer {
    /// Starts etcd, or returns `None` after printing why the test is skipped. With
    /// `CI=true` a missing binary or a failed start panics instead.
    pub fn start_or_skip(test: &str) -> Option<EtcdServer> {
        EtcdServer::start_or_skip_with(test, TEST_PROGRESS_NOTIFY_INTERVAL)
    }

    /// [`start_or_skip`](Self::start_or_skip) from async code: etcd starts (and
    /// is waited for) on a blocking thread, so the runtime keeps running.
    pub async fn start_or_skip_async(test: &str) -> Option<EtcdServer> {
        let test = test.to_string();
        tokio::task::spawn_blocking(move || EtcdServer::start_or_skip(&test))
            .await
            // A failed start panics (under CI=true): pass that panic on.
            .unwrap_or_else(|error| std::panic::resume_unwind(error.into_panic()))
    }

    /// Like [`start_or_skip`](Self::start_or_skip), with this progress-notify
    /// interval (etcd's default is [`ETCD_DEFAULT_PROGRESS_NOTIFY_INTERVAL`]).
    pub fn start_or_skip_with(
        test: &str,
        progress_notify_interval: Duration,
    ) -> Option<EtcdServer> {
        let ci = std::env::var("CI").is_ok_and(|v| v == "true");
        if !etcd_available() {
            assert!(
                !ci,
                "{test}: `etcd` is not on PATH and CI=true: install etcd-server (see .ci/run)"
            );
            eprintln!(
                "\n**********\n SKIPPED {test}: `etcd` is not on PATH (apt-get install etcd-server)\n**********\n"
            );
            return None;
        }
        match EtcdServer::start_with(progress_notify_interval) {
            Ok(server) => Some(server),
            Err(error) => panic!("{test}: could not start etcd: {error}"),
        }
    }

    /// Starts etcd on two free loopback ports with the v2 API enabled and a short
    /// progress-notify interval, and waits (bounded) until it answers `/health`.
    pub fn start() -> std::io::Result<EtcdServer> {
        EtcdServer::start_with(TEST_PROGRESS_NOTIFY_INTERVAL)
    }

    /// Like [`start`](Self::start), with this progress-notify interval.
    pub fn start_with(
        progress_notify_interval: Duration,
    ) -> std::io::Result<EtcdServer> {
        let data_dir = tempfile::tempdir()?;
        let client_addr = free_port()?;
        let peer_addr = free_port()?;
        let client_url = format!("http://{client_addr}");
        let peer_url = format!("http://{peer_addr}");
        let child = Command::new("etcd")
            .arg("--name=test")
            .arg(format!("--data-dir={}", data_dir.path().display()))
            .arg(format!("--listen-client-urls={client_url}"))
            .arg(format!("--advertise-client-urls={client_url}"))
            .arg(format!("--listen-peer-urls={peer_url}"))
            .arg(format!("--initial-advertise-peer-urls={peer_url}"))
            .arg(format!("--initial-cluster=test={peer_url}"))
            .arg("--enable-v2=true")
            .arg(format!(
                "--experimental-watch-progress-notify-interval={}ms",
                progress_notify_interval.as_millis()
            ))
            .arg("--logger=zap")
            .arg("--log-level=error")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()?;
        let mut server = EtcdServer {
            child: Some(child),
            client_addr,
            _data_dir: data_dir,
        };
        server.wait_healthy()?;
        Ok(server)
    }

    /// The client URL, e.g. `http://127.0.0.1:40123`.
    pub fn client_url(&self) -> String {
        format!("http://{}", self.client_addr)
    }

    /// The client address.
    pub fn client_addr(&self) -> SocketAddr {
        self.client_addr
    }

    /// Kills etcd at once (SIGKILL), for fault tests, and reaps it.
    pub fn kill(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    fn wait_healthy(&mut self) -> std::io::Result<()> {
        let deadline = Instant::now() + START_TIMEOUT;
        loop {
            if let Some(child) = self.child.as_mut()
                && let Some(status) = child.try_wait()?
            {
                return Err(std::io::Error::other(format!(
                    "etcd exited at start: {status}"
                )));
            }
            if http_get(self.client_addr, "/health")
                .is_ok_and(|body| body.contains("true"))
            {
                return Ok(());
            }
            if Instant::now() > deadline {
                self.kill();
                return Err(std::io::Error::other(
                    "etcd did not become healthy in 20 s",
                ));
            }
            // Polling an outside process until it is ready; not synchronisation of
            // our own code.
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

impl Drop for EtcdServer {
    fn drop(&mut self) {
        self.kill();
    }
}

/// A loopback address with a port free right now (bound, then released).
pub fn free_port() -> std::io::Result<SocketAddr> {
    let listener = TcpListener::bind("127.0.0.1:0")?;
    listener.local_addr()
}

/// A minimal blocking HTTP/1.0 GET, enough for etcd's `/health` and `/metrics`.
pub fn http_get(addr: SocketAddr, path: &str) -> std::io::Result<String> {
    let mut stream = TcpStream::connect_timeout(&addr, Duration::from_millis(500))?;
    stream.set_read_timeout(Some(Duration::from_secs(2)))?;
    write!(stream, "GET {path} HTTP/1.0\r\nHost: {addr}\r\n\r\n")?;
    let mut response = String::new();
    stream.read_to_string(&mut response)?;
    Ok(response)
}
