//! client-go's shared_informer_test.go scenarios, rewritten in Rust against stage
//! 3's fake.

mod common;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use common::*;
use k8s_openapi::api::core::v1::Pod;
use stage1_store::{Indexer, Indexers, KeyGetter, Store};
use stage3_reflector::{
    Error, FakeListerWatcher, WatchReply, expired_status, internal_error_status,
};
use stage4_shared_informer::{
    InformerError, QueueKind, ResourceEventHandler, ResourceEventHandlerFuncs,
    SharedIndexInformer,
};

const SECOND: Duration = Duration::from_secs(1);

fn informer(fake: &FakeListerWatcher<Pod>, resync: Duration) -> Informer {
    SharedIndexInformer::new(fake.clone(), resync, Indexers::new())
}

mod resync_periods {
    use super::*;
    use pretty_assertions::assert_eq;

    #[tokio::test(start_paused = true)]
    async fn listeners_get_resyncs_only_when_due() {
        // client-go's TestListenerResyncPeriods.
        let fake = fake_with(&["pod1", "pod2"]);
        let informer = informer(&fake, SECOND);
        let (never, mut never_rx) = Recorder::new();
        let (every2, mut every2_rx) = Recorder::new();
        let (every3, mut every3_rx) = Recorder::new();
        informer
            .add_event_handler_with_resync_period(never, Duration::ZERO)
            .unwrap();
        informer
            .add_event_handler_with_resync_period(every2, 2 * SECOND)
            .unwrap();
        informer
            .add_event_handler_with_resync_period(every3, 3 * SECOND)
            .unwrap();
        let start_time = tokio::time::Instant::now();
        let (token, task) = start(&informer);
        for rx in [&mut never_rx, &mut every2_rx, &mut every3_rx] {
            assert_eq!(next_n(rx, 2).await, adds(&["pod1", "pod2"], true));
        }
        // At 2 s only the 2 s listener resyncs.
        tokio::time::sleep_until(start_time + 2 * SECOND).await;
        assert_eq!(next_n(&mut every2_rx, 2).await, syncs(&["pod1", "pod2"]));
        assert_quiet(&mut never_rx, Duration::from_millis(100)).await;
        assert_quiet(&mut every3_rx, Duration::from_millis(100)).await;
        // At 3 s only the 3 s listener does.
        tokio::time::sleep_until(start_time + 3 * SECOND).await;
        assert_eq!(next_n(&mut every3_rx, 2).await, syncs(&["pod1", "pod2"]));
        assert_quiet(&mut never_rx, Duration::from_millis(100)).await;
        assert_quiet(&mut every2_rx, Duration::from_millis(100)).await;
        token.cancel();
        within("the informer to stop", task).await.unwrap();
    }
}

mod watch_disruption {
    use super::*;
    use pretty_assertions::assert_eq;

