//! client-go's delta_fifo_test.go scenarios, rewritten in Rust.

mod common;

use std::convert::Infallible;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use common::*;
use stage1_store::{KeyGetter, Store, StoreError};
use stage2_deltafifo::{
    Delta, DeltaFifo, DeltaFifoOptions, DeltaObject, DeltaType::*, Deltas, PopError,
    dedup_deltas,
};

fn s(
    t: stage2_deltafifo::DeltaType,
    what: &str,
) -> (stage2_deltafifo::DeltaType, String) {
    (t, what.to_string())
}

mod ordering {
    use super::*;
    use pretty_assertions::assert_eq;

    #[tokio::test(start_paused = true)]
    async fn two_producers_each_keep_their_order() {
        // client-go's TestDeltaFIFO_basic.
        let f = Arc::new(fifo());
        const AMOUNT: i32 = 500;
        let a = {
            let f = Arc::clone(&f);
            tokio::spawn(async move {
                for i in 0..AMOUNT {
                    f.add(obj(&format!("a{i}"), i + 1)).unwrap();
                    tokio::task::yield_now().await;
                }
            })
        };
        let b = {
            let f = Arc::clone(&f);
            tokio::spawn(async move {
                for i in 0..AMOUNT {
                    f.add(obj(&format!("b{i}"), i + 1)).unwrap();
                    tokio::task::yield_now().await;
                }
            })
        };
        let (mut last_a, mut last_b) = (0, 0);
        for _ in 0..2 * AMOUNT {
            let (deltas, _) = pop(&*f).await;
            let o = deltas.newest().unwrap().object().unwrap().clone();
            let last = if o.name.starts_with('a') {
                &mut last_a
            } else {
                &mut last_b
            };
            assert!(o.val > *last, "{} came after {}", o.val, last);
            *last = o.val;
        }
        a.await.unwrap();
        b.await.unwrap();
        assert_eq!((last_a, last_b), (AMOUNT, AMOUNT));
    }

    #[tokio::test(start_paused = true)]
    async fn a_key_keeps_its_first_place_in_line() {
        // client-go's TestDeltaFIFO_detectLineJumpers.
        let f = fifo();
        f.add(obj("foo", 10)).unwrap();
        f.add(obj("bar", 1)).unwrap();
        f.add(obj("foo", 11)).unwrap();
        f.add(obj("foo", 13)).unwrap();
        f.add(obj("zab", 30)).unwrap();
        assert_eq!(
            drain(&f, 3).await,
            vec![
                vec![s(Added, "foo=10"), s(Added, "foo=11"), s(Added, "foo=13")],
                vec![s(Added, "bar=1")],
                vec![s(Added, "zab=30")],
            ]
        );
    }

    #[tokio::test(start_paused = true)]
    async fn add_update_delete_of_one_key_stay_three_deltas() {
        // client-go's TestDeltaFIFO_compressorWorks / addUpdate: only deletions
        // coalesce.
        let f = fifo();
        f.add(obj("foo", 10)).unwrap();
        f.update(obj("foo", 12)).unwrap();
        f.delete(obj("foo", 15)).unwrap();
        assert_eq!(f.list_keys().len(), 1);
        assert_eq!(
            drain(&f, 1).await,
            vec![vec![
                s(Added, "foo=10"),
                s(Updated, "foo=12"),
                s(Deleted, "foo=15")
            ]]
        );
        assert_blocks(&f).await;
    }

    #[tokio::test(start_paused = true)]
    async fn list_and_get_show_the_newest_object() {
        let f = fifo();
        f.add(obj("foo", 1)).unwrap();
        f.update(obj("foo", 2)).unwrap();
        f.add(obj("bar", 3)).unwrap();
        let vals: Vec<i32> = f.list().iter().map(|o| o.val).collect();
        assert_eq!(vals, [2, 3]);
        assert_eq!(f.get_by_key("foo").unwrap().val, 2);
        assert_eq!(f.get(&obj("bar", 0)).unwrap().unwrap().val, 3);
        assert_eq!(f.get_deltas("foo").unwrap().types(), [Added, Updated]);
        assert!(f.get_deltas("nope").is_none());
    }
}

mod deletes {
    use super::*;
    use pretty_assertions::assert_eq;

    #[tokio::test(start_paused = true)]
    async fn delete_of_an_unknown_unqueued_key_is_a_no_op() {
        // client-go's TestDeltaFIFO_DeleteExistingItemsNotInQueue counterpart.
        let f = fifo();
        f.delete(obj("foo", 10)).unwrap();
        assert!(f.list_keys().is_empty());
        let known_store = known(&[obj("bar", 1)]);
        let f = fifo_with_known(&known_store);
        f.delete(obj("foo", 10)).unwrap();
        assert!(f.list_keys().is_empty());
    }

