//! Helpers for the stage 4 scenarios: pods, a handler that records what it is told,
//! and bounded waits that work with paused tokio time.
#![allow(dead_code)]

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use k8s_openapi::api::core::v1::Pod;
use stage3_reflector::FakeListerWatcher;
use stage4_shared_informer::{
    DeletedObject, ResourceEventHandler, SharedIndexInformer,
};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

/// The longest any single wait may take, in (virtual) time.
pub const PATIENCE: Duration = Duration::from_secs(600);

pub fn pod(name: &str) -> Pod {
    let mut pod = Pod::default();
    pod.metadata.name = Some(name.to_string());
    pod.metadata.namespace = Some("default".to_string());
    pod
}

pub fn pod_with_label(name: &str, key: &str, value: &str) -> Pod {
    let mut pod = pod(name);
    pod.metadata.labels = Some([(key.to_string(), value.to_string())].into());
    pod
}

pub fn fake_with(names: &[&str]) -> FakeListerWatcher<Pod> {
    let fake = FakeListerWatcher::new();
    for name in names {
        fake.add(pod(name)).expect("named pods have keys");
    }
    fake
}

pub type Informer = SharedIndexInformer<Pod, FakeListerWatcher<Pod>>;

/// What a handler was told.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub enum Seen {
    /// name, is_in_initial_list
    Add(String, bool),
    /// name, new resourceVersion
    Update(String, String),
    /// An update with an unchanged resourceVersion: a resync.
    Sync(String),
    /// name (or tombstone key)
    Delete(String),
}

fn name(pod: &Pod) -> String {
    pod.metadata.name.clone().unwrap_or_default()
}

/// A handler that sends what it sees down a channel.
pub struct Recorder {
    tx: mpsc::UnboundedSender<Seen>,
}

impl Recorder {
    pub fn new() -> (Self, mpsc::UnboundedReceiver<Seen>) {
        let (tx, rx) = mpsc::unbounded_channel();
        (Self { tx }, rx)
    }
}

impl ResourceEventHandler<Pod> for Recorder {
    fn on_add(&self, obj: &Arc<Pod>, is_in_initial_list: bool) {
        let _ = self.tx.send(Seen::Add(name(obj), is_in_initial_list));
    }
    fn on_update(&self, old: &Arc<Pod>, new: &Arc<Pod>) {
        let seen = if old.metadata.resource_version == new.metadata.resource_version
        {
            Seen::Sync(name(new))
        } else {
            Seen::Update(
                name(new),
                new.metadata.resource_version.clone().unwrap_or_default(),
            )
        };
        let _ = self.tx.send(seen);
    }
    fn on_delete(&self, obj: &DeletedObject<Pod>) {
        let who = match obj {
            DeletedObject::Object(pod) => name(pod),
            DeletedObject::Tombstone(t) => t.key.to_string(),
        };
        let _ = self.tx.send(Seen::Delete(who));
    }
}

/// Awaits `future`, failing the test if it takes longer than [`PATIENCE`].
pub async fn within<F: Future>(what: &str, future: F) -> F::Output {
    match tokio::time::timeout(PATIENCE, future).await {
        Ok(output) => output,
        Err(_) => panic!("timed out waiting for {what}"),
    }
}

/// The next `n` notifications, sorted (handlers see different keys in queue order).
pub async fn next_n(rx: &mut mpsc::UnboundedReceiver<Seen>, n: usize) -> Vec<Seen> {
    let mut seen = Vec::with_capacity(n);
    for _ in 0..n {
        seen.push(
            within("a notification", rx.recv())
                .await
                .expect("handler alive"),
        );
    }
    seen.sort();
    seen
}

/// Asserts nothing arrives within `quiet` of virtual time (all runnable work has run
/// by then: paused time only advances when every task is idle).
pub async fn assert_quiet(rx: &mut mpsc::UnboundedReceiver<Seen>, quiet: Duration) {
    if let Ok(Some(seen)) = tokio::time::timeout(quiet, rx.recv()).await {
        panic!("expected no notification, got {seen:?}");
    }
}

/// Runs `informer` in a task; returns the token that stops it and the task.
pub fn start(
    informer: &Informer,
) -> (CancellationToken, tokio::task::JoinHandle<()>) {
    let token = CancellationToken::new();
    let task = {
        let informer = informer.clone();
        let token = token.clone();
        tokio::spawn(async move { informer.run(token).await })
    };
    (token, task)
}

/// Waits until the informer has synced.
pub async fn synced(informer: &Informer) {
    within("the informer to sync", async {
        while !informer.has_synced() {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    })
    .await;
}

pub fn adds(names: &[&str], initial: bool) -> Vec<Seen> {
    let mut v: Vec<Seen> = names
        .iter()
        .map(|n| Seen::Add(n.to_string(), initial))
        .collect();
    v.sort();
    v
}

pub fn syncs(names: &[&str]) -> Vec<Seen> {
    let mut v: Vec<Seen> = names.iter().map(|n| Seen::Sync(n.to_string())).collect();
    v.sort();
    v
}