    #[tokio::test(start_paused = true)]
    async fn a_hidden_change_and_a_watch_reset_reach_only_the_right_listeners() {
        // client-go's TestSharedInformerWatchDisruption.
        let fake = fake_with(&["pod1", "pod2"]);
        let informer = informer(&fake, SECOND);
        let (no_resync, mut no_resync_rx) = Recorder::new();
        let (resync, mut resync_rx) = Recorder::new();
        informer
            .add_event_handler_with_resync_period(no_resync, Duration::ZERO)
            .unwrap();
        informer
            .add_event_handler_with_resync_period(resync, SECOND)
            .unwrap();
        let (token, task) = start(&informer);
        assert_eq!(
            next_n(&mut no_resync_rx, 2).await,
            adds(&["pod1", "pod2"], true)
        );
        assert_eq!(
            next_n(&mut resync_rx, 2).await,
            adds(&["pod1", "pod2"], true)
        );
        // The first resync tick marks the no-resync listener as not syncing.
        assert_eq!(next_n(&mut resync_rx, 2).await, syncs(&["pod1", "pod2"]));

        // The next watch gets 410; the current one ends; while no watch is open,
        // pod3 appears and pod2 changes, so only the relist can see it.
        fake.push_watch_reply(WatchReply::Fail(Error::from_status(expired_status(
            "too old",
        ))));
        fake.close_watches();
        fake.add(pod("pod3")).unwrap();
        let pod2 = fake.modify(pod("pod2")).unwrap();
        let pod2_rv = pod2.metadata.resource_version.clone().unwrap();

        let mut seen = next_n(&mut no_resync_rx, 2).await;
        seen.sort();
        assert_eq!(
            seen,
            vec![
                Seen::Add("pod3".into(), false),
                Seen::Update("pod2".into(), pod2_rv.clone())
            ]
        );
        assert_quiet(&mut no_resync_rx, Duration::from_millis(100)).await;
        // The resync listener also gets the unchanged pod1 as a sync (it is
        // syncing).
        let mut got = Vec::new();
        while !(got.contains(&Seen::Sync("pod1".into()))
            && got.contains(&Seen::Add("pod3".into(), false))
            && got.contains(&Seen::Update("pod2".into(), pod2_rv.clone())))
        {
            got.push(within("resync listener", resync_rx.recv()).await.unwrap());
        }
        token.cancel();
        within("stop", task).await.unwrap();
    }
}

mod errors_and_transform {
    use super::*;
    use pretty_assertions::assert_eq;

    #[tokio::test(start_paused = true)]
    async fn the_watch_error_handler_sees_a_list_error() {
        // client-go's TestSharedInformerErrorHandling.
        let fake = fake_with(&["pod1"]);
        fake.fail_next_list(Error::from_status(internal_error_status(
            "etcd is down",
        )));
        let informer = informer(&fake, Duration::ZERO);
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
        informer
            .set_watch_error_handler(move |_name, error| {
                let _ = tx.send(error.to_string());
            })
            .unwrap();
        let (token, task) = start(&informer);
        let message = within("the error handler", rx.recv()).await.unwrap();
        assert!(message.contains("etcd is down"), "{message}");
        // It backs off, lists again and syncs.
        synced(&informer).await;
        assert!(informer.get_indexer().get_by_key("default/pod1").is_some());
        assert!(matches!(
            informer.set_watch_error_handler(|_, _| {}),
            Err(InformerError::AlreadyStarted { .. })
        ));
        token.cancel();
        within("stop", task).await.unwrap();
    }

    #[tokio::test(start_paused = true)]
    async fn a_transform_is_applied_before_the_cache_and_the_handlers() {
        // client-go's TestSharedInformerTransformer.
        let fake = fake_with(&["pod1"]);
        let informer = informer(&fake, Duration::ZERO);
        informer
            .set_transform(Arc::new(|pod: Arc<Pod>| {
                let mut pod = (*pod).clone();
                pod.metadata.name =
                    pod.metadata.name.map(|n| format!("{n}-transformed"));
                Ok(Arc::new(pod))
            }))
            .unwrap();
        let (recorder, mut rx) = Recorder::new();
        informer.add_event_handler(recorder).unwrap();
        let (token, task) = start(&informer);
        assert_eq!(next_n(&mut rx, 1).await, adds(&["pod1-transformed"], true));
        fake.add(pod("pod2")).unwrap();
        assert_eq!(next_n(&mut rx, 1).await, adds(&["pod2-transformed"], false));
        let cached = informer.get_indexer().list();
        assert!(cached.iter().all(|p| {
            p.metadata
                .name
                .as_deref()
                .unwrap()
                .ends_with("-transformed")
        }));
        token.cancel();
        within("stop", task).await.unwrap();
    }
}

mod handlers {
    use super::*;
    use pretty_assertions::assert_eq;

