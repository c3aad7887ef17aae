//! `listener` mirrors client-go's `BenchmarkListener` (shared_informer_test.go): 5
//! concurrent producers add notifications to one processorListener whose handler
//! counts them; the time per notification runs from the first add until the handler
//! has counted the last.
//!
//! Run with `cargo bench -p stage4-shared-informer --bench listener`.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};
use workspace_allocator as _;

use criterion::{Criterion, criterion_group, criterion_main};
use k8s_openapi::api::core::v1::Pod;
use stage4_shared_informer::bench_support::ListenerHarness;
use stage4_shared_informer::{Notification, ResourceEventHandler};
use tokio::sync::Notify;

const PRODUCERS: u64 = 5;

struct Count {
    seen: Arc<AtomicU64>,
    target: Arc<AtomicU64>,
    done: Arc<Notify>,
}

impl ResourceEventHandler<Pod> for Count {
    fn on_add(&self, _: &Arc<Pod>, _: bool) {
        if self.seen.fetch_add(1, Ordering::Relaxed) + 1
            == self.target.load(Ordering::Relaxed)
        {
            self.done.notify_one();
        }
    }
}

fn listener(c: &mut Criterion) {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("a tokio runtime");
    let object = Arc::new(Pod::default());
    c.bench_function("listener", |b| {
        b.iter_custom(|iters| {
            let seen = Arc::new(AtomicU64::new(0));
            let target = Arc::new(AtomicU64::new(iters));
            let done = Arc::new(Notify::new());
            let harness = {
                let _guard = runtime.enter();
                Arc::new(ListenerHarness::start(Count {
                    seen: Arc::clone(&seen),
                    target: Arc::clone(&target),
                    done: Arc::clone(&done),
                }))
            };
            let start = Instant::now();
            std::thread::scope(|scope| {
                for producer in 0..PRODUCERS {
                    let share =
                        iters / PRODUCERS + u64::from(producer < iters % PRODUCERS);
                    let harness = Arc::clone(&harness);
                    let object = Arc::clone(&object);
                    scope.spawn(move || {
                        for _ in 0..share {
                            harness.add(Notification::Add {
                                new: Arc::clone(&object),
                                is_in_initial_list: false,
                            });
                        }
                    });
                }
            });
            runtime.block_on(async {
                let finished = async {
                    while seen.load(Ordering::Relaxed) < iters {
                        done.notified().await;
                    }
                };
                tokio::time::timeout(Duration::from_secs(60), finished)
                    .await
                    .expect("the handler saw every notification");
            });
            let elapsed = start.elapsed();
            let Ok(harness) = Arc::try_unwrap(harness) else {
                panic!("the producers still hold the listener");
            };
            runtime.block_on(harness.stop());
            elapsed
        })
    });
}

fn config() -> Criterion {
    Criterion::default()
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(5))
}

criterion_group! {
    name = benches;
    config = config();
    targets = listener
}
criterion_main!(benches);
