//! What every controller of kube-controller-manager shares: mirrors kubernetes'
//! [`pkg/controller/controller_utils.go`]: the expectations a controller keeps
//! of the creates and deletes it made and has not seen yet
//! (`ControllerExpectations`, `UIDTrackingControllerExpectations`), the pod
//! control that creates pods from a template with their controller reference
//! (`RealPodControl`), and the pod filters and ranks (`FilterActivePods`,
//! `IsPodActive`, `ActivePodsWithRanks`).
//!
//! ## Why expectations
//!
//! A controller reads its world from an informer's cache, which lags behind
//! its own writes. Right after a ReplicaSet controller created two pods, its
//! cache still shows the old count, and a second sync would create two more.
//! So before it writes it records what it expects to see (two creations), the
//! pod informer's handlers lower the count as the pods arrive, and the
//! controller does not manage replicas again until the expectations are met
//! (or expired after five minutes, in case a watch event was lost).
//!
//! [`pkg/controller/controller_utils.go`]: https://github.com/kubernetes/kubernetes/blob/v1.36.0/pkg/controller/controller_utils.go

use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use std::time::Duration;

use k8s_openapi::api::core::v1::{Pod, PodTemplateSpec};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, OwnerReference};
use kube::api::{Api, DeleteParams, PostParams, Preconditions};
use parking_lot::Mutex;
use tokio::time::Instant;

/// Mirrors `ExpectationsTimeout`: expectations older than this are satisfied
/// anyway, in case an informer missed an event.
pub const EXPECTATIONS_TIMEOUT: Duration = Duration::from_secs(5 * 60);

/// Mirrors `SlowStartInitialBatchSize`: the first batch of a slow start.
pub const SLOW_START_INITIAL_BATCH_SIZE: usize = 1;

/// Mirrors the ReplicaSet controller's `BurstReplicas`: at most this many
/// creates or deletes in one sync.
pub const BURST_REPLICAS: usize = 500;

// ANCHOR: expectation
/// One controller's expectations: mirrors `ControlleeExpectations`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Expectation {
    /// Creations not seen yet.
    add: i64,
    /// Deletions not seen yet.
    del: i64,
    /// When they were set.
    timestamp: Instant,
}

impl Expectation {
    /// Mirrors `ControlleeExpectations.Fulfilled`.
    fn fulfilled(&self) -> bool {
        self.add <= 0 && self.del <= 0
    }
}
// ANCHOR_END: expectation

// ANCHOR: controller_expectations
/// Mirrors `ControllerExpectations`: per controller key, how many creations and
/// deletions it still expects to observe.
#[derive(Debug, Default)]
pub struct ControllerExpectations {
    expectations: Mutex<HashMap<String, Expectation>>,
}
// ANCHOR_END: controller_expectations

impl ControllerExpectations {
    /// An empty store.
    pub fn new() -> Self {
        Self::default()
    }

    // ANCHOR: satisfied_expectations
    /// Mirrors `SatisfiedExpectations`: whether the controller `key` may act
    /// again: it has no expectations, they are fulfilled, or they expired.
    pub fn satisfied_expectations(&self, key: &str) -> bool {
        // ANCHOR: ex6-expectations
        match self.expectations.lock().get(key) {
            None => true,
            Some(expectation) => {
                expectation.fulfilled()
                    || expectation.timestamp.elapsed() > EXPECTATIONS_TIMEOUT
            }
        }
        // ANCHOR_END: ex6-expectations
    }
    // ANCHOR_END: satisfied_expectations

    /// Mirrors `SetExpectations`: replaces `key`'s expectations.
    pub fn set_expectations(&self, key: &str, add: i64, del: i64) {
        self.expectations.lock().insert(
            key.to_string(),
            Expectation {
                add,
                del,
                timestamp: Instant::now(),
            },
        );
    }

    /// Mirrors `ExpectCreations`.
    pub fn expect_creations(&self, key: &str, adds: usize) {
        self.set_expectations(key, to_i64(adds), 0);
    }