    #[tokio::test(start_paused = true)]
    async fn removing_an_unknown_or_removed_handler_is_a_no_op() {
        // client-go's TestRemoveWhileActive / TestRemoveNonexistent counterparts.
        let informer_a = informer(&fake_with(&[]), Duration::ZERO);
        let informer_b = informer(&fake_with(&[]), Duration::ZERO);
        let registration = informer_a.add_event_handler(Recorder::new().0).unwrap();
        informer_b.remove_event_handler(&registration);
        assert_eq!(informer_a.handler_count(), 1);
        informer_a.remove_event_handler(&registration);
        informer_a.remove_event_handler(&registration);
        assert_eq!(informer_a.handler_count(), 0);
        // Not started: removal marks it stopped at once.
        assert!(registration.is_stopped());
    }

    #[tokio::test(start_paused = true)]
    async fn adding_a_handler_after_stop_is_an_error() {
        // client-go's TestAddOnStoppedSharedInformer.
        let informer = informer(&fake_with(&[]), Duration::ZERO);
        let (token, task) = start(&informer);
        synced(&informer).await;
        token.cancel();
        within("stop", task).await.unwrap();
        assert!(informer.is_stopped());
        let err = informer.add_event_handler(Recorder::new().0).unwrap_err();
        assert!(matches!(err, InformerError::Stopped));
        assert!(err.to_string().contains("stopped"));
    }

    #[tokio::test(start_paused = true)]
    async fn a_late_handler_syncs_only_after_handling_its_replay() {
        // client-go's TestSharedInformerHandlerAbuse / HasSynced per registration.
        let fake = fake_with(&["a", "b", "c"]);
        let informer = informer(&fake, Duration::ZERO);
        let (early, mut early_rx) = Recorder::new();
        let early_reg = informer.add_event_handler(early).unwrap();
        assert!(!early_reg.has_synced(), "not started yet");
        let (token, task) = start(&informer);
        assert_eq!(next_n(&mut early_rx, 3).await, adds(&["a", "b", "c"], true));
        within("early registration sync", async {
            while !early_reg.has_synced() {
                tokio::task::yield_now().await;
            }
        })
        .await;
        let (late, mut late_rx) = Recorder::new();
        let late_reg = informer.add_event_handler(late).unwrap();
        // Its three replayed adds are queued, none handled yet: not synced.
        assert!(informer.has_synced());
        assert!(!late_reg.has_synced());
        assert_eq!(next_n(&mut late_rx, 3).await, adds(&["a", "b", "c"], true));
        within("late registration sync", async {
            while !late_reg.has_synced() {
                tokio::task::yield_now().await;
            }
        })
        .await;
        token.cancel();
        within("stop", task).await.unwrap();
    }

    #[tokio::test(start_paused = true)]
    async fn a_removed_handler_receives_nothing_more() {
        let fake = fake_with(&["a"]);
        let informer = informer(&fake, Duration::ZERO);
        let (kept, mut kept_rx) = Recorder::new();
        let (removed, mut removed_rx) = Recorder::new();
        informer.add_event_handler(kept).unwrap();
        let removed_reg = informer.add_event_handler(removed).unwrap();
        let (token, task) = start(&informer);
        assert_eq!(next_n(&mut kept_rx, 1).await, adds(&["a"], true));
        assert_eq!(next_n(&mut removed_rx, 1).await, adds(&["a"], true));
        within(
            "removal",
            informer.remove_event_handler_and_wait(&removed_reg),
        )
        .await;
        assert!(removed_reg.is_stopped());
        fake.add(pod("b")).unwrap();
        assert_eq!(next_n(&mut kept_rx, 1).await, adds(&["b"], false));
        // The removed handler's channel closes (its handler was dropped) with
        // nothing in it.
        assert_eq!(within("closed channel", removed_rx.recv()).await, None);
        token.cancel();
        within("stop", task).await.unwrap();
    }

    struct PanicsOn {
        name: &'static str,
        seen: Arc<AtomicUsize>,
    }

    impl ResourceEventHandler<Pod> for PanicsOn {
        fn on_add(&self, obj: &Arc<Pod>, _initial: bool) {
            if obj.metadata.name.as_deref() == Some(self.name) {
                panic!("handler cannot cope with {}", self.name);
            }
            self.seen.fetch_add(1, Ordering::SeqCst);
        }
    }

