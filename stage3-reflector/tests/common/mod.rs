//! Helpers shared by the scenario tests: pods, a store that records what the
//! reflector does to it, an error recorder, and bounded waits that work with paused
//! tokio time.

#![allow(dead_code)]

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use k8s_openapi::api::core::v1::Pod;
use parking_lot::Mutex;
use stage1_store::{Cache, KeyGetter, KeyLister, Snapshot, Store, StoreError};
use stage3_reflector::{
    Call, Error, FakeListerWatcher, ListerWatcher, Reflector, ReflectorOptions,
    WatchOptions,
};
use tokio_util::sync::CancellationToken;

/// The longest any single wait may take, in (virtual) time.
pub const PATIENCE: Duration = Duration::from_secs(3600);

/// A pod in namespace `default`.
pub fn pod(name: &str) -> Pod {
    let mut pod = Pod::default();
    pod.metadata.name = Some(name.to_string());
    pod.metadata.namespace = Some("default".to_string());
    pod
}

/// A pod in namespace `default` at a resource version.
pub fn pod_at(name: &str, resource_version: &str) -> Pod {
    let mut pod = pod(name);
    pod.metadata.resource_version = Some(resource_version.to_string());
    pod
}

/// A fake holding these pods, created in order (so `names[i]` is at version `i +
/// 1`).
pub fn fake_with(names: &[&str]) -> FakeListerWatcher<Pod> {
    let fake = FakeListerWatcher::new();
    for name in names {
        fake.add(pod(name)).expect("test pods have names");
    }
    fake
}

/// `count` pods named `pod-0`, `pod-1`, …
pub fn fake_with_count(count: usize) -> FakeListerWatcher<Pod> {
    let fake = FakeListerWatcher::new();
    for i in 0..count {
        fake.add(pod(&format!("pod-{i:04}")))
            .expect("test pods have names");
    }
    fake
}

/// Awaits `future`, failing the test if it takes longer than [`PATIENCE`].
pub async fn within<F: Future>(what: &str, future: F) -> F::Output {
    match tokio::time::timeout(PATIENCE, future).await {
        Ok(output) => output,
        Err(_) => panic!("timed out waiting for {what}"),
    }
}

/// Waits until `condition` holds, checking every (virtual) millisecond, for at most
/// [`PATIENCE`].
pub async fn eventually(what: &str, mut condition: impl FnMut() -> bool) {
    within(what, async {
        while !condition() {
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
    })
    .await;
}

/// Runs `reflector.run` next to `scenario`; when the scenario is done, cancels the
/// reflector and waits for `run` to return. A panic in either fails the test at
/// once.
pub async fn drive<L, S, F>(
    reflector: &Reflector<Pod, L, S>,
    scenario: F,
) -> F::Output
where
    L: ListerWatcher<Pod>,
    S: Store<Pod> + 'static,
    F: Future,
{
    let shutdown = CancellationToken::new();
    let run = reflector.run(shutdown.clone());
    let scenario = async {
        let output = scenario.await;
        shutdown.cancel();
        output
    };
    let ((), output) = within("the scenario and the reflector to finish", async {
        tokio::join!(run, scenario)
    })
    .await;
    output
}

/// The calls the fake saw, with each watch timeout checked to be in [300 s, 600 s)
/// and then blanked, so that the rest can be compared exactly (client-go's tests
/// ignore it the same way).
pub fn calls_without_timeouts(fake: &FakeListerWatcher<Pod>) -> Vec<Call> {
    fake.calls()
        .into_iter()
        .map(|call| match call {
            Call::Watch(mut options) => {
                let timeout = options
                    .timeout_seconds
                    .take()
                    .expect("watches set a timeout");
                assert!(
                    (300..600).contains(&timeout),
                    "watch timeout {timeout} s is not in [300, 600)"
                );
                Call::Watch(options)
            }
            list => list,
        })
        .collect()
}

/// The watch options the reflector sends for a plain watch from `resource_version`.
pub fn plain_watch(resource_version: &str) -> WatchOptions {
    WatchOptions {
        resource_version: resource_version.to_string(),
        allow_watch_bookmarks: true,
        ..WatchOptions::default()
    }
}

/// Records every error a reflector reports, as a short kind such as `Expired` or
/// `Api(500)`.
#[derive(Clone, Default)]
pub struct Reported(Arc<Mutex<Vec<String>>>);

impl Reported {
    /// Options with this recorder as the watch error handler.
    pub fn options(&self) -> ReflectorOptions {
        let reported = self.clone();
        ReflectorOptions::default()
            .name("test-reflector")
            .watch_error_handler(move |_name, error| {
                reported.0.lock().push(kind(error))
            })
    }

    /// The kinds reported so far.
    pub fn kinds(&self) -> Vec<String> {
        self.0.lock().clone()
    }
}

/// A short name for an error's variant.
pub fn kind(error: &Error) -> String {
    match error {
        Error::Expired { .. } => "Expired".to_string(),
        Error::TooLargeResourceVersion { .. } => {
            "TooLargeResourceVersion".to_string()
        }
        Error::Api { status } => format!("Api({})", status.code.unwrap_or_default()),
        Error::Transport { .. } if error.is_connection_refused() => {
            "ConnectionRefused".to_string()
        }
        Error::Transport { .. } => "Transport".to_string(),
        Error::Decode { .. } => "Decode".to_string(),
        Error::UnexpectedType { .. } => "UnexpectedType".to_string(),
        Error::VeryShortWatch { .. } => "VeryShortWatch".to_string(),
        Error::Sync { .. } => "Sync".to_string(),
        Error::Resync { .. } => "Resync".to_string(),
        Error::InvalidOptions { .. } => "InvalidOptions".to_string(),
    }
}

/// One thing a [`RecordingStore`] was asked to do.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Op {
    /// `add(name)`
    Add(String),
    /// `update(name)`
    Update(String),
    /// `delete(name)`
    Delete(String),
    /// `replace(item count, resource version)`
    Replace(usize, String),
    /// `resync()`
    Resync,
}