    #[tokio::test(start_paused = true)]
    async fn delete_of_a_known_key_is_queued() {
        let known_store = known(&[obj("foo", 5)]);
        let f = fifo_with_known(&known_store);
        f.delete(obj("foo", 10)).unwrap();
        assert_eq!(drain(&f, 1).await, vec![vec![s(Deleted, "foo=10")]]);
    }

    #[tokio::test(start_paused = true)]
    async fn delete_of_a_queued_key_is_queued_without_a_lister() {
        let f = fifo();
        f.add(obj("foo", 1)).unwrap();
        f.delete(obj("foo", 2)).unwrap();
        assert_eq!(
            drain(&f, 1).await,
            vec![vec![s(Added, "foo=1"), s(Deleted, "foo=2")]]
        );
    }

    #[test]
    fn a_key_error_is_returned_not_panicked() {
        let f = fifo();
        let err = f.add(obj("", 1)).unwrap_err();
        assert!(matches!(err, StoreError::Key(_)), "{err:?}");
        assert!(f.list_keys().is_empty());
    }
}

mod ex2_replace_deletions {
    use super::*;
    use pretty_assertions::assert_eq;

    #[tokio::test(start_paused = true)]
    async fn tombstones_count_in_the_initial_list() {
        // client-go's TestDeltaFIFO_HasSynced and the isInInitialList checks: the
        // first replace's tombstones belong to the initial list, as its
        // listed keys do.
        let known_store = known(&[obj("gone", 9)]);
        let f = fifo_with_known(&known_store);
        assert!(!f.has_synced());
        f.replace(vec![obj("a", 1), obj("b", 2)], "0").unwrap();
        // Two listed keys and one tombstone.
        assert!(!f.has_synced());
        f.add(obj("c", 3)).unwrap();
        for expected in ["a", "b", "gone"] {
            let (deltas, initial) = pop(&f).await;
            assert!(initial, "{expected} belongs to the initial list");
            assert_eq!(f.key_of_deltas(&deltas).unwrap().as_ref(), expected);
        }
        assert!(f.has_synced());
        let (deltas, initial) = pop(&f).await;
        assert!(!initial);
        assert_eq!(show_all(&deltas), vec![s(Added, "c=3")]);
    }

    #[tokio::test(start_paused = true)]
    async fn replace_with_a_lister_tombstones_known_keys_missing_from_the_list() {
        // client-go's TestDeltaFIFO_ReplaceMakesDeletions.
        let known_store = known(&[obj("foo", 5), obj("bar", 6), obj("baz", 7)]);
        let f = fifo_with_known(&known_store);
        f.delete(obj("baz", 10)).unwrap();
        f.replace(vec![obj("foo", 5)], "0").unwrap();
        assert_eq!(
            drain(&f, 3).await,
            vec![
                vec![s(Deleted, "baz=10")],
                vec![s(Sync, "foo=5")],
                // bar is known but missing: a tombstone with the known object.
                vec![s(Deleted, "tombstone:bar=6")],
            ]
        );
        assert_blocks(&f).await;
    }

    #[tokio::test(start_paused = true)]
    async fn replace_tombstones_queued_only_keys_with_their_newest_object() {
        // client-go's TestDeltaFIFO_ReplaceMakesDeletionsForObjectsOnlyInQueue
        // (issue 115658).
        let known_store = known(&[]);
        let f = fifo_with_known(&known_store);
        f.add(obj("foo", 2)).unwrap();
        f.update(obj("foo", 3)).unwrap();
        f.replace(vec![], "0").unwrap();
        assert_eq!(
            drain(&f, 1).await,
            vec![vec![
                s(Added, "foo=2"),
                s(Updated, "foo=3"),
                s(Deleted, "tombstone:foo=3")
            ]]
        );
    }

    #[tokio::test(start_paused = true)]
    async fn replace_without_a_lister_tombstones_only_queued_keys() {
        let f = fifo();
        f.add(obj("foo", 1)).unwrap();
        f.add(obj("bar", 2)).unwrap();
        f.replace(vec![obj("bar", 3)], "0").unwrap();
        assert_eq!(
            drain(&f, 2).await,
            vec![
                vec![s(Added, "foo=1"), s(Deleted, "tombstone:foo=1")],
                vec![s(Added, "bar=2"), s(Sync, "bar=3")],
            ]
        );
    }

