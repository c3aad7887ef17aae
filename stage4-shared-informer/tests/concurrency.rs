//! Handlers coming and going under load, a stuck handler, and clean shutdown. These
//! run on a multi-threaded runtime in real time; every wait is bounded.

mod common;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use common::pod;
use k8s_openapi::api::core::v1::Pod;
use parking_lot::Mutex;
use stage1_store::Indexers;
use stage3_reflector::FakeListerWatcher;
use stage4_shared_informer::{
    ResourceEventHandler, ResourceEventHandlerFuncs, SharedIndexInformer,
};

const BOUND: Duration = Duration::from_secs(60);

async fn bounded<F: std::future::Future>(what: &str, f: F) -> F::Output {
    tokio::time::timeout(BOUND, f)
        .await
        .unwrap_or_else(|_| panic!("timed out: {what}"))
}

/// Waits for `condition`, failing at once if the informer's task has ended (for
/// example because a stubbed exercise panicked inside it) instead of waiting out the
/// bound.
async fn until<T>(
    what: &str,
    run: Option<&tokio::task::JoinHandle<T>>,
    mut condition: impl FnMut() -> bool,
) {
    bounded(what, async {
        while !condition() {
            let stopped = run.is_some_and(|run| run.is_finished());
            assert!(!stopped, "the informer stopped while waiting for {what}");
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    })
    .await;
}

struct Counter(Arc<AtomicUsize>);

impl ResourceEventHandler<Pod> for Counter {
    fn on_add(&self, _: &Arc<Pod>, _: bool) {
        self.0.fetch_add(1, Ordering::SeqCst);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hundred_tasks_add_and_remove_handlers_during_ten_thousand_events() {
    let metrics = tokio::runtime::Handle::current().metrics();
    let baseline = metrics.num_alive_tasks();
    let fake = FakeListerWatcher::<Pod>::new();
    let informer =
        SharedIndexInformer::new(fake.clone(), Duration::ZERO, Indexers::new());
    let steady = Arc::new(AtomicUsize::new(0));
    informer
        .add_event_handler(Counter(Arc::clone(&steady)))
        .unwrap();
    let (token, run) = common::start(&informer);
    until("the informer to sync", Some(&run), || informer.has_synced()).await;

    let churners: Vec<_> = (0..100)
        .map(|i| {
            let informer = informer.clone();
            tokio::spawn(async move {
                for round in 0..20 {
                    let registration = informer
                        .add_event_handler(ResourceEventHandlerFuncs::<Pod>::new())
                        .expect("the informer is running");
                    tokio::task::yield_now().await;
                    if (i + round) % 2 == 0 {
                        informer.remove_event_handler(&registration);
                    } else {
                        informer.remove_event_handler_and_wait(&registration).await;
                        assert!(registration.is_stopped());
                    }
                }
            })
        })
        .collect();
    let producer = tokio::spawn({
        let fake = fake.clone();
        async move {
            for i in 0..10_000 {
                fake.add(pod(&format!("pod-{i}"))).unwrap();
                if i % 100 == 0 {
                    tokio::task::yield_now().await;
                }
            }
        }
    });
    for churner in churners {
        bounded("a churner", churner).await.unwrap();
    }
    bounded("the producer", producer).await.unwrap();
    until("the steady handler to see every event", Some(&run), || {
        steady.load(Ordering::SeqCst) == 10_000
    })
    .await;
    assert_eq!(
        informer.handler_count(),
        1,
        "every churned handler was removed"
    );
    assert_eq!(informer.get_indexer().len(), 10_000);

    token.cancel();
    bounded("the informer to stop", run).await.unwrap();
    assert!(informer.is_stopped());
    until(
        "every task to end",
        None::<&tokio::task::JoinHandle<()>>,
        || metrics.num_alive_tasks() == baseline,
    )
    .await;
}

/// A handler that blocks its thread on the first add until released.
struct Stuck {
    entered: tokio::sync::mpsc::UnboundedSender<()>,
    release: Mutex<std::sync::mpsc::Receiver<()>>,
}

impl ResourceEventHandler<Pod> for Stuck {
    fn on_add(&self, _: &Arc<Pod>, _: bool) {
        let _ = self.entered.send(());
        let _ = self.release.lock().recv_timeout(BOUND);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 3)]
async fn remove_does_not_wait_for_a_stuck_handler() {
    let fake = FakeListerWatcher::<Pod>::new();
    fake.add(pod("a")).unwrap();
    fake.add(pod("b")).unwrap();
    let informer =
        SharedIndexInformer::new(fake.clone(), Duration::ZERO, Indexers::new());
    let (entered_tx, mut entered_rx) = tokio::sync::mpsc::unbounded_channel();
    let (release_tx, release_rx) = std::sync::mpsc::channel();
    let registration = informer
        .add_event_handler(Stuck {
            entered: entered_tx,
            release: Mutex::new(release_rx),
        })
        .unwrap();
    let (token, run) = common::start(&informer);
    let stuck = async {
        tokio::select! {
            entered = entered_rx.recv() => entered,
            _ = async { while !run.is_finished() { tokio::time::sleep(Duration::from_millis(5)).await } } => {
                panic!("the informer stopped before the handler got stuck")
            }
        }
    };
    bounded("the handler to get stuck", stuck).await.unwrap();

    // remove returns while the handler is still stuck.
    let remover = tokio::task::spawn_blocking({
        let informer = informer.clone();
        let registration = registration.clone();
        move || informer.remove_event_handler(&registration)
    });
    tokio::time::timeout(Duration::from_secs(5), remover)
        .await
        .expect("remove_event_handler blocked on a stuck handler")
        .unwrap();
    assert!(
        !registration.is_stopped(),
        "the handler is still inside on_add"
    );
    assert_eq!(informer.handler_count(), 0);

    release_tx.send(()).unwrap();
    bounded(
        "the handler task to stop",
        informer.remove_event_handler_and_wait(&registration),
    )
    .await;
    // It never got "b": the rest of its queue was dropped on removal.
    assert!(
        tokio::time::timeout(Duration::from_millis(50), entered_rx.recv())
            .await
            .map_or(true, |x| x.is_none())
    );
    token.cancel();
    bounded("the informer to stop", run).await.unwrap();
}