/// A stage 1 cache that records every write, and can fail its n-th resync.
pub struct RecordingStore {
    pub cache: Cache<Pod>,
    ops: Mutex<Vec<Op>>,
    fail_resync_number: Mutex<Option<usize>>,
}

impl RecordingStore {
    /// A recording store whose resync number `n` (1-based) fails.
    pub fn failing_resync(n: usize) -> Self {
        let store = RecordingStore::default();
        *store.fail_resync_number.lock() = Some(n);
        store
    }

    /// Everything done so far.
    pub fn ops(&self) -> Vec<Op> {
        self.ops.lock().clone()
    }

    /// How many resyncs were asked for.
    pub fn resyncs(&self) -> usize {
        self.ops
            .lock()
            .iter()
            .filter(|op| **op == Op::Resync)
            .count()
    }

    /// How many replaces were asked for.
    pub fn replaces(&self) -> usize {
        self.ops
            .lock()
            .iter()
            .filter(|op| matches!(op, Op::Replace(..)))
            .count()
    }

    /// `name → resource version` of what the cache holds, sorted by name.
    pub fn contents(&self) -> Vec<(String, String)> {
        let mut contents: Vec<_> = self
            .cache
            .list()
            .iter()
            .map(|pod| {
                (
                    pod.metadata.name.clone().unwrap_or_default(),
                    pod.metadata.resource_version.clone().unwrap_or_default(),
                )
            })
            .collect();
        contents.sort();
        contents
    }
}

impl Default for RecordingStore {
    fn default() -> Self {
        RecordingStore {
            cache: Cache::for_resources(),
            ops: Mutex::new(Vec::new()),
            fail_resync_number: Mutex::new(None),
        }
    }
}

fn name_of(pod: &Pod) -> String {
    pod.metadata.name.clone().unwrap_or_default()
}

impl KeyLister for RecordingStore {
    fn list_keys(&self) -> Snapshot<Arc<str>> {
        self.cache.list_keys()
    }
}

impl KeyGetter<Pod> for RecordingStore {
    fn get_by_key(&self, key: &str) -> Option<Arc<Pod>> {
        self.cache.get_by_key(key)
    }
}

impl Store<Pod> for RecordingStore {
    fn add(&self, obj: Arc<Pod>) -> Result<(), StoreError> {
        self.ops.lock().push(Op::Add(name_of(&obj)));
        self.cache.add(obj)
    }

    fn update(&self, obj: Arc<Pod>) -> Result<(), StoreError> {
        self.ops.lock().push(Op::Update(name_of(&obj)));
        self.cache.update(obj)
    }

    fn delete(&self, obj: Arc<Pod>) -> Result<(), StoreError> {
        self.ops.lock().push(Op::Delete(name_of(&obj)));
        self.cache.delete(obj)
    }

    fn list(&self) -> Snapshot<Arc<Pod>> {
        self.cache.list()
    }

    fn get(&self, obj: &Pod) -> Result<Option<Arc<Pod>>, StoreError> {
        self.cache.get(obj)
    }

    fn replace(
        &self,
        list: Vec<Arc<Pod>>,
        resource_version: &str,
    ) -> Result<(), StoreError> {
        self.ops
            .lock()
            .push(Op::Replace(list.len(), resource_version.to_string()));
        self.cache.replace(list, resource_version)
    }

    fn resync(&self) -> Result<(), StoreError> {
        let number = {
            let mut ops = self.ops.lock();
            ops.push(Op::Resync);
            ops.iter().filter(|op| **op == Op::Resync).count()
        };
        if *self.fail_resync_number.lock() == Some(number) {
            return Err(StoreError::IndexNotFound {
                name: "expected resync failure".to_string(),
            });
        }
        self.cache.resync()
    }
}
