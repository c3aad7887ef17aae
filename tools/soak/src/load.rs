//! The write load: bursts of pod creates, updates and deletes at a fixed rate,
//! each followed by an idle gap, until the run's deadline.
//!
//! Burst `b` makes `writes` writes, write `j` due at `j / rate` seconds into the
//! burst, in triples: `j = 3c` creates pod `soak-b<b>-<c>`, `3c + 1` merge-patches
//! it (after its create was acknowledged) and `3c + 2` deletes pod `c` of the
//! previous burst (in the first burst: patches pod `c` once more). So about
//! `writes / 3` pods are alive at any time, each write is one watch event,
//! and the idle gaps between bursts are where a connection that is only kept
//! alive by pings is tested (the etcd keepalive bug ended every watch there).
//! Pods have no `nodeName`, so a delete is immediate (no graceful deletion).

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use hyper::{Method, StatusCode};
use parking_lot::Mutex;
use tokio::sync::Semaphore;
use tokio::time::Instant;
use tokio_util::task::TaskTracker;

use crate::http;

/// Writes in flight at once, at most.
const MAX_IN_FLIGHT: usize = 64;
/// Error messages kept for the report.
const KEPT_ERRORS: usize = 8;
/// The label on every pod the soak creates.
pub const APP_LABEL: &str = "soak";

/// How the load goes.
#[derive(Clone, Copy, Debug)]
pub struct LoadPlan {
    /// Writes per burst.
    pub writes: u64,
    /// Writes per second within a burst.
    pub rate: u32,
    /// The gap after each burst.
    pub idle: Duration,
}

impl LoadPlan {
    /// How long one burst's writes take to issue.
    pub fn burst_length(&self) -> Duration {
        Duration::from_secs_f64(self.writes as f64 / f64::from(self.rate.max(1)))
    }
}

/// What the writes did.
#[derive(Debug, Default)]
pub struct WriteCounts {
    /// Bursts started.
    pub bursts: AtomicU64,
    /// Writes acknowledged (2xx).
    pub acked: AtomicU64,
    /// Creates acknowledged.
    pub creates: AtomicU64,
    /// Updates acknowledged.
    pub updates: AtomicU64,
    /// Deletes acknowledged.
    pub deletes: AtomicU64,
    /// Writes that failed.
    pub failed: AtomicU64,
    /// The first few failures.
    pub error_samples: Mutex<Vec<String>>,
}

impl WriteCounts {
    fn failed(&self, message: String) {
        self.failed.fetch_add(1, Ordering::Relaxed);
        let mut samples = self.error_samples.lock();
        if samples.len() < KEPT_ERRORS {
            samples.push(message);
        }
    }
}

/// The pods path of a namespace.
pub fn pods_path(namespace: &str) -> String {
    format!("/api/v1/namespaces/{namespace}/pods")
}

/// Pod `c` of burst `b`.
pub fn pod_name(burst: u64, c: u64) -> String {
    format!("soak-b{burst}-{c}")
}

fn pod_body(namespace: &str, name: &str, seq: u64) -> Vec<u8> {
    serde_json::json!({
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": name,
            "namespace": namespace,
            "labels": {"app": APP_LABEL},
            "annotations": {"soak/seq": seq.to_string()},
        },
        "spec": {
            "containers": [{"name": "pause", "image": "registry.k8s.io/pause:3.10"}],
        },
    })
    .to_string()
    .into_bytes()
}

fn patch_body(seq: u64) -> Vec<u8> {
    serde_json::json!({"metadata": {"annotations": {"soak/seq": seq.to_string()}}})
        .to_string()
        .into_bytes()
}

/// Runs bursts and idle gaps until `deadline`: a burst starts only if it can
/// finish before the deadline, so the run ends in an idle gap. Returns after the
/// last burst's writes are done (each bounded by [`http::REQUEST_TIMEOUT`]).
pub async fn run(
    client: kube::Client,
    namespace: String,
    plan: LoadPlan,
    deadline: Instant,
    counts: Arc<WriteCounts>,
) {
    let mut burst = 0u64;
    while Instant::now() + plan.burst_length() < deadline {
        counts.bursts.fetch_add(1, Ordering::Relaxed);
        run_burst(&client, &namespace, plan, burst, &counts).await;
        burst += 1;
        tokio::time::sleep_until(deadline.min(Instant::now() + plan.idle)).await;
    }
}