    /// Mirrors `ExpectDeletions`.
    pub fn expect_deletions(&self, key: &str, dels: usize) {
        self.set_expectations(key, 0, to_i64(dels));
    }

    /// Mirrors `LowerExpectations`: `add` and `del` fewer expected.
    pub fn lower_expectations(&self, key: &str, add: usize, del: usize) {
        if let Some(expectation) = self.expectations.lock().get_mut(key) {
            expectation.add -= to_i64(add);
            expectation.del -= to_i64(del);
        }
    }

    /// Mirrors `RaiseExpectations`.
    pub fn raise_expectations(&self, key: &str, add: usize, del: usize) {
        if let Some(expectation) = self.expectations.lock().get_mut(key) {
            expectation.add += to_i64(add);
            expectation.del += to_i64(del);
        }
    }

    /// Mirrors `CreationObserved`: one creation seen.
    pub fn creation_observed(&self, key: &str) {
        self.lower_expectations(key, 1, 0);
    }

    /// Mirrors `DeletionObserved`: one deletion seen.
    pub fn deletion_observed(&self, key: &str) {
        self.lower_expectations(key, 0, 1);
    }

    /// Mirrors `DeleteExpectations`: forgets `key` (its controller is gone).
    pub fn delete_expectations(&self, key: &str) {
        self.expectations.lock().remove(key);
    }

    /// What is still expected of `key`: `(add, del)`, if anything is recorded.
    pub fn get(&self, key: &str) -> Option<(i64, i64)> {
        self.expectations.lock().get(key).map(|e| (e.add, e.del))
    }
}

/// Mirrors `UIDTrackingControllerExpectations`: expectations whose deletions
/// are tracked by the pods' keys, so a pod deleted twice (a graceful delete,
/// then the kubelet's) lowers the count once.
#[derive(Debug, Default)]
pub struct UidTrackingControllerExpectations {
    expectations: ControllerExpectations,
    uids: Mutex<HashMap<String, HashSet<String>>>,
}

impl UidTrackingControllerExpectations {
    /// An empty store.
    pub fn new() -> Self {
        Self::default()
    }

    /// Mirrors `SatisfiedExpectations`.
    pub fn satisfied_expectations(&self, key: &str) -> bool {
        self.expectations.satisfied_expectations(key)
    }

    /// Mirrors `ExpectCreations`.
    pub fn expect_creations(&self, key: &str, adds: usize) {
        self.expectations.expect_creations(key, adds);
    }

    /// Mirrors `CreationObserved`.
    pub fn creation_observed(&self, key: &str) {
        self.expectations.creation_observed(key);
    }

    /// Mirrors `LowerExpectations`.
    pub fn lower_expectations(&self, key: &str, add: usize, del: usize) {
        self.expectations.lower_expectations(key, add, del);
    }

    // ANCHOR: uid_deletions
    /// Mirrors `ExpectDeletions`: the deletions of these pods' keys.
    pub fn expect_deletions(&self, key: &str, deleted_keys: &[String]) {
        self.uids
            .lock()
            .insert(key.to_string(), deleted_keys.iter().cloned().collect());
        self.expectations.expect_deletions(key, deleted_keys.len());
    }

    /// Mirrors `DeletionObserved`: the pod `deleted_key` is gone (or going);
    /// counted once.
    pub fn deletion_observed(&self, key: &str, deleted_key: &str) {
        let mut uids = self.uids.lock();
        if let Some(pending) = uids.get_mut(key)
            && pending.remove(deleted_key)
        {
            self.expectations.deletion_observed(key);
        }
    }
    // ANCHOR_END: uid_deletions

    /// Mirrors `DeleteExpectations`.
    pub fn delete_expectations(&self, key: &str) {
        self.uids.lock().remove(key);
        self.expectations.delete_expectations(key);
    }