    #[tokio::test(start_paused = true)]
    async fn a_tombstone_holds_the_object_not_another_tombstone() {
        let f = fifo();
        f.add(obj("foo", 1)).unwrap();
        f.replace(vec![], "1").unwrap();
        f.replace(vec![], "2").unwrap();
        // The second tombstone is a duplicate deletion and collapses into the newer
        // one, whose object is still foo=1 (unwrapped from the first
        // tombstone).
        assert_eq!(
            drain(&f, 1).await,
            vec![vec![s(Added, "foo=1"), s(Deleted, "tombstone:foo=1")]]
        );
    }

    #[tokio::test(start_paused = true)]
    async fn known_keys_with_pending_deltas_get_no_second_tombstone() {
        let known_store = known(&[obj("foo", 1)]);
        let f = fifo_with_known(&known_store);
        f.update(obj("foo", 2)).unwrap();
        f.replace(vec![], "3").unwrap();
        assert_eq!(
            drain(&f, 1).await,
            vec![vec![s(Updated, "foo=2"), s(Deleted, "tombstone:foo=2")]]
        );
    }
}

mod replace_options {
    use super::*;
    use pretty_assertions::assert_eq;

    #[tokio::test(start_paused = true)]
    async fn a_write_before_any_replace_counts_as_synced() {
        let f = fifo();
        f.add(obj("a", 1)).unwrap();
        assert!(f.has_synced());
        let (_, initial) = pop(&f).await;
        assert!(!initial);
        // A later replace does not reset it.
        f.replace(vec![obj("b", 1)], "2").unwrap();
        assert!(f.has_synced());
    }

    #[tokio::test(start_paused = true)]
    async fn an_empty_first_replace_is_synced_at_once() {
        let f = fifo();
        f.replace(vec![], "0").unwrap();
        assert!(f.has_synced());
    }

    #[tokio::test(start_paused = true)]
    async fn resync_without_a_lister_does_nothing() {
        let f = fifo();
        f.resync().unwrap();
        assert!(f.list_keys().is_empty());
    }

    #[tokio::test(start_paused = true)]
    async fn emit_delta_type_replaced_changes_sync_to_replaced() {
        // client-go's TestDeltaFIFO_ReplaceMakesDeletionsReplaced /
        // ReplaceDeltaType.
        let known_store = known(&[obj("foo", 5), obj("bar", 6)]);
        let f = DeltaFifo::new(
            DeltaFifoOptions::new(key_func())
                .known_objects(as_known(&known_store))
                .emit_delta_type_replaced(true),
        );
        f.replace(vec![obj("foo", 5)], "0").unwrap();
        assert_eq!(
            drain(&f, 2).await,
            vec![
                vec![s(Replaced, "foo=5")],
                vec![s(Deleted, "tombstone:bar=6")]
            ]
        );
    }

    #[test]
    fn a_key_error_in_replace_leaves_the_queue_untouched() {
        let f = fifo();
        f.add(obj("a", 1)).unwrap();
        assert!(f.replace(vec![obj("b", 1), obj("", 2)], "1").is_err());
        let keys: Vec<String> =
            f.list_keys().iter().map(|k| k.to_string()).collect();
        assert_eq!(keys, ["a"]);
        assert_eq!(f.get_deltas("a").unwrap().types(), [Added]);
        assert!(f.get_deltas("b").is_none());
    }
}

mod ex2_sync_key {
    use super::*;
    use pretty_assertions::assert_eq;

    #[tokio::test(start_paused = true)]
    async fn resync_queues_known_objects_as_sync() {
        let known_store = known(&[obj("foo", 5)]);
        let f = fifo_with_known(&known_store);
        f.resync().unwrap();
        assert_eq!(drain(&f, 1).await, vec![vec![s(Sync, "foo=5")]]);
    }

    #[tokio::test(start_paused = true)]
    async fn resync_skips_keys_with_pending_deltas() {
        // client-go's TestDeltaFIFO_UpdateResyncRace.
        let known_store = known(&[obj("foo", 5)]);
        let f = fifo_with_known(&known_store);
        f.update(obj("foo", 6)).unwrap();
        f.resync().unwrap();
        assert_eq!(drain(&f, 1).await, vec![vec![s(Updated, "foo=6")]]);
        assert_blocks(&f).await;
    }
}

/// `pop` through the queue's API. These tests never call `replace`, so that
/// `ex2-pop`, the first exercise, needs no other region; how `take_front` counts
/// down the initial list is tested on a hand-built state in `src/delta_fifo.rs`, and
/// with a real `replace` in
/// `ex2_replace_deletions::tombstones_count_in_the_initial_list`.
mod ex2_pop {
    use super::*;
    use pretty_assertions::assert_eq;

