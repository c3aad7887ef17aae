//! A three-member etcd cluster on free loopback ports, for failover tests: each
//! member can be killed (SIGKILL, by the PID the test started) and started again
//! from its data directory. Mirrors what etcd's `tests/framework/integration`
//! cluster gives etcd's own tests, with real `etcd` processes.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use super::{free_port, http_get};

/// How long one member may take to answer `/health`.
const START_TIMEOUT: Duration = Duration::from_secs(20);

/// One `etcd` member: its ports and data directory outlive its process, so it can
/// be started again.
#[derive(Debug)]
pub struct EtcdMember {
    name: String,
    client_addr: SocketAddr,
    peer_addr: SocketAddr,
    data_dir: PathBuf,
    child: Option<Child>,
}

impl EtcdMember {
    /// Whether the member's process is running (it was not killed).
    pub fn is_running(&self) -> bool {
        self.child.is_some()
    }

    /// The member's client URL, e.g. `http://127.0.0.1:40123`.
    pub fn client_url(&self) -> String {
        format!("http://{}", self.client_addr)
    }

    /// Kills this member (SIGKILL, by the PID the test started) and reaps it.
    pub fn kill(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

/// A three-member etcd cluster on free loopback ports, started and stopped by
/// the test.
#[derive(Debug)]
pub struct EtcdCluster {
    /// The members, `m0`, `m1`, `m2`.
    pub members: Vec<EtcdMember>,
}

impl EtcdCluster {
    /// Starts the three members and waits (bounded) until each answers
    /// `/health`.
    pub fn start() -> std::io::Result<EtcdCluster> {
        let mut members = Vec::new();
        for i in 0..3 {
            let data_dir = std::env::temp_dir().join(format!(
                "etcd-cluster-{}-{i}-{}",
                std::process::id(),
                free_port()?.port()
            ));
            members.push(EtcdMember {
                name: format!("m{i}"),
                client_addr: free_port()?,
                peer_addr: free_port()?,
                data_dir,
                child: None,
            });
        }
        let mut cluster = EtcdCluster { members };
        for i in 0..3 {
            cluster.start_member(i)?;
        }
        for i in 0..3 {
            cluster.wait_healthy(i)?;
        }
        Ok(cluster)
    }

    fn initial_cluster(&self) -> String {
        self.members
            .iter()
            .map(|m| format!("{}=http://{}", m.name, m.peer_addr))
            .collect::<Vec<_>>()
            .join(",")
    }

    /// Starts member `i` (again, after a kill, from its data directory).
    pub fn start_member(&mut self, i: usize) -> std::io::Result<()> {
        let initial_cluster = self.initial_cluster();
        let m = &mut self.members[i];
        let client_url = m.client_url();
        let peer_url = format!("http://{}", m.peer_addr);
        let child = Command::new("etcd")
            .arg(format!("--name={}", m.name))
            .arg(format!("--data-dir={}", m.data_dir.display()))
            .arg(format!("--listen-client-urls={client_url}"))
            .arg(format!("--advertise-client-urls={client_url}"))
            .arg(format!("--listen-peer-urls={peer_url}"))
            .arg(format!("--initial-advertise-peer-urls={peer_url}"))
            .arg(format!("--initial-cluster={initial_cluster}"))
            .arg("--initial-cluster-token=cluster")
            .arg("--logger=zap")
            .arg("--log-level=error")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()?;
        m.child = Some(child);
        Ok(())
    }

    /// Waits (bounded) until member `i` answers `/health` with a leader.
    pub fn wait_healthy(&mut self, i: usize) -> std::io::Result<()> {
        let deadline = Instant::now() + START_TIMEOUT;
        let m = &mut self.members[i];
        loop {
            if let Some(child) = m.child.as_mut()
                && let Some(status) = child.try_wait()?
            {
                return Err(std::io::Error::other(format!(
                    "etcd {} exited: {status}",
                    m.name
                )));
            }
            if http_get(m.client_addr, "/health").is_ok_and(|b| b.contains("true")) {
                return Ok(());
            }
            if Instant::now() > deadline {
                return Err(std::io::Error::other(format!(
                    "etcd {} not healthy in {START_TIMEOUT:?}",
                    m.name
                )));
            }
            // Polling an outside process until it is ready.
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// The running member that is the Raft leader, by its `etcd_server_is_leader`
    /// metric (no etcdctl needed).
    pub fn leader(&self) -> Option<usize> {
        self.members.iter().position(|m| {
            m.child.is_some()
                && http_get(m.client_addr, "/metrics")
                    .is_ok_and(|b| b.contains("\netcd_server_is_leader 1"))
        })
    }

    /// Every member's client URL, as `--etcd-servers` lists them.
    pub fn client_urls(&self) -> Vec<String> {
        self.members.iter().map(EtcdMember::client_url).collect()
    }
}

impl Drop for EtcdCluster {
    fn drop(&mut self) {
        for m in &mut self.members {
            m.kill();
            let _ = std::fs::remove_dir_all(&m.data_dir);
        }
    }
}
