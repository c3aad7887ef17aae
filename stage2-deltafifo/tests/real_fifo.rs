//! client-go's the_real_fifo_test.go scenarios, and the atomic mode, rewritten in
//! Rust.

mod common;

use std::convert::Infallible;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use common::*;
use stage1_store::Store;
use stage2_deltafifo::{
    Delta, DeltaType, DeltaType::*, Queue, RealFifo, RealFifoOptions,
};

fn s(t: DeltaType, what: &str) -> (DeltaType, String) {
    (t, what.to_string())
}

fn real(known_objs: &[Arc<Obj>]) -> RealFifo<Obj> {
    RealFifo::new(RealFifoOptions::non_atomic(
        key_func(),
        as_known(&known(known_objs)),
    ))
}

fn atomic() -> RealFifo<Obj> {
    RealFifo::new(RealFifoOptions::atomic(key_func()))
}

/// Pops one batch of at most `max`, bounded in (paused) time.
async fn batch(f: &RealFifo<Obj>, max: usize) -> (Vec<(DeltaType, String)>, bool) {
    tokio::time::timeout(
        Duration::from_secs(1),
        f.pop_batch(max, |batch: Vec<Delta<Obj>>, initial| {
            Ok::<_, Infallible>((batch.iter().map(show).collect(), initial))
        }),
    )
    .await
    .expect("pop_batch did not return within 1s")
    .expect("pop_batch failed")
}

mod non_atomic {
    use super::*;
    use pretty_assertions::assert_eq;

    #[tokio::test(start_paused = true)]
    async fn every_notification_is_popped_in_arrival_order() {
        let f = real(&[]);
        f.add(obj("foo", 1)).unwrap();
        f.add(obj("bar", 2)).unwrap();
        f.update(obj("foo", 3)).unwrap();
        f.delete(obj("foo", 4)).unwrap();
        assert_eq!(
            drain(&f, 4).await,
            vec![
                vec![s(Added, "foo=1")],
                vec![s(Added, "bar=2")],
                vec![s(Updated, "foo=3")],
                vec![s(Deleted, "foo=4")],
            ]
        );
        assert_blocks(&f).await;
    }

    #[tokio::test(start_paused = true)]
    async fn delete_is_always_queued() {
        let f = real(&[]);
        f.delete(obj("never-seen", 1)).unwrap();
        assert_eq!(drain(&f, 1).await, vec![vec![s(Deleted, "never-seen=1")]]);
    }

    #[tokio::test(start_paused = true)]
    async fn replace_emits_tombstones_then_one_replaced_per_item() {
        let f = real(&[obj("known-gone", 1), obj("kept", 2)]);
        f.add(obj("queued-gone", 3)).unwrap();
        f.add(obj("queued-deleted", 4)).unwrap();
        f.delete(obj("queued-deleted", 5)).unwrap();
        f.replace(vec![obj("kept", 6), obj("new", 7)], "10")
            .unwrap();
        assert_eq!(
            drain(&f, 7).await,
            vec![
                vec![s(Added, "queued-gone=3")],
                vec![s(Added, "queued-deleted=4")],
                vec![s(Deleted, "queued-deleted=5")],
                // No second deletion for queued-deleted: its last delta is one
                // already.
                vec![s(Deleted, "tombstone:queued-gone=3")],
                vec![s(Deleted, "tombstone:known-gone=1")],
                vec![s(Replaced, "kept=6")],
                vec![s(Replaced, "new=7")],
            ]
        );
    }

    #[tokio::test(start_paused = true)]
    async fn initial_list_is_everything_queued_at_the_first_replace() {
        let f = real(&[]);
        f.replace(vec![obj("a", 1), obj("b", 2)], "1").unwrap();
        f.add(obj("c", 3)).unwrap();
        for _ in 0..2 {
            assert!(!f.has_synced());
            assert!(pop(&f).await.1, "initial item");
        }
        assert!(f.has_synced());
        assert!(!pop(&f).await.1);
    }

    #[tokio::test(start_paused = true)]
    async fn resync_queues_known_objects_without_queued_deltas() {
        let f = real(&[obj("a", 1), obj("b", 2)]);
        f.update(obj("a", 3)).unwrap();
        f.resync().unwrap();
        assert_eq!(
            drain(&f, 2).await,
            vec![vec![s(Updated, "a=3")], vec![s(Sync, "b=2")]]
        );
    }

    #[tokio::test(start_paused = true)]
    async fn transform_skips_tombstones_and_resyncs() {
        let calls = Arc::new(AtomicUsize::new(0));
        let counter = Arc::clone(&calls);
        let f = RealFifo::new(
            RealFifoOptions::non_atomic(
                key_func(),
                as_known(&known(&[obj("k", 1)])),
            )
            .transformer(Arc::new(move |o: Arc<Obj>| {
                counter.fetch_add(1, Ordering::SeqCst);
                Ok(obj(&o.name, o.val + 100))
            })),
        );
        f.add(obj("a", 1)).unwrap();
        f.resync().unwrap();
        f.replace(vec![], "1").unwrap();
        assert_eq!(calls.load(Ordering::SeqCst), 1);
        assert_eq!(
            drain(&f, 4).await,
            vec![
                vec![s(Added, "a=101")],
                vec![s(Sync, "k=1")],
                vec![s(Deleted, "tombstone:a=101")],
                vec![s(Deleted, "tombstone:k=1")],
            ]
        );
    }