    #[tokio::test(start_paused = true)]
    async fn pop_returns_items_in_order_and_removes_them() {
        let f = fifo();
        f.add(obj("a", 1)).unwrap();
        f.add(obj("b", 2)).unwrap();
        assert_eq!(
            drain(&f, 2).await,
            vec![vec![s(Added, "a=1")], vec![s(Added, "b=2")]]
        );
        assert!(f.is_empty());
    }

    #[tokio::test(start_paused = true)]
    async fn process_errors_are_returned_and_the_item_is_not_requeued() {
        let f = fifo();
        f.add(obj("a", 1)).unwrap();
        let res = f.pop(|_, _| Err::<(), _>("handler failed")).await;
        assert!(matches!(res, Err(PopError::Process("handler failed"))));
        assert!(f.is_empty());
    }

    #[tokio::test(start_paused = true)]
    async fn a_blocked_pop_wakes_on_add() {
        let f = Arc::new(fifo());
        let popper = {
            let f = Arc::clone(&f);
            tokio::spawn(async move { pop(&*f).await })
        };
        tokio::task::yield_now().await;
        f.add(obj("late", 1)).unwrap();
        let (deltas, _) = tokio::time::timeout(Duration::from_secs(1), popper)
            .await
            .expect("pop did not wake")
            .unwrap();
        assert_eq!(show_all(&deltas), vec![s(Added, "late=1")]);
    }

    #[tokio::test(start_paused = true)]
    async fn ten_blocked_pops_return_closed_after_close() {
        // client-go's TestDeltaFIFO_PopShouldUnblockWhenClosed.
        let f = Arc::new(fifo());
        let poppers: Vec<_> = (0..10)
            .map(|_| {
                let f = Arc::clone(&f);
                tokio::spawn(
                    async move { f.pop(|_, _| Ok::<_, Infallible>(())).await },
                )
            })
            .collect();
        tokio::task::yield_now().await;
        f.close();
        assert!(f.is_closed());
        for popper in poppers {
            let res = tokio::time::timeout(Duration::from_secs(1), popper)
                .await
                .expect("pop stayed blocked after close")
                .unwrap();
            assert!(is_closed(res));
        }
    }

    #[tokio::test(start_paused = true)]
    async fn items_queued_before_close_are_still_popped() {
        let f = fifo();
        f.add(obj("a", 1)).unwrap();
        f.close();
        assert_eq!(drain(&f, 1).await, vec![vec![s(Added, "a=1")]]);
        assert!(is_closed(f.pop(|_, _| Ok::<_, Infallible>(())).await));
    }
}

mod key_of {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn key_of_every_input() {
        // client-go's TestDeltaFIFO_KeyOf.
        let f = fifo();
        assert_eq!(f.key_of(&obj("foo", 1)).unwrap(), "foo");
        let tombstone = Delta::tombstone(Arc::from("bar"), None);
        assert_eq!(
            f.key_of_delta_object(&tombstone.object).unwrap().as_ref(),
            "bar"
        );
        let deltas: Deltas<_> = [
            Delta::new(Added, obj("a", 1)),
            Delta::tombstone(Arc::from("baz"), Some(obj("zzz", 1))),
        ]
        .into_iter()
        .collect();
        // The newest delta decides, and a tombstone's own key wins over its
        // object's.
        assert_eq!(f.key_of_deltas(&deltas).unwrap().as_ref(), "baz");
        let err = f.key_of_deltas(&Deltas::new()).unwrap_err();
        assert!(err.to_string().contains("0 length Deltas"), "{err}");
        assert!(f.key_of_delta_object(&DeltaObject::SyncAll).is_err());
    }
}

mod transformer {
    use super::*;
    use pretty_assertions::assert_eq;