    /// What is still expected of `key`: `(add, del)`.
    pub fn get(&self, key: &str) -> Option<(i64, i64)> {
        self.expectations.get(key)
    }
}

fn to_i64(n: usize) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

/// `namespace/name`, the key of a namespaced object (`MetaNamespaceKeyFunc`).
pub fn key_of(meta: &ObjectMeta) -> String {
    format!(
        "{}/{}",
        meta.namespace.as_deref().unwrap_or_default(),
        meta.name.as_deref().unwrap_or_default()
    )
}

/// Mirrors `metav1.GetControllerOf`: the owner reference with `controller:
/// true`.
pub fn get_controller_of(meta: &ObjectMeta) -> Option<&OwnerReference> {
    meta.owner_references
        .as_deref()
        .unwrap_or_default()
        .iter()
        .find(|r| r.controller == Some(true))
}

/// Mirrors `metav1.NewControllerRef`: the reference a controller puts in what
/// it creates (`controller: true`, `blockOwnerDeletion: true`).
pub fn new_controller_ref(
    owner: &ObjectMeta,
    api_version: &str,
    kind: &str,
) -> OwnerReference {
    OwnerReference {
        api_version: api_version.to_string(),
        kind: kind.to_string(),
        name: owner.name.clone().unwrap_or_default(),
        uid: owner.uid.clone().unwrap_or_default(),
        controller: Some(true),
        block_owner_deletion: Some(true),
    }
}

/// Mirrors `IsPodActive`: not finished and not being deleted.
pub fn is_pod_active(pod: &Pod) -> bool {
    let phase = pod.status.as_ref().and_then(|s| s.phase.as_deref());
    !matches!(phase, Some("Succeeded" | "Failed"))
        && pod.metadata.deletion_timestamp.is_none()
}

/// Mirrors `FilterActivePods`.
pub fn filter_active_pods(pods: &[Arc<Pod>]) -> Vec<Arc<Pod>> {
    pods.iter().filter(|p| is_pod_active(p)).cloned().collect()
}

/// Mirrors `podutil.IsPodReady`: the `Ready` condition is `True`.
pub fn is_pod_ready(pod: &Pod) -> bool {
    pod.status
        .as_ref()
        .and_then(|s| s.conditions.as_deref())
        .unwrap_or_default()
        .iter()
        .any(|c| c.type_ == "Ready" && c.status == "True")
}

/// When the pod became ready (the `Ready` condition's last transition).
fn ready_since(pod: &Pod) -> Option<k8s_openapi::jiff::Timestamp> {
    pod.status
        .as_ref()
        .and_then(|s| s.conditions.as_deref())
        .unwrap_or_default()
        .iter()
        .find(|c| c.type_ == "Ready" && c.status == "True")
        .and_then(|c| c.last_transition_time.as_ref())
        .map(|t| t.0)
}

/// Mirrors `podutil.IsPodAvailable`: ready for at least `min_ready_seconds`
/// as of `now`.
pub fn is_pod_available(
    pod: &Pod,
    min_ready_seconds: i64,
    now: k8s_openapi::jiff::Timestamp,
) -> bool {
    if !is_pod_ready(pod) {
        return false;
    }
    if min_ready_seconds <= 0 {
        return true;
    }
    ready_since(pod).is_some_and(|since| {
        now.duration_since(since)
            >= k8s_openapi::jiff::SignedDuration::from_secs(min_ready_seconds)
    })
}

/// The restart count of the pod's containers (the highest).
fn max_restarts(pod: &Pod) -> i32 {
    pod.status
        .as_ref()
        .and_then(|s| s.container_statuses.as_deref())
        .unwrap_or_default()
        .iter()
        .map(|c| c.restart_count)
        .max()
        .unwrap_or(0)
}

/// The rank of a phase for deletion: `Pending` < `Unknown` < `Running`.
fn phase_rank(pod: &Pod) -> u8 {
    match pod.status.as_ref().and_then(|s| s.phase.as_deref()) {
        Some("Pending") => 0,
        Some("Running") => 2,
        _ => 1,
    }
}