    #[tokio::test(start_paused = true)]
    async fn close_unblocks_pops() {
        let f = Arc::new(real(&[]));
        let popper = {
            let f = Arc::clone(&f);
            tokio::spawn(async move { f.pop(|_, _| Ok::<_, Infallible>(())).await })
        };
        tokio::task::yield_now().await;
        f.close();
        let res = tokio::time::timeout(Duration::from_secs(1), popper)
            .await
            .expect("pop stayed blocked")
            .unwrap();
        assert!(is_closed(res));
    }
}

mod atomic_mode {
    use super::*;
    use pretty_assertions::assert_eq;

    #[tokio::test(start_paused = true)]
    async fn replace_is_one_replaced_all_entry() {
        let f = atomic();
        f.replace(vec![obj("a", 1), obj("b", 2)], "42").unwrap();
        assert_eq!(f.len(), 1);
        let (deltas, initial) = pop(&f).await;
        assert!(initial);
        assert_eq!(show_all(&deltas), vec![s(ReplacedAll, "all@42:a=1,b=2")]);
        assert!(f.has_synced());
    }

    #[tokio::test(start_paused = true)]
    async fn resync_is_sync_all_and_bookmarks_are_queued_in_order() {
        let f = atomic();
        f.add(obj("a", 1)).unwrap();
        f.bookmark("7");
        f.resync().unwrap();
        assert_eq!(
            drain(&f, 3).await,
            vec![
                vec![s(Added, "a=1")],
                vec![s(Bookmark, "bookmark@7")],
                vec![s(SyncAll, "sync-all")],
            ]
        );
    }

    #[tokio::test(start_paused = true)]
    async fn bookmark_is_a_no_op_when_not_atomic() {
        let f = real(&[]);
        f.bookmark("7");
        assert!(f.is_empty());
    }
}

mod ex2_take_batch {
    use super::*;
    use pretty_assertions::assert_eq;

    #[tokio::test(start_paused = true)]
    async fn a_batch_holds_unique_keys_in_order() {
        let f = real(&[]);
        f.add(obj("a", 1)).unwrap();
        f.add(obj("b", 2)).unwrap();
        f.update(obj("a", 3)).unwrap();
        f.add(obj("c", 4)).unwrap();
        assert_eq!(
            batch(&f, 10).await.0,
            vec![s(Added, "a=1"), s(Added, "b=2")]
        );
        assert_eq!(
            batch(&f, 10).await.0,
            vec![s(Updated, "a=3"), s(Added, "c=4")]
        );
    }

    #[tokio::test(start_paused = true)]
    async fn a_batch_is_at_most_max() {
        let f = real(&[]);
        for i in 0..5 {
            f.add(obj(&format!("k{i}"), i)).unwrap();
        }
        assert_eq!(batch(&f, 2).await.0.len(), 2);
        assert_eq!(batch(&f, 2).await.0.len(), 2);
        assert_eq!(batch(&f, 2).await.0.len(), 1);
        // max 0 is treated as 1.
        f.add(obj("z", 1)).unwrap();
        assert_eq!(batch(&f, 0).await.0.len(), 1);
    }

    #[tokio::test(start_paused = true)]
    async fn a_batch_never_mixes_the_initial_list_with_later_items() {
        let f = real(&[]);
        f.replace(vec![obj("a", 1), obj("b", 2)], "1").unwrap();
        f.add(obj("c", 3)).unwrap();
        let (first, initial) = batch(&f, 10).await;
        assert!(initial);
        assert_eq!(first, vec![s(Replaced, "a=1"), s(Replaced, "b=2")]);
        assert!(f.has_synced());
        let (second, initial) = batch(&f, 10).await;
        assert!(!initial);
        assert_eq!(second, vec![s(Added, "c=3")]);
    }

    #[tokio::test(start_paused = true)]
    async fn batch_entries_travel_alone() {
        let f = atomic();
        f.add(obj("a", 1)).unwrap();
        f.bookmark("5");
        f.add(obj("b", 2)).unwrap();
        assert_eq!(batch(&f, 10).await.0, vec![s(Added, "a=1")]);
        assert_eq!(batch(&f, 10).await.0, vec![s(Bookmark, "bookmark@5")]);
        assert_eq!(batch(&f, 10).await.0, vec![s(Added, "b=2")]);
    }
}

mod both_queues {
    use super::*;

    async fn first_key<Q: Queue<Obj>>(q: &Q) -> String {
        let (deltas, _) = pop(q).await;
        deltas.newest().unwrap().object().unwrap().name.clone()
    }

    #[tokio::test(start_paused = true)]
    async fn the_queue_trait_drives_either_implementation() {
        let delta_fifo = fifo();
        let real_fifo = real(&[]);
        for q in [
            &delta_fifo as &dyn Store<Obj>,
            &real_fifo as &dyn Store<Obj>,
        ] {
            q.add(obj("x", 1)).unwrap();
        }
        assert_eq!(first_key(&delta_fifo).await, "x");
        assert_eq!(first_key(&real_fifo).await, "x");
    }
}