    #[tokio::test(start_paused = true)]
    async fn a_panicking_handler_skips_the_item_and_others_carry_on() {
        let fake = fake_with(&["good1", "bad", "good2"]);
        let informer = informer(&fake, Duration::ZERO);
        let seen = Arc::new(AtomicUsize::new(0));
        let panicky = informer
            .add_event_handler(PanicsOn {
                name: "bad",
                seen: Arc::clone(&seen),
            })
            .unwrap();
        let (other, mut other_rx) = Recorder::new();
        informer.add_event_handler(other).unwrap();
        let (token, task) = start(&informer);
        assert_eq!(
            next_n(&mut other_rx, 3).await,
            adds(&["bad", "good1", "good2"], true)
        );
        // The panicking handler still handles the rest (after a 1 s pause), and its
        // has_synced becomes true although one initial item was skipped (client-go
        // 129024).
        within("the panicking handler to finish its initial list", async {
            while !panicky.has_synced() {
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
        })
        .await;
        assert_eq!(seen.load(Ordering::SeqCst), 2);
        fake.add(pod("good3")).unwrap();
        assert_eq!(next_n(&mut other_rx, 1).await, adds(&["good3"], false));
        within("the panicking handler to see good3", async {
            while seen.load(Ordering::SeqCst) < 3 {
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
        })
        .await;
        token.cancel();
        within("stop", task).await.unwrap();
    }

    #[tokio::test(start_paused = true)]
    async fn deletes_and_tombstones_reach_handlers() {
        let fake = fake_with(&["a", "b"]);
        let informer = informer(&fake, Duration::ZERO);
        let (recorder, mut rx) = Recorder::new();
        informer.add_event_handler(recorder).unwrap();
        let (token, task) = start(&informer);
        assert_eq!(next_n(&mut rx, 2).await, adds(&["a", "b"], true));
        fake.delete(pod("a")).unwrap();
        assert_eq!(next_n(&mut rx, 1).await, vec![Seen::Delete("a".into())]);
        // b disappears while the watch is down: the relist finds it gone → a
        // tombstone.
        fake.push_watch_reply(WatchReply::Fail(Error::from_status(expired_status(
            "too old",
        ))));
        fake.close_watches();
        fake.delete(pod("b")).unwrap();
        assert_eq!(
            next_n(&mut rx, 1).await,
            vec![Seen::Delete("default/b".into())]
        );
        assert!(informer.get_indexer().is_empty());
        token.cancel();
        within("stop", task).await.unwrap();
    }

    #[tokio::test(start_paused = true)]
    async fn the_real_fifo_queue_gives_the_same_notifications() {
        let fake = fake_with(&["a"]);
        let informer = informer(&fake, Duration::ZERO);
        informer.set_queue_kind(QueueKind::RealFifo).unwrap();
        let (recorder, mut rx) = Recorder::new();
        informer.add_event_handler(recorder).unwrap();
        let (token, task) = start(&informer);
        assert_eq!(next_n(&mut rx, 1).await, adds(&["a"], true));
        let a = fake.modify(pod("a")).unwrap();
        assert_eq!(
            next_n(&mut rx, 1).await,
            vec![Seen::Update(
                "a".into(),
                a.metadata.resource_version.clone().unwrap()
            )]
        );
        fake.delete(pod("a")).unwrap();
        assert_eq!(next_n(&mut rx, 1).await, vec![Seen::Delete("a".into())]);
        token.cancel();
        within("stop", task).await.unwrap();
    }

    #[tokio::test(start_paused = true)]
    async fn settings_are_refused_after_start() {
        let informer = informer(&fake_with(&[]), Duration::ZERO);
        let (token, task) = start(&informer);
        synced(&informer).await;
        assert!(
            informer
                .set_transform(Arc::new(|p: Arc<Pod>| Ok(p)))
                .is_err()
        );
        assert!(informer.set_queue_kind(QueueKind::RealFifo).is_err());
        // Indexers may be added to a running informer (client-go allows it since
        // 1.30).
        informer
            .add_indexers(stage1_store::namespace_indexers())
            .unwrap();
        assert!(
            informer
                .get_indexer()
                .list_index_func_values(stage1_store::NAMESPACE_INDEX)
                .is_ok()
        );
        token.cancel();
        within("stop", task).await.unwrap();
        // A second run returns at once.
        within(
            "second run",
            informer.run(tokio_util::sync::CancellationToken::new()),
        )
        .await;
    }

    #[test]
    fn closure_handlers_call_only_what_is_set() {
        let count = Arc::new(AtomicUsize::new(0));
        let c = Arc::clone(&count);
        let handler =
            ResourceEventHandlerFuncs::<Pod>::new().add_func(move |_, _| {
                c.fetch_add(1, Ordering::SeqCst);
            });
        let p = Arc::new(pod("x"));
        handler.on_add(&p, true);
        handler.on_update(&p, &p);
        assert_eq!(count.load(Ordering::SeqCst), 1);
    }
}

/// The resync period rules of `add_event_handler_with_resync_period`, which stand on
/// `determine_resync_period`.
mod resync_period_rules {
    use super::*;
    use pretty_assertions::assert_eq;

    #[tokio::test(start_paused = true)]
    async fn handler_periods_adjust_the_check_period_before_start_and_are_raised_after()
     {
        // client-go's TestResyncCheckPeriod.
        let fake = fake_with(&[]);
        let informer = informer(&fake, 12 * SECOND);
        let period_of = |informer: &Informer, id: u64| {
            informer
                .listener_stats()
                .into_iter()
                .find(|s| s.id == id)
                .map(|s| s.resync_period)
                .unwrap()
        };
        // Below 1 s is raised to the 1 s minimum; a smaller period lowers the check
        // period.
        let r1 = informer
            .add_event_handler_with_resync_period(
                Recorder::new().0,
                Duration::from_millis(10),
            )
            .unwrap();
        assert_eq!(period_of(&informer, r1.id()), SECOND);
        let r2 = informer
            .add_event_handler_with_resync_period(Recorder::new().0, 60 * SECOND)
            .unwrap();
        assert_eq!(period_of(&informer, r2.id()), 60 * SECOND);
        let r3 = informer
            .add_event_handler_with_resync_period(Recorder::new().0, Duration::ZERO)
            .unwrap();
        assert_eq!(period_of(&informer, r3.id()), Duration::ZERO);
        let (token, task) = start(&informer);
        synced(&informer).await;
        // After start, a period below the check period (1 s now) is raised to it.
        let r4 = informer
            .add_event_handler_with_resync_period(
                Recorder::new().0,
                Duration::from_millis(500),
            )
            .unwrap();
        assert_eq!(period_of(&informer, r4.id()), SECOND);
        let r5 = informer
            .add_event_handler_with_resync_period(Recorder::new().0, 5 * SECOND)
            .unwrap();
        assert_eq!(period_of(&informer, r5.id()), 5 * SECOND);
        token.cancel();
        within("stop", task).await.unwrap();
    }

    #[tokio::test(start_paused = true)]
    async fn without_resync_every_listener_gets_zero() {
        // An informer created without resync never resyncs: whatever a handler asks
        // for, before or after start, its period is 0.
        let informer = informer(&fake_with(&[]), Duration::ZERO);
        let period = |informer: &Informer, id: u64| {
            informer
                .listener_stats()
                .into_iter()
                .find(|s| s.id == id)
                .unwrap()
                .resync_period
        };
        let before = informer
            .add_event_handler_with_resync_period(Recorder::new().0, 5 * SECOND)
            .unwrap();
        assert_eq!(period(&informer, before.id()), Duration::ZERO);
        let (token, task) = start(&informer);
        synced(&informer).await;
        let after = informer
            .add_event_handler_with_resync_period(Recorder::new().0, 5 * SECOND)
            .unwrap();
        assert_eq!(period(&informer, after.id()), Duration::ZERO);
        token.cancel();
        within("stop", task).await.unwrap();
    }
}
