//! A DeltaFIFO across a relist, with a tombstone.
//!
//! Two pods come in the first list and a third in a watch event, and all three
//! are popped into an informer's indexer. Then the watch breaks, one pod is
//! deleted while nobody watches, and the relist no longer has it. The relist
//! queues a `Replaced` delta for each listed pod and a `Deleted` delta holding a
//! `DeletedFinalStateUnknown` tombstone for the missing one. Popping shows each
//! key's deltas, oldest first.
//!
//! Run with `cargo run -p stage2-deltafifo --example relist-tombstone`. It takes
//! no arguments and needs no cluster. The test `tests/relist_example.rs` runs the
//! same story and checks it against the book.

use std::error::Error;
use std::fmt::Write as _;
use std::sync::Arc;
use workspace_allocator as _;

use k8s_openapi::api::core::v1::Pod;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use stage1_store::{Cache, KeyLister, Store, StoreError, meta_namespace_key_func};
use stage2_deltafifo::{
    Delta, DeltaFifo, DeltaFifoOptions, DeltaObject, DeltaType, Deltas,
};

// ANCHOR: helpers
/// A pod in namespace `default` at a resource version.
fn pod(name: &str, resource_version: &str) -> Arc<Pod> {
    Arc::new(Pod {
        metadata: ObjectMeta {
            name: Some(name.into()),
            namespace: Some("default".into()),
            resource_version: Some(resource_version.into()),
            ..ObjectMeta::default()
        },
        ..Pod::default()
    })
}

/// "web-0 rv 98": a pod's name and resource version.
fn name_rv(pod: &Pod) -> String {
    let meta = &pod.metadata;
    let name = meta.name.as_deref().unwrap_or("?");
    format!(
        "{name} rv {}",
        meta.resource_version.as_deref().unwrap_or("?")
    )
}

/// One delta on one line: its type, then the pod, or the tombstone.
fn describe(delta: &Delta<Pod>) -> String {
    let what = match &delta.object {
        DeltaObject::Object(pod) => name_rv(pod),
        DeltaObject::Tombstone(t) => match &t.obj {
            Some(pod) => {
                format!(
                    "DeletedFinalStateUnknown({}), last seen: {}",
                    t.key,
                    name_rv(pod)
                )
            }
            None => format!("DeletedFinalStateUnknown({}), never seen", t.key),
        },
        _ => "a batch entry (atomic RealFIFO only)".to_string(),
    };
    format!("{:<9} {what}", format!("{:?}", delta.delta_type))
}

/// The indexer's keys, sorted (the store itself keeps no order).
fn keys(indexer: &Cache<Pod>) -> Vec<Arc<str>> {
    let mut keys = indexer.list_keys().to_vec();
    keys.sort();
    keys
}
// ANCHOR_END: helpers

// ANCHOR: apply
/// What an informer's process function does with a popped key: apply its deltas
/// to the indexer, oldest first. A tombstone is deleted by its key.
fn apply(indexer: &Cache<Pod>, deltas: &Deltas<Pod>) -> Result<(), StoreError> {
    for delta in deltas {
        match &delta.object {
            DeltaObject::Tombstone(t) => {
                indexer.thread_safe_store().delete(&t.key)?
            }
            DeltaObject::Object(pod) if delta.delta_type == DeltaType::Deleted => {
                indexer.delete(Arc::clone(pod))?
            }
            DeltaObject::Object(pod) => indexer.update(Arc::clone(pod))?,
            _ => {} // batch entries: only the RealFIFO's atomic mode queues them
        }
    }
    Ok(())
}

/// Pops one key into the indexer and prints its deltas.
async fn pop_one(
    fifo: &DeltaFifo<Pod>,
    indexer: &Cache<Pod>,
    out: &mut String,
) -> Result<Deltas<Pod>, Box<dyn Error>> {
    let (deltas, initial) = fifo
        .pop(|deltas, initial| apply(indexer, &deltas).map(|()| (deltas, initial)))
        .await?;
    let key = fifo.key_of_deltas(&deltas)?;
    writeln!(out, "pop {key} (initial list: {initial})")?;
    for delta in &deltas {
        writeln!(out, "    {}", describe(delta))?;
    }
    Ok(deltas)
}
// ANCHOR_END: apply

// ANCHOR: story
/// The whole story, written to `out`. Returns what was popped after the relist,
/// for the test that checks it (hence `pub(crate)`).
pub(crate) async fn relist_story(
    out: &mut String,
) -> Result<Vec<Deltas<Pod>>, Box<dyn Error>> {
    // An informer's queue: its known objects are the informer's indexer, and a
    // relist queues `Replaced`, not `Sync`.
    let indexer = Arc::new(Cache::<Pod>::for_resources());
    let fifo = DeltaFifo::new(
        DeltaFifoOptions::new(Arc::new(meta_namespace_key_func::<Pod>))
            .known_objects(indexer.clone())
            .emit_delta_type_replaced(true),
    );

    writeln!(out, "list at rv 100: web-0, web-1")?;
    fifo.replace_list(vec![pod("web-0", "98"), pod("web-1", "99")], "100")?;
    writeln!(out, "watch: ADDED db-0 rv 101")?;
    fifo.add(pod("db-0", "101"))?;
    writeln!(out, "has_synced: {}", fifo.has_synced())?;
    for _ in 0..3 {
        pop_one(&fifo, &indexer, out).await?;
    }
    writeln!(
        out,
        "has_synced: {}; indexer: {:?}",
        fifo.has_synced(),
        keys(&indexer)
    )?;

    writeln!(out, "watch: MODIFIED web-1 rv 102 (queued, not popped)")?;
    fifo.update(pod("web-1", "102"))?;
    writeln!(
        out,
        "the watch breaks; meanwhile db-0 is deleted and web-0 changes"
    )?;
    writeln!(out, "relist at rv 104: web-0, web-1 (db-0 is missing)")?;
    fifo.replace_list(vec![pod("web-0", "104"), pod("web-1", "102")], "104")?;
    for key in fifo.list_keys().iter() {
        let queued = fifo.get_deltas(key).map_or(0, |deltas| deltas.len());
        writeln!(out, "queued: {key} with {queued} delta(s)")?;
    }

    let mut after_relist = Vec::new();
    while !fifo.is_empty() {
        after_relist.push(pop_one(&fifo, &indexer, out).await?);
    }
    writeln!(out, "indexer: {:?}", keys(&indexer))?;
    Ok(after_relist)
}
// ANCHOR_END: story

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn Error>> {
    let mut out = String::new();
    relist_story(&mut out).await?;
    print!("{out}");
    Ok(())
}