/// One burst (see the module docs); returns when all its writes have finished.
async fn run_burst(
    client: &kube::Client,
    namespace: &str,
    plan: LoadPlan,
    burst: u64,
    counts: &Arc<WriteCounts>,
) {
    let rate = f64::from(plan.rate.max(1));
    let start = Instant::now();
    let due = |j: u64| start + Duration::from_secs_f64(j as f64 / rate);
    let in_flight = Arc::new(Semaphore::new(MAX_IN_FLIGHT));
    let writers = TaskTracker::new();
    let path = pods_path(namespace);
    for c in 0..plan.writes.div_ceil(3) {
        let (create, patch, delete) = (3 * c, 3 * c + 1, 3 * c + 2);
        tokio::time::sleep_until(due(create)).await;
        let name = pod_name(burst, c);
        // In the first burst there is nothing to delete: patch once more.
        let patches = if burst == 0 {
            vec![patch, delete]
        } else {
            vec![patch]
        };
        let pod = PodWrites {
            item: format!("{path}/{name}"),
            body: pod_body(namespace, &name, create),
            patches: patches
                .into_iter()
                .filter(|&j| j < plan.writes)
                .map(|j| (j, due(j)))
                .collect(),
        };
        let writer = Writer {
            client: client.clone(),
            counts: Arc::clone(counts),
            in_flight: Arc::clone(&in_flight),
        };
        writers.spawn(writer.create_and_patch(path.clone(), pod));
        if burst > 0 && delete < plan.writes {
            let writer = Writer {
                client: client.clone(),
                counts: Arc::clone(counts),
                in_flight: Arc::clone(&in_flight),
            };
            let item = format!("{path}/{}", pod_name(burst - 1, c));
            writers.spawn(writer.delete(item, due(delete)));
        }
    }
    writers.close();
    writers.wait().await;
}

/// The writes of one new pod: its create, then its patches, each when due.
struct PodWrites {
    /// `/api/v1/namespaces/NS/pods/NAME`.
    item: String,
    /// The create's body.
    body: Vec<u8>,
    /// (sequence number, due time) of each patch.
    patches: Vec<(u64, Instant)>,
}

/// What a write task needs: the client, the counts, and the in-flight bound.
struct Writer {
    client: kube::Client,
    counts: Arc<WriteCounts>,
    in_flight: Arc<Semaphore>,
}

impl Writer {
    /// Creates the pod, then patches it at each patch's due time (a failed
    /// create skips the patches).
    async fn create_and_patch(self, pods_path: String, pod: PodWrites) {
        let created = {
            let Ok(_permit) = self.in_flight.acquire().await else {
                return;
            };
            http::call(
                &self.client,
                Method::POST,
                &pods_path,
                pod.body,
                "application/json",
                &[StatusCode::CREATED, StatusCode::OK],
            )
            .await
        };
        match created {
            Ok(_) => {
                self.counts.acked.fetch_add(1, Ordering::Relaxed);
                self.counts.creates.fetch_add(1, Ordering::Relaxed);
            }
            Err(message) => {
                self.counts
                    .failed(format!("create {}: {message}", pod.item));
                return;
            }
        }
        for (seq, at) in pod.patches {
            tokio::time::sleep_until(at).await;
            let Ok(_permit) = self.in_flight.acquire().await else {
                return;
            };
            match http::call(
                &self.client,
                Method::PATCH,
                &pod.item,
                patch_body(seq),
                "application/merge-patch+json",
                &[StatusCode::OK],
            )
            .await
            {
                Ok(_) => {
                    self.counts.acked.fetch_add(1, Ordering::Relaxed);
                    self.counts.updates.fetch_add(1, Ordering::Relaxed);
                }
                Err(message) => {
                    self.counts.failed(format!("patch {}: {message}", pod.item))
                }
            }
        }
    }

    /// Deletes `item` at `at`.
    async fn delete(self, item: String, at: Instant) {
        tokio::time::sleep_until(at).await;
        let Ok(_permit) = self.in_flight.acquire().await else {
            return;
        };
        match http::call(
            &self.client,
            Method::DELETE,
            &item,
            Vec::new(),
            "application/json",
            &[StatusCode::OK, StatusCode::ACCEPTED],
        )
        .await
        {
            Ok(_) => {
                self.counts.acked.fetch_add(1, Ordering::Relaxed);
                self.counts.deletes.fetch_add(1, Ordering::Relaxed);
            }
            Err(message) => self.counts.failed(format!("delete {item}: {message}")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_burst_lasts_writes_over_rate() {
        let plan = LoadPlan {
            writes: 500,
            rate: 100,
            idle: Duration::from_secs(180),
        };
        assert_eq!(plan.burst_length(), Duration::from_secs(5));
        assert_eq!(pod_name(3, 7), "soak-b3-7");
    }
}