    #[tokio::test(start_paused = true)]
    async fn transform_runs_once_per_enqueued_object_not_on_tombstones_or_resync() {
        // client-go's TestDeltaFIFO_Transformer.
        let calls = Arc::new(AtomicUsize::new(0));
        let known_store = known(&[obj("known", 1)]);
        let f = {
            let calls = Arc::clone(&calls);
            DeltaFifo::new(
                DeltaFifoOptions::new(key_func())
                    .known_objects(as_known(&known_store))
                    .transformer(Arc::new(move |o: Arc<Obj>| {
                        calls.fetch_add(1, Ordering::SeqCst);
                        Ok(obj(&o.name, o.val * 10))
                    })),
            )
        };
        f.add(obj("foo", 1)).unwrap();
        f.update(obj("foo", 2)).unwrap();
        f.delete(obj("foo", 3)).unwrap();
        assert_eq!(calls.load(Ordering::SeqCst), 3);
        // replace: one listed object transformed; the tombstone for "known" is not.
        f.replace(vec![obj("bar", 4)], "1").unwrap();
        assert_eq!(calls.load(Ordering::SeqCst), 4);
        assert_eq!(
            drain(&f, 3).await,
            vec![
                // foo's tombstone from the replace collapsed into the queued
                // deletion.
                vec![
                    s(Added, "foo=10"),
                    s(Updated, "foo=20"),
                    s(Deleted, "foo=30")
                ],
                vec![s(Sync, "bar=40")],
                vec![s(Deleted, "tombstone:known=1")],
            ]
        );
        // resync: Sync deltas carry the known object untransformed.
        f.resync().unwrap();
        assert_eq!(calls.load(Ordering::SeqCst), 4);
        assert_eq!(drain(&f, 1).await, vec![vec![s(Sync, "known=1")]]);
    }

    #[test]
    fn a_failing_transform_queues_nothing() {
        let f = DeltaFifo::new(
            DeltaFifoOptions::new(key_func())
                .transformer(Arc::new(|_: Arc<Obj>| Err("nope".into()))),
        );
        let err = f.add(obj("foo", 1)).unwrap_err();
        assert!(err.to_string().contains("nope"), "{err}");
        assert!(f.list_keys().is_empty());
    }
}

mod ex2_dedup {
    use super::*;
    use pretty_assertions::assert_eq;

    fn deltas(items: Vec<Delta<Obj>>) -> Deltas<Obj> {
        items.into_iter().collect()
    }

    #[test]
    fn two_plain_deletions_keep_the_older() {
        let mut d = deltas(vec![
            Delta::new(Added, obj("foo", 1)),
            Delta::new(Deleted, obj("foo", 2)),
            Delta::new(Deleted, obj("foo", 3)),
        ]);
        dedup_deltas(&mut d);
        assert_eq!(show_all(&d), vec![s(Added, "foo=1"), s(Deleted, "foo=2")]);
    }

    #[test]
    fn an_older_tombstone_gives_way_to_the_newer_deletion() {
        let mut d = deltas(vec![
            Delta::tombstone(Arc::from("foo"), Some(obj("foo", 1))),
            Delta::new(Deleted, obj("foo", 2)),
        ]);
        dedup_deltas(&mut d);
        assert_eq!(show_all(&d), vec![s(Deleted, "foo=2")]);
    }

    #[test]
    fn a_newer_tombstone_gives_way_to_the_older_deletion() {
        let mut d = deltas(vec![
            Delta::new(Deleted, obj("foo", 1)),
            Delta::tombstone(Arc::from("foo"), Some(obj("foo", 2))),
        ]);
        dedup_deltas(&mut d);
        assert_eq!(show_all(&d), vec![s(Deleted, "foo=1")]);
    }

    #[test]
    fn two_tombstones_keep_the_newer() {
        let mut d = deltas(vec![
            Delta::tombstone(Arc::from("foo"), Some(obj("foo", 1))),
            Delta::tombstone(Arc::from("foo"), Some(obj("foo", 2))),
        ]);
        dedup_deltas(&mut d);
        assert_eq!(show_all(&d), vec![s(Deleted, "tombstone:foo=2")]);
    }

    #[test]
    fn nothing_else_is_coalesced() {
        let mut d = deltas(vec![
            Delta::new(Updated, obj("foo", 1)),
            Delta::new(Updated, obj("foo", 2)),
        ]);
        dedup_deltas(&mut d);
        assert_eq!(d.len(), 2);
        let mut d = deltas(vec![
            Delta::new(Deleted, obj("foo", 1)),
            Delta::new(Added, obj("foo", 2)),
        ]);
        dedup_deltas(&mut d);
        assert_eq!(d.len(), 2);
        let mut d = deltas(vec![Delta::new(Deleted, obj("foo", 1))]);
        dedup_deltas(&mut d);
        assert_eq!(d.len(), 1);
    }

    #[tokio::test(start_paused = true)]
    async fn queued_double_delete_collapses() {
        let f = fifo();
        f.add(obj("foo", 1)).unwrap();
        f.delete(obj("foo", 2)).unwrap();
        f.delete(obj("foo", 3)).unwrap();
        assert_eq!(
            drain(&f, 1).await,
            vec![vec![s(Added, "foo=1"), s(Deleted, "foo=2")]]
        );
    }
}