// ANCHOR: active_pods_with_ranks
/// Mirrors `ActivePodsWithRanks.Less`: the order in which a controller picks
/// pods to delete, the cheapest first: unassigned before assigned, pending
/// before unknown before running, not ready before ready, pods on nodes that
/// run more pods of the same owner (`rank`) before others, ready for less time
/// before longer, more restarts before fewer, newer before older.
pub fn deletion_order(
    a: &(Arc<Pod>, usize),
    b: &(Arc<Pod>, usize),
) -> std::cmp::Ordering {
    use std::cmp::Ordering;
    let (pa, rank_a) = (&a.0, a.1);
    let (pb, rank_b) = (&b.0, b.1);
    let assigned = |p: &Pod| {
        p.spec
            .as_ref()
            .and_then(|s| s.node_name.as_deref())
            .is_some_and(|n| !n.is_empty())
    };
    assigned(pa)
        .cmp(&assigned(pb))
        .then_with(|| phase_rank(pa).cmp(&phase_rank(pb)))
        .then_with(|| is_pod_ready(pa).cmp(&is_pod_ready(pb)))
        .then_with(|| rank_b.cmp(&rank_a))
        .then_with(|| match (ready_since(pa), ready_since(pb)) {
            // Ready for less time first: a later transition first.
            (Some(x), Some(y)) if is_pod_ready(pa) && is_pod_ready(pb) => y.cmp(&x),
            _ => Ordering::Equal,
        })
        .then_with(|| max_restarts(pb).cmp(&max_restarts(pa)))
        .then_with(|| {
            let created =
                |p: &Pod| p.metadata.creation_timestamp.as_ref().map(|t| t.0);
            created(pb).cmp(&created(pa))
        })
}
// ANCHOR_END: active_pods_with_ranks

/// Mirrors `slowStartBatch` (in `replica_set.go`): calls `f` `count` times,
/// in batches that start at `initial_batch_size` and double while every call
/// succeeds; stops at the first batch with a failure. Returns how many
/// succeeded and the first error.
pub async fn slow_start_batch<F, Fut, E>(
    count: usize,
    initial_batch_size: usize,
    f: F,
) -> (usize, Option<E>)
where
    F: Fn() -> Fut,
    Fut: std::future::Future<Output = Result<(), E>>,
{
    let mut remaining = count;
    let mut successes = 0;
    let mut batch_size = remaining.min(initial_batch_size.max(1));
    while batch_size > 0 {
        let results = futures::future::join_all((0..batch_size).map(|_| f())).await;
        let mut first_error = None;
        for result in results {
            match result {
                Ok(()) => successes += 1,
                Err(error) if first_error.is_none() => first_error = Some(error),
                Err(_) => {}
            }
        }
        if first_error.is_some() {
            return (successes, first_error);
        }
        remaining -= batch_size;
        batch_size = remaining.min(2 * batch_size);
    }
    (successes, None)
}

/// Mirrors `RealPodControl`: creates and deletes pods for a controller.
#[derive(Clone)]
pub struct PodControl {
    client: kube::Client,
    recorder: crate::record::EventRecorder,
}

impl std::fmt::Debug for PodControl {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PodControl").finish_non_exhaustive()
    }
}

impl PodControl {
    /// Pod control over `client`, recording events with `recorder`.
    pub fn new(
        client: kube::Client,
        recorder: crate::record::EventRecorder,
    ) -> Self {
        Self { client, recorder }
    }

