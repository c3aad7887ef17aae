//! Helpers shared by the stage 2 tests: a small object type, a known-objects store,
//! and bounded pops.
#![allow(dead_code)]

use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;

use stage1_store::{Cache, KeyError, Store, new_store};
use stage2_deltafifo::{
    Delta, DeltaFifo, DeltaFifoOptions, DeltaObject, DeltaType, Deltas,
    KnownObjects, PopError, Queue,
};

/// client-go's `testFifoObject`: a name (the key) and a value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Obj {
    pub name: String,
    pub val: i32,
}

pub fn obj(name: &str, val: i32) -> Arc<Obj> {
    Arc::new(Obj {
        name: name.to_string(),
        val,
    })
}

pub fn key_func() -> stage1_store::KeyFunc<Obj> {
    Arc::new(|o: &Obj| {
        if o.name.is_empty() {
            Err(KeyError::new("Obj", "empty name"))
        } else {
            Ok(o.name.clone())
        }
    })
}

/// A known-objects store holding these objects.
pub fn known(objs: &[Arc<Obj>]) -> Arc<Cache<Obj>> {
    let store = Arc::new(new_store(key_func()));
    for o in objs {
        store.add(Arc::clone(o)).unwrap();
    }
    store
}

pub fn as_known(store: &Arc<Cache<Obj>>) -> KnownObjects<Obj> {
    store.clone()
}

pub fn fifo() -> DeltaFifo<Obj> {
    DeltaFifo::new(DeltaFifoOptions::new(key_func()))
}

pub fn fifo_with_known(store: &Arc<Cache<Obj>>) -> DeltaFifo<Obj> {
    DeltaFifo::new(DeltaFifoOptions::new(key_func()).known_objects(as_known(store)))
}

/// A readable form of one delta: its type, and "name=val" (or "tombstone:key" /
/// "…=?" when the tombstone has no object).
pub fn show(delta: &Delta<Obj>) -> (DeltaType, String) {
    let what = match &delta.object {
        DeltaObject::Object(o) => format!("{}={}", o.name, o.val),
        DeltaObject::Tombstone(t) => match &t.obj {
            Some(o) => format!("tombstone:{}={}", t.key, o.val),
            None => format!("tombstone:{}=?", t.key),
        },
        DeltaObject::ReplacedAll(info) => format!(
            "all@{}:{}",
            info.resource_version,
            info.objects
                .iter()
                .map(|o| format!("{}={}", o.name, o.val))
                .collect::<Vec<_>>()
                .join(",")
        ),
        DeltaObject::SyncAll => "sync-all".to_string(),
        DeltaObject::Bookmark(rv) => format!("bookmark@{rv}"),
    };
    (delta.delta_type, what)
}

pub fn show_all(deltas: &Deltas<Obj>) -> Vec<(DeltaType, String)> {
    deltas.iter().map(show).collect()
}

/// Pops one item, failing (not hanging) if none comes within a second of (paused)
/// time.
pub async fn pop<Q: Queue<Obj>>(queue: &Q) -> (Deltas<Obj>, bool) {
    tokio::time::timeout(
        Duration::from_secs(1),
        queue.pop(|deltas, initial| Ok::<_, Infallible>((deltas, initial))),
    )
    .await
    .expect("pop did not return within 1s")
    .expect("pop failed")
}

/// Pops everything currently queued.
pub async fn drain<Q: Queue<Obj>>(
    queue: &Q,
    n: usize,
) -> Vec<Vec<(DeltaType, String)>> {
    let mut out = Vec::new();
    for _ in 0..n {
        out.push(show_all(&pop(queue).await.0));
    }
    out
}

/// Asserts that a pop would block: nothing is queued and the queue is open.
pub async fn assert_blocks<Q: Queue<Obj>>(queue: &Q) {
    let res = tokio::time::timeout(
        Duration::from_millis(100),
        queue.pop(|_, _| Ok::<_, Infallible>(())),
    )
    .await;
    assert!(res.is_err(), "pop returned but the queue should be empty");
}

pub fn is_closed<R, E>(res: Result<R, PopError<E>>) -> bool {
    matches!(res, Err(PopError::Closed))
}
