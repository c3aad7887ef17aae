//! `delaying_queue_add_after` mirrors client-go's
//! `BenchmarkDelayingQueue_AddAfter` (delaying_queue_test.go, v0.36): on an unnamed
//! delaying queue with a fake clock (here tokio's paused clock), `add_after` the
//! keys `"0"`, `"1"`, ... each with a random delay under 10 minutes, step the clock
//! 11 minutes, and get every key back. One iteration is one key: its `format!`,
//! its `add_after`, its trip through the waiting loop's heap and its `get`.
//!
//! Go's producer blocks whenever the waiting loop is 1,000 arrivals behind (the
//! capacity of `waitingForAddCh`), and the loop runs on another core meanwhile; on
//! the one thread of a paused runtime the producer yields to the loop every 1,000
//! adds instead, so that the loop sorts every key into its heap before the clock
//! moves, as in Go.
//!
//! The target is at most 0.5× client-go's time on the same machine.
//!
//! Run with `cargo bench -p stage6-controllers --bench delaying_queue`; `cargo test
//! --benches` runs it once, as a smoke test.

use std::time::{Duration, Instant};
use workspace_allocator as _;

use criterion::{Criterion, criterion_group, criterion_main};
use stage6_controllers::workqueue::DelayingQueue;

/// Mirrors the 1,000 slots of `waitingForAddCh`.
const ARRIVALS_BEFORE_YIELD: u64 = 1_000;

/// A xorshift generator: the delays need to be spread, not unpredictable.
struct XorShift(u64);

impl XorShift {
    /// Mirrors `rand.Int63n(n)` closely enough: uniform-ish in `0..n`.
    fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % n
    }
}

/// One run of `BenchmarkDelayingQueue_AddAfter` with `n` keys: the time from
/// the first add until the last get.
async fn add_after_then_get(n: u64, rng: &mut XorShift) -> Duration {
    let ten_minutes = Duration::from_secs(600).as_nanos() as u64;
    let q = DelayingQueue::new();
    let start = Instant::now();
    // Add items.
    for i in 0..n {
        let data = i.to_string();
        q.add_after(data, Duration::from_nanos(rng.below(ten_minutes) + 1));
        if (i + 1) % ARRIVALS_BEFORE_YIELD == 0 {
            tokio::task::yield_now().await;
        }
    }
    // Exercise item removal as well.
    tokio::time::advance(Duration::from_secs(11 * 60)).await;
    for _ in 0..n {
        let _ = q.get().await;
    }
    let elapsed = start.elapsed();
    q.shut_down();
    elapsed
}

/// Go's `testing` grows `b.N` until a run takes a second, so its figure is the
/// time per key with a heap of some 300,000 to 800,000 keys; criterion's
/// iteration counts are far smaller. `delaying_queue_add_after` is criterion's
/// way; `delaying_queue_add_after/300000` times whole runs of 300,000 keys and
/// reports the time per key, to compare with `-test.benchtime 300000x`.
const GO_SIZED_RUN: u64 = 300_000;

fn delaying_queue_add_after(c: &mut Criterion) {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .start_paused(true)
        .build()
        .expect("a paused tokio runtime");
    let mut rng = XorShift(0x9e37_79b9_7f4a_7c15);
    c.bench_function("delaying_queue_add_after", |b| {
        b.iter_custom(|iters| runtime.block_on(add_after_then_get(iters, &mut rng)));
    });
    let mut group = c.benchmark_group("delaying_queue_add_after");
    group.sample_size(10);
    group.bench_function(GO_SIZED_RUN.to_string(), |b| {
        b.iter_custom(|iters| {
            let mut per_key = Duration::ZERO;
            for _ in 0..iters {
                let run =
                    runtime.block_on(add_after_then_get(GO_SIZED_RUN, &mut rng));
                per_key += run / GO_SIZED_RUN as u32;
            }
            per_key
        });
    });
    group.finish();
}

criterion_group!(benches, delaying_queue_add_after);
criterion_main!(benches);