    /// Mirrors `RealPodControl.CreatePods` with `GetPodFromTemplate`: a pod
    /// from `template` in `namespace`, named after its owner (`generateName`
    /// `<owner>-`), owned by `controller_ref`. Records `SuccessfulCreate` or
    /// `FailedCreate` on the owner.
    pub async fn create_pod(
        &self,
        namespace: &str,
        template: &PodTemplateSpec,
        owner: &crate::record::ObjectReference,
        controller_ref: &OwnerReference,
    ) -> Result<Pod, kube::Error> {
        let pod = pod_from_template(template, controller_ref);
        let api: Api<Pod> = Api::namespaced(self.client.clone(), namespace);
        match api.create(&PostParams::default(), &pod).await {
            Ok(created) => {
                self.recorder.event(
                    owner,
                    crate::record::NORMAL,
                    "SuccessfulCreate",
                    &format!(
                        "Created pod: {}",
                        created.metadata.name.as_deref().unwrap_or_default()
                    ),
                );
                Ok(created)
            }
            Err(error) => {
                self.recorder.event(
                    owner,
                    crate::record::WARNING,
                    "FailedCreate",
                    &format!("Error creating: {error}"),
                );
                Err(error)
            }
        }
    }

    /// Mirrors `RealPodControl.DeletePod`: deletes the pod (uid as the
    /// precondition), recording `SuccessfulDelete` or `FailedDelete`. A pod
    /// already gone counts as deleted.
    pub async fn delete_pod(
        &self,
        pod: &Pod,
        owner: &crate::record::ObjectReference,
    ) -> Result<(), kube::Error> {
        let namespace = pod.metadata.namespace.as_deref().unwrap_or_default();
        let name = pod.metadata.name.as_deref().unwrap_or_default();
        let api: Api<Pod> = Api::namespaced(self.client.clone(), namespace);
        let params = DeleteParams {
            preconditions: Some(Preconditions {
                uid: pod.metadata.uid.clone(),
                resource_version: None,
            }),
            ..DeleteParams::default()
        };
        match api.delete(name, &params).await {
            Ok(_) => {
                self.recorder.event(
                    owner,
                    crate::record::NORMAL,
                    "SuccessfulDelete",
                    &format!("Deleted pod: {name}"),
                );
                Ok(())
            }
            Err(kube::Error::Api(status)) if status.code == 404 => Ok(()),
            Err(error) => {
                self.recorder.event(
                    owner,
                    crate::record::WARNING,
                    "FailedDelete",
                    &format!("Error deleting: {error}"),
                );
                Err(error)
            }
        }
    }
}

/// Mirrors `GetPodFromTemplate`: the template's labels, annotations,
/// finalizers and spec, `generateName` `<owner>-`, and the controller
/// reference.
pub fn pod_from_template(
    template: &PodTemplateSpec,
    controller_ref: &OwnerReference,
) -> Pod {
    let meta = template.metadata.clone().unwrap_or_default();
    Pod {
        metadata: ObjectMeta {
            labels: meta.labels,
            annotations: meta.annotations,
            finalizers: meta.finalizers,
            generate_name: Some(format!("{}-", controller_ref.name)),
            owner_references: Some(vec![controller_ref.clone()]),
            ..ObjectMeta::default()
        },
        spec: template.spec.clone(),
        status: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::api::core::v1::{PodCondition, PodSpec, PodStatus};
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;

    fn pod(name: &str, node: &str, phase: &str, ready: bool) -> Arc<Pod> {
        Arc::new(Pod {
            metadata: ObjectMeta {
                name: Some(name.into()),
                namespace: Some("ns".into()),
                ..ObjectMeta::default()
            },
            spec: Some(PodSpec {
                node_name: (!node.is_empty()).then(|| node.to_string()),
                ..PodSpec::default()
            }),
            status: Some(PodStatus {
                phase: Some(phase.into()),
                conditions: Some(vec![PodCondition {
                    type_: "Ready".into(),
                    status: if ready { "True" } else { "False" }.into(),
                    last_transition_time: Some(Time(
                        k8s_openapi::jiff::Timestamp::UNIX_EPOCH,
                    )),
                    ..PodCondition::default()
                }]),
                ..PodStatus::default()
            }),
        })
    }

    /// The tests of `satisfied_expectations` (exercise `ex6-expectations`).
    mod ex6_expectations {
        use super::*;

        /// controller_utils_test.go's `TestControllerExpectations`: with 10
        /// creations and 30 deletions expected, 11 observed creations are not
        /// enough; 31 observed deletions too surpass the expectations, which
        /// are then met. New expectations are not met until they expire.
        #[tokio::test(start_paused = true)]
        async fn test_controller_expectations() {
            let e = Arc::new(ControllerExpectations::new());
            let key = "ns/rc";
            e.set_expectations(key, 10, 30);
            let observe = |deletion: bool, times: usize| {
                let tasks: Vec<_> = (0..times)
                    .map(|_| {
                        let e = Arc::clone(&e);
                        tokio::spawn(async move {
                            if deletion {
                                e.deletion_observed(key);
                            } else {
                                e.creation_observed(key);
                            }
                        })
                    })
                    .collect();
                futures::future::join_all(tasks)
            };
            for done in observe(false, 11).await {
                done.expect("no panic");
            }
            assert!(
                !e.satisfied_expectations(key),
                "the controller syncs before its expectations are met"
            );
            for done in observe(true, 31).await {
                done.expect("no panic");
            }
            // Expectations have been surpassed.
            assert_eq!(e.get(key), Some((-1, -1)));
            assert!(e.satisfied_expectations(key));

            // Old expectations are cleared because of the timeout.
            e.set_expectations(key, 1, 2);
            assert!(!e.satisfied_expectations(key));
            tokio::time::advance(EXPECTATIONS_TIMEOUT + Duration::from_secs(1))
                .await;
            assert!(
                e.satisfied_expectations(key),
                "the expectations should have expired"
            );
            // The next sync sets new ones, which are not met.
            e.set_expectations(key, 1, 2);
            assert_eq!(e.get(key), Some((1, 2)));
            assert!(!e.satisfied_expectations(key));
        }

        /// A controller that never set expectations, or whose expectations
        /// were deleted, syncs.
        #[tokio::test(start_paused = true)]
        async fn no_expectations_are_satisfied() {
            let e = ControllerExpectations::new();
            assert!(e.satisfied_expectations("ns/rs"), "never set");
            e.expect_creations("ns/rs", 2);
            assert!(!e.satisfied_expectations("ns/rs"));
            e.delete_expectations("ns/rs");
            assert_eq!(e.get("ns/rs"), None);
            assert!(e.satisfied_expectations("ns/rs"), "deleted");
        }

        /// The expectations are met exactly when the last expected creation
        /// is observed, and only those of the key observed.
        #[tokio::test(start_paused = true)]
        async fn creations_are_counted_down_per_key() {
            let e = ControllerExpectations::new();
            e.expect_creations("ns/a", 2);
            e.expect_creations("ns/b", 1);
            e.creation_observed("ns/a");
            assert!(!e.satisfied_expectations("ns/a"));
            e.creation_observed("ns/a");
            assert!(e.satisfied_expectations("ns/a"));
            assert!(!e.satisfied_expectations("ns/b"));
            // Just before the timeout they still hold; just after, not.
            tokio::time::advance(EXPECTATIONS_TIMEOUT).await;
            assert!(!e.satisfied_expectations("ns/b"));
            tokio::time::advance(Duration::from_millis(1)).await;
            assert!(e.satisfied_expectations("ns/b"));
        }

        /// controller_utils_test.go's `TestUIDExpectations`: a pod's deletion
        /// is counted once, however often it is observed.
        #[tokio::test(start_paused = true)]
        async fn test_uid_expectations() {
            let e = UidTrackingControllerExpectations::new();
            e.expect_deletions("ns/rs", &["ns/a".into(), "ns/b".into()]);
            e.deletion_observed("ns/rs", "ns/a");
            e.deletion_observed("ns/rs", "ns/a");
            assert_eq!(e.get("ns/rs"), Some((0, 1)));
            assert!(!e.satisfied_expectations("ns/rs"));
            e.deletion_observed("ns/rs", "ns/b");
            assert!(e.satisfied_expectations("ns/rs"));
        }
    }

    /// controller_utils_test.go's `TestActivePodFiltering`.
    #[test]
    fn test_active_pod_filtering() {
        let mut gone = (*pod("gone", "n", "Running", true)).clone();
        gone.metadata.deletion_timestamp =
            Some(Time(k8s_openapi::jiff::Timestamp::UNIX_EPOCH));
        let pods = vec![
            pod("a", "n", "Running", true),
            pod("b", "n", "Succeeded", false),
            pod("c", "n", "Failed", false),
            pod("d", "", "Pending", false),
            Arc::new(gone),
        ];
        let names: Vec<String> = filter_active_pods(&pods)
            .iter()
            .map(|p| p.metadata.name.clone().unwrap_or_default())
            .collect();
        assert_eq!(names, ["a", "d"]);
    }

    /// controller_utils_test.go's `TestSortingActivePods`: the cheapest pods to
    /// delete come first.
    #[test]
    fn test_sorting_active_pods() {
        let mut pods = [
            (pod("running-ready", "n1", "Running", true), 0),
            (pod("unassigned", "", "Pending", false), 0),
            (pod("running-not-ready", "n1", "Running", false), 0),
            (pod("pending-assigned", "n1", "Pending", false), 0),
            (pod("unknown", "n1", "Unknown", false), 0),
        ];
        pods.sort_by(deletion_order);
        let names: Vec<String> = pods
            .iter()
            .map(|(p, _)| p.metadata.name.clone().unwrap_or_default())
            .collect();
        assert_eq!(
            names,
            [
                "unassigned",
                "pending-assigned",
                "unknown",
                "running-not-ready",
                "running-ready"
            ]
        );
    }

    /// replica_set_test.go's `TestSlowStartBatch`: batches double while they
    /// succeed, and stop at the first failure.
    #[tokio::test]
    async fn test_slow_start_batch() {
        use std::sync::atomic::{AtomicUsize, Ordering};
        let calls = AtomicUsize::new(0);
        let (ok, error) = slow_start_batch(10, 1, || async {
            calls.fetch_add(1, Ordering::SeqCst);
            Ok::<(), ()>(())
        })
        .await;
        assert_eq!((ok, error), (10, None));
        assert_eq!(calls.load(Ordering::SeqCst), 10);
        // Fail from the 4th call on: batches 1, 2 succeed (3 calls), the batch
        // of 4 runs and fails; the rest is never tried.
        let calls = AtomicUsize::new(0);
        let (ok, error) = slow_start_batch(10, 1, || async {
            let n = calls.fetch_add(1, Ordering::SeqCst);
            if n >= 3 { Err("boom") } else { Ok(()) }
        })
        .await;
        assert_eq!((ok, error), (3, Some("boom")));
        assert_eq!(calls.load(Ordering::SeqCst), 7);
    }

    #[test]
    fn a_pod_from_a_template_is_owned_and_named_after_its_owner() {
        let owner = ObjectMeta {
            name: Some("web-abc".into()),
            uid: Some("u1".into()),
            ..ObjectMeta::default()
        };
        let reference = new_controller_ref(&owner, "apps/v1", "ReplicaSet");
        let template = PodTemplateSpec {
            metadata: Some(ObjectMeta {
                labels: Some([("app".to_string(), "web".to_string())].into()),
                ..ObjectMeta::default()
            }),
            spec: Some(PodSpec::default()),
        };
        let pod = pod_from_template(&template, &reference);
        assert_eq!(pod.metadata.generate_name.as_deref(), Some("web-abc-"));
        assert_eq!(pod.metadata.labels.unwrap()["app"], "web");
        let refs = pod.metadata.owner_references.unwrap();
        assert_eq!(refs[0].uid, "u1");
        assert_eq!(refs[0].controller, Some(true));
        assert_eq!(refs[0].block_owner_deletion, Some(true));
    }
}
