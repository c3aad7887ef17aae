//! [`RateLimiter`]s: how long a failed item waits before it is retried.
//!
//! Mirrors
//! [default_rate_limiters.go](https://github.com/kubernetes/client-go/blob/v0.36.0/util/workqueue/default_rate_limiters.go):
//!
//! - [`ItemExponentialFailureRateLimiter`]: per item, `base * 2^failures`, capped;
//! - [`ItemFastSlowRateLimiter`]: per item, fast for a few attempts, then slow;
//! - [`BucketRateLimiter`]: for all items together, a token bucket
//!   (`golang.org/x/time/rate`);
//! - [`MaxOfRateLimiter`]: the longest wait of several;
//! - [`WithMaxWaitRateLimiter`]: another limiter's wait, capped.
//!
//! [`default_controller_rate_limiter`] is what most controllers use: the longer of
//! a per-item exponential backoff (5 ms to 1000 s) and an overall bucket of 10
//! retries per second, bursts of 100.
//!
//! Time comes from tokio's clock, so a paused test runtime drives the bucket.

use std::fmt;
use std::hash::Hash;
use std::sync::Arc;
use std::time::Duration;

use hashbrown::HashMap;
use parking_lot::Mutex;
use tokio::time::Instant;

use super::queue::Item;

// ANCHOR: rate_limiter
/// Mirrors client-go's `TypedRateLimiter[T]`.
pub trait RateLimiter<T>: Send + Sync {
    /// Mirrors `When`: how long `item` should wait (and, for per-item limiters,
    /// one more failure of it).
    fn when(&self, item: &T) -> Duration;
    /// Mirrors `Forget`: `item` is finished being retried, whether it failed or
    /// succeeded; stop tracking it.
    fn forget(&self, item: &T);
    /// Mirrors `NumRequeues`: how many failures `item` has had.
    fn num_requeues(&self, item: &T) -> usize;
}
// ANCHOR_END: rate_limiter

impl<T, R: RateLimiter<T> + ?Sized> RateLimiter<T> for Box<R> {
    fn when(&self, item: &T) -> Duration {
        (**self).when(item)
    }
    fn forget(&self, item: &T) {
        (**self).forget(item);
    }
    fn num_requeues(&self, item: &T) -> usize {
        (**self).num_requeues(item)
    }
}

impl<T, R: RateLimiter<T> + ?Sized> RateLimiter<T> for Arc<R> {
    fn when(&self, item: &T) -> Duration {
        (**self).when(item)
    }
    fn forget(&self, item: &T) {
        (**self).forget(item);
    }
    fn num_requeues(&self, item: &T) -> usize {
        (**self).num_requeues(item)
    }
}

// ANCHOR: default_controller_rate_limiter
/// Mirrors client-go's `DefaultTypedControllerRateLimiter`: both overall and
/// per-item rate limiting, the longer wait of an exponential per-item backoff
/// (5 ms, doubling, up to 1000 s) and a token bucket of 10 qps with a burst of 100
/// ("only for retry speed and only the overall factor, not per item").
pub fn default_controller_rate_limiter<T: Item>() -> MaxOfRateLimiter<T> {
    MaxOfRateLimiter::new(vec![
        Box::new(ItemExponentialFailureRateLimiter::new(
            Duration::from_millis(5),
            Duration::from_secs(1000),
        )),
        Box::new(BucketRateLimiter::new(10.0, 100)),
    ])
}
// ANCHOR_END: default_controller_rate_limiter

/// Mirrors client-go's `DefaultTypedItemBasedRateLimiter`: exponential per item,
/// 1 ms doubling up to 1000 s.
pub fn default_item_based_rate_limiter<T: Item>()
-> ItemExponentialFailureRateLimiter<T> {
    ItemExponentialFailureRateLimiter::new(
        Duration::from_millis(1),
        Duration::from_secs(1000),
    )
}

/// Mirrors `rate.InfDuration`: the delay of a reservation that can never be met.
const INF_DURATION: Duration = Duration::from_nanos(i64::MAX as u64);

/// Mirrors golang.org/x/time/rate's `Limiter` (v0.14.0, which client-go v0.36
/// requires), as far as client-go uses it (`NewLimiter`, `Reserve().Delay()`): a
/// token bucket that starts full with `burst` tokens, refills `limit` tokens a
/// second up to `burst`, and lets a reservation take a token it does not have yet,
/// to be waited for (the tokens go negative).
#[derive(Debug)]
struct Limiter {
    /// Mirrors `limit`: tokens per second (`f64::MAX` is `rate.Inf`).
    limit: f64,
    /// Mirrors `burst`.
    burst: usize,
    /// Mirrors `tokens`: may go negative (reserved ahead).
    tokens: f64,
    /// Mirrors `last`: when `tokens` was last brought up to date (`None`: never).
    last: Option<Instant>,
}

impl Limiter {
    /// Mirrors `rate.NewLimiter`: a full bucket.
    fn new(limit: f64, burst: usize) -> Self {
        Limiter {
            limit,
            burst,
            tokens: burst as f64,
            last: None,
        }
    }

    /// Mirrors `Limit.durationFromTokens`.
    fn duration_from_tokens(&self, tokens: f64) -> Duration {
        if self.limit <= 0.0 {
            return INF_DURATION;
        }
        let nanos = tokens / self.limit * 1e9;
        if nanos > i64::MAX as f64 {
            return INF_DURATION;
        }
        Duration::from_nanos(nanos as u64)
    }

    /// Mirrors `Limit.tokensFromDuration`.
    fn tokens_from_duration(&self, elapsed: Duration) -> f64 {
        if self.limit <= 0.0 {
            return 0.0;
        }
        elapsed.as_secs_f64() * self.limit
    }

    /// Mirrors `Limiter.advance`: the tokens at `now`, refilled since `last` and
    /// capped at the burst.
    fn advance(&self, now: Instant) -> f64 {
        let elapsed = self
            .last
            .map_or(Duration::ZERO, |last| now.saturating_duration_since(last));
        let tokens = self.tokens + self.tokens_from_duration(elapsed);
        tokens.min(self.burst as f64)
    }

    // ANCHOR: reserve_delay
    /// Mirrors `Limiter.Reserve().Delay()` (`reserveN(now, 1, InfDuration)`, then
    /// `DelayFrom(now)`): takes one token, now or ahead, and says how long until
    /// it is there.
    fn reserve_delay(&mut self, now: Instant) -> Duration {
        if self.limit == f64::MAX {
            // rate.Inf: every event is allowed at once.
            return Duration::ZERO;
        }
        let tokens = self.advance(now) - 1.0;
        let wait = if tokens < 0.0 {
            self.duration_from_tokens(-tokens)
        } else {
            Duration::ZERO
        };
        if self.burst < 1 {
            // Not OK: a reservation of more than the burst is never granted.
            return INF_DURATION;
        }
        self.last = Some(now);
        self.tokens = tokens;
        wait
    }
    // ANCHOR_END: reserve_delay
}

/// Mirrors client-go's `TypedBucketRateLimiter`: a token bucket shared by all
/// items (it tracks no item, so `forget` does nothing and `num_requeues` is 0).
#[derive(Debug)]
pub struct BucketRateLimiter {
    limiter: Mutex<Limiter>,
}

impl BucketRateLimiter {
    /// Mirrors `&TypedBucketRateLimiter{Limiter: rate.NewLimiter(rate.Limit(limit), burst)}`:
    /// `limit` retries a second on average, `burst` at once; the bucket starts
    /// full. `f64::MAX` is Go's `rate.Inf` (no limit).
    pub fn new(limit: f64, burst: usize) -> Self {
        BucketRateLimiter {
            limiter: Mutex::new(Limiter::new(limit, burst)),
        }
    }
}

impl<T> RateLimiter<T> for BucketRateLimiter {
    /// Mirrors `TypedBucketRateLimiter.When`: `Limiter.Reserve().Delay()`.
    fn when(&self, _item: &T) -> Duration {
        self.limiter.lock().reserve_delay(Instant::now())
    }

    /// Mirrors `TypedBucketRateLimiter.Forget`: nothing to forget.
    fn forget(&self, _item: &T) {}

    /// Mirrors `TypedBucketRateLimiter.NumRequeues`: always 0.
    fn num_requeues(&self, _item: &T) -> usize {
        0
    }
}

/// Mirrors client-go's `TypedItemExponentialFailureRateLimiter`: waits
/// `base_delay * 2^failures` for an item, at most `max_delay`. Dealing with a
/// maximum number of failures and with expiry is up to the caller.
pub struct ItemExponentialFailureRateLimiter<T> {
    failures: Mutex<HashMap<T, usize>>,
    base_delay: Duration,
    max_delay: Duration,
}

impl<T> fmt::Debug for ItemExponentialFailureRateLimiter<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ItemExponentialFailureRateLimiter")
            .field("tracked", &self.failures.lock().len())
            .field("base_delay", &self.base_delay)
            .field("max_delay", &self.max_delay)
            .finish()
    }
}

impl<T: Eq + Hash> ItemExponentialFailureRateLimiter<T> {
    /// Mirrors client-go's `NewTypedItemExponentialFailureRateLimiter`.
    pub fn new(base_delay: Duration, max_delay: Duration) -> Self {
        ItemExponentialFailureRateLimiter {
            failures: Mutex::new(HashMap::new()),
            base_delay,
            max_delay,
        }
    }
}

impl<T: Item> RateLimiter<T> for ItemExponentialFailureRateLimiter<T> {
    // ANCHOR: when
    /// Mirrors `TypedItemExponentialFailureRateLimiter.When`: `base * 2^n` for the
    /// item's `n`-th failure (counting from 0), then one failure more; never more
    /// than `max_delay`, also when the power would overflow.
    fn when(&self, item: &T) -> Duration {
        // ANCHOR: ex6-exponential-when
        let mut failures = self.failures.lock();
        let exp = match failures.get_mut(item) {
            Some(count) => {
                let exp = *count;
                *count += 1;
                exp
            }
            None => {
                failures.insert(item.clone(), 1);
                0
            }
        };
        drop(failures);

        // The backoff is capped such that `calculated` never overflows (Go's
        // Duration is an int64 of nanoseconds).
        let backoff = self.base_delay.as_nanos() as f64 * 2f64.powf(exp as f64);
        if backoff >= i64::MAX as f64 {
            return self.max_delay;
        }
        let calculated = Duration::from_nanos(backoff as u64);
        calculated.min(self.max_delay)
        // ANCHOR_END: ex6-exponential-when
    }
    // ANCHOR_END: when

    /// Mirrors `TypedItemExponentialFailureRateLimiter.Forget`.
    fn forget(&self, item: &T) {
        self.failures.lock().remove(item);
    }

    /// Mirrors `TypedItemExponentialFailureRateLimiter.NumRequeues`.
    fn num_requeues(&self, item: &T) -> usize {
        self.failures.lock().get(item).copied().unwrap_or(0)
    }
}

/// Mirrors client-go's `TypedItemFastSlowRateLimiter`: `fast_delay` for the
/// first `max_fast_attempts` failures of an item, `slow_delay` after.
pub struct ItemFastSlowRateLimiter<T> {
    failures: Mutex<HashMap<T, usize>>,
    max_fast_attempts: usize,
    fast_delay: Duration,
    slow_delay: Duration,
}

impl<T> fmt::Debug for ItemFastSlowRateLimiter<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ItemFastSlowRateLimiter")
            .field("tracked", &self.failures.lock().len())
            .field("max_fast_attempts", &self.max_fast_attempts)
            .field("fast_delay", &self.fast_delay)
            .field("slow_delay", &self.slow_delay)
            .finish()
    }
}

impl<T: Eq + Hash> ItemFastSlowRateLimiter<T> {
    /// Mirrors client-go's `NewTypedItemFastSlowRateLimiter` (same argument
    /// order).
    pub fn new(
        fast_delay: Duration,
        slow_delay: Duration,
        max_fast_attempts: usize,
    ) -> Self {
        ItemFastSlowRateLimiter {
            failures: Mutex::new(HashMap::new()),
            max_fast_attempts,
            fast_delay,
            slow_delay,
        }
    }
}

impl<T: Item> RateLimiter<T> for ItemFastSlowRateLimiter<T> {
    /// Mirrors `TypedItemFastSlowRateLimiter.When`.
    fn when(&self, item: &T) -> Duration {
        let mut failures = self.failures.lock();
        let count = match failures.get_mut(item) {
            Some(count) => {
                *count += 1;
                *count
            }
            None => {
                failures.insert(item.clone(), 1);
                1
            }
        };
        if count <= self.max_fast_attempts {
            self.fast_delay
        } else {
            self.slow_delay
        }
    }

    /// Mirrors `TypedItemFastSlowRateLimiter.Forget`.
    fn forget(&self, item: &T) {
        self.failures.lock().remove(item);
    }

    /// Mirrors `TypedItemFastSlowRateLimiter.NumRequeues`.
    fn num_requeues(&self, item: &T) -> usize {
        self.failures.lock().get(item).copied().unwrap_or(0)
    }
}

/// Mirrors client-go's `TypedMaxOfRateLimiter`: asks every limiter and waits the
/// longest. With a token bucket among them, the burst can seem exceeded when some
/// items were separately delayed longer.
pub struct MaxOfRateLimiter<T> {
    limiters: Vec<Box<dyn RateLimiter<T>>>,
}

impl<T> fmt::Debug for MaxOfRateLimiter<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("MaxOfRateLimiter")
            .field("limiters", &self.limiters.len())
            .finish()
    }
}

impl<T> MaxOfRateLimiter<T> {
    /// Mirrors client-go's `NewTypedMaxOfRateLimiter`.
    pub fn new(limiters: Vec<Box<dyn RateLimiter<T>>>) -> Self {
        MaxOfRateLimiter { limiters }
    }
}

impl<T> RateLimiter<T> for MaxOfRateLimiter<T> {
    // ANCHOR: max_of_when
    /// Mirrors `TypedMaxOfRateLimiter.When`: every limiter is asked (each counts
    /// the failure), the longest wait wins.
    fn when(&self, item: &T) -> Duration {
        self.limiters
            .iter()
            .map(|limiter| limiter.when(item))
            .fold(Duration::ZERO, Duration::max)
    }
    // ANCHOR_END: max_of_when

    /// Mirrors `TypedMaxOfRateLimiter.Forget`.
    fn forget(&self, item: &T) {
        for limiter in &self.limiters {
            limiter.forget(item);
        }
    }

    /// Mirrors `TypedMaxOfRateLimiter.NumRequeues`: the highest count.
    fn num_requeues(&self, item: &T) -> usize {
        self.limiters
            .iter()
            .map(|limiter| limiter.num_requeues(item))
            .max()
            .unwrap_or(0)
    }
}

/// Mirrors client-go's `TypedWithMaxWaitRateLimiter`: another limiter's wait,
/// never longer than `max_delay`.
pub struct WithMaxWaitRateLimiter<T> {
    limiter: Box<dyn RateLimiter<T>>,
    max_delay: Duration,
}

impl<T> fmt::Debug for WithMaxWaitRateLimiter<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("WithMaxWaitRateLimiter")
            .field("max_delay", &self.max_delay)
            .finish_non_exhaustive()
    }
}

impl<T> WithMaxWaitRateLimiter<T> {
    /// Mirrors client-go's `NewTypedWithMaxWaitRateLimiter`.
    pub fn new(limiter: Box<dyn RateLimiter<T>>, max_delay: Duration) -> Self {
        WithMaxWaitRateLimiter { limiter, max_delay }
    }
}

impl<T> RateLimiter<T> for WithMaxWaitRateLimiter<T> {
    /// Mirrors `TypedWithMaxWaitRateLimiter.When`.
    fn when(&self, item: &T) -> Duration {
        self.limiter.when(item).min(self.max_delay)
    }

    /// Mirrors `TypedWithMaxWaitRateLimiter.Forget`.
    fn forget(&self, item: &T) {
        self.limiter.forget(item);
    }

    /// Mirrors `TypedWithMaxWaitRateLimiter.NumRequeues`.
    fn num_requeues(&self, item: &T) -> usize {
        self.limiter.num_requeues(item)
    }
}

#[cfg(test)]
mod tests {
    //! client-go's default_rate_limiters_test.go, and the token bucket against
    //! golang.org/x/time/rate's arithmetic.

    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::time::Duration;

    use tokio::time::advance;

    use super::*;

    const MS: Duration = Duration::from_millis(1);

    /// TestItemFastSlowRateLimiter.
    #[test]
    fn test_item_fast_slow_rate_limiter() {
        let limiter =
            ItemFastSlowRateLimiter::new(5 * MS, Duration::from_secs(10), 3);
        assert_eq!(limiter.when(&"one"), 5 * MS);
        assert_eq!(limiter.when(&"one"), 5 * MS);
        assert_eq!(limiter.when(&"one"), 5 * MS);
        assert_eq!(limiter.when(&"one"), Duration::from_secs(10));
        assert_eq!(limiter.when(&"one"), Duration::from_secs(10));
        assert_eq!(limiter.num_requeues(&"one"), 5);

        assert_eq!(limiter.when(&"two"), 5 * MS);
        assert_eq!(limiter.when(&"two"), 5 * MS);
        assert_eq!(limiter.num_requeues(&"two"), 2);

        limiter.forget(&"one");
        assert_eq!(limiter.num_requeues(&"one"), 0);
        assert_eq!(limiter.when(&"one"), 5 * MS);
    }

    /// TestMaxOfRateLimiter.
    #[test]
    fn test_max_of_rate_limiter() {
        let limiter: MaxOfRateLimiter<&str> = MaxOfRateLimiter::new(vec![
            Box::new(ItemFastSlowRateLimiter::new(
                5 * MS,
                Duration::from_secs(3),
                3,
            )),
            Box::new(ItemExponentialFailureRateLimiter::new(
                MS,
                Duration::from_secs(1),
            )),
        ]);
        assert_eq!(limiter.when(&"one"), 5 * MS);
        assert_eq!(limiter.when(&"one"), 5 * MS);
        assert_eq!(limiter.when(&"one"), 5 * MS);
        assert_eq!(limiter.when(&"one"), Duration::from_secs(3));
        assert_eq!(limiter.when(&"one"), Duration::from_secs(3));
        assert_eq!(limiter.num_requeues(&"one"), 5);

        assert_eq!(limiter.when(&"two"), 5 * MS);
        assert_eq!(limiter.when(&"two"), 5 * MS);
        assert_eq!(limiter.num_requeues(&"two"), 2);

        limiter.forget(&"one");
        assert_eq!(limiter.num_requeues(&"one"), 0);
        assert_eq!(limiter.when(&"one"), 5 * MS);
    }

    /// client-go's `StepRateLimiter`: `base_delay` for the first `threshold` calls
    /// (any item), `max_delay` after.
    struct StepRateLimiter {
        count: AtomicUsize,
        threshold: usize,
        base_delay: Duration,
        max_delay: Duration,
    }

    impl<T> RateLimiter<T> for StepRateLimiter {
        fn when(&self, _: &T) -> Duration {
            if self.count.fetch_add(1, Ordering::Relaxed) < self.threshold {
                self.base_delay
            } else {
                self.max_delay
            }
        }
        fn forget(&self, _: &T) {}
        fn num_requeues(&self, _: &T) -> usize {
            0
        }
    }

    /// TestWithMaxWaitRateLimiter.
    #[test]
    fn test_with_max_wait_rate_limiter() {
        let limiter = WithMaxWaitRateLimiter::new(
            Box::new(StepRateLimiter {
                count: AtomicUsize::new(0),
                threshold: 100,
                base_delay: 5 * MS,
                max_delay: Duration::from_secs(1000),
            }),
            Duration::from_secs(500),
        );
        for i in 0..100 {
            assert_eq!(limiter.when(&i), 5 * MS);
        }
        for i in 100..200 {
            assert_eq!(limiter.when(&i), Duration::from_secs(500));
        }
    }

    /// The bucket starts full (`burst` retries at once), then spaces retries
    /// `1/limit` apart, reserving ahead, and refills with time, as
    /// `rate.Limiter.Reserve().Delay()` does.
    #[tokio::test(start_paused = true)]
    async fn bucket_rate_limiter_reserves_ahead_after_the_burst() {
        let limiter = BucketRateLimiter::new(10.0, 100);
        for _ in 0..100 {
            assert_eq!(RateLimiter::<u32>::when(&limiter, &1), Duration::ZERO);
        }
        assert_eq!(RateLimiter::<u32>::when(&limiter, &1), 100 * MS);
        assert_eq!(RateLimiter::<u32>::when(&limiter, &1), 200 * MS);
        assert_eq!(RateLimiter::<u32>::when(&limiter, &1), 300 * MS);
        // Three tokens owed; one second refills ten.
        advance(Duration::from_secs(1)).await;
        for _ in 0..7 {
            assert_eq!(RateLimiter::<u32>::when(&limiter, &1), Duration::ZERO);
        }
        assert_eq!(RateLimiter::<u32>::when(&limiter, &1), 100 * MS);
        // It tracks no item.
        RateLimiter::<u32>::forget(&limiter, &1);
        assert_eq!(RateLimiter::<u32>::num_requeues(&limiter, &1), 0);
        // Never more than the burst, however long it rests.
        advance(Duration::from_secs(3600)).await;
        for _ in 0..100 {
            assert_eq!(RateLimiter::<u32>::when(&limiter, &1), Duration::ZERO);
        }
        assert_eq!(RateLimiter::<u32>::when(&limiter, &1), 100 * MS);
    }

    /// The edge rates of `rate.Limiter`: `Inf` never waits, zero allows the burst
    /// and then never.
    #[tokio::test(start_paused = true)]
    async fn bucket_rate_limiter_edge_rates() {
        let unlimited = BucketRateLimiter::new(f64::MAX, 0);
        for _ in 0..1000 {
            assert_eq!(RateLimiter::<u32>::when(&unlimited, &1), Duration::ZERO);
        }
        let zero = BucketRateLimiter::new(0.0, 2);
        assert_eq!(RateLimiter::<u32>::when(&zero, &1), Duration::ZERO);
        assert_eq!(RateLimiter::<u32>::when(&zero, &1), Duration::ZERO);
        assert_eq!(RateLimiter::<u32>::when(&zero, &1), INF_DURATION);
    }

    /// The default controller limiter: 100 retries of distinct items pass at the
    /// exponential's 5 ms, the 101st waits for the bucket, and one item's own
    /// failures double from 5 ms.
    #[tokio::test(start_paused = true)]
    async fn default_controller_rate_limiter_is_max_of_exponential_and_bucket() {
        let limiter = default_controller_rate_limiter::<u32>();
        for i in 0..100 {
            assert_eq!(limiter.when(&i), 5 * MS);
        }
        assert_eq!(limiter.when(&100), 100 * MS);
        advance(Duration::from_secs(100)).await;
        assert_eq!(limiter.when(&7), 10 * MS);
        assert_eq!(limiter.when(&7), 20 * MS);
        assert_eq!(limiter.num_requeues(&7), 3);
        limiter.forget(&7);
        assert_eq!(limiter.num_requeues(&7), 0);
    }

    /// The tests of the exponential limiter's `when` (exercise
    /// `ex6-exponential-when`).
    mod ex6_exponential_when {
        use super::*;

        /// TestItemExponentialFailureRateLimiter.
        #[test]
        fn test_item_exponential_failure_rate_limiter() {
            let limiter =
                ItemExponentialFailureRateLimiter::new(MS, Duration::from_secs(1));
            for expected in [1, 2, 4, 8, 16] {
                assert_eq!(limiter.when(&"one"), expected * MS);
            }
            assert_eq!(limiter.num_requeues(&"one"), 5);

            assert_eq!(limiter.when(&"two"), MS);
            assert_eq!(limiter.when(&"two"), 2 * MS);
            assert_eq!(limiter.num_requeues(&"two"), 2);

            limiter.forget(&"one");
            assert_eq!(limiter.num_requeues(&"one"), 0);
            assert_eq!(limiter.when(&"one"), MS);
        }

        /// TestItemExponentialFailureRateLimiterOverFlow: a thousand failures give the
        /// cap, not an overflowed duration.
        #[test]
        fn test_item_exponential_failure_rate_limiter_over_flow() {
            let limiter = ItemExponentialFailureRateLimiter::new(
                MS,
                Duration::from_secs(1000),
            );
            for _ in 0..5 {
                limiter.when(&"one");
            }
            assert_eq!(limiter.when(&"one"), 32 * MS);
            for _ in 0..1000 {
                limiter.when(&"overflow1");
            }
            assert_eq!(limiter.when(&"overflow1"), Duration::from_secs(1000));

            let minute = Duration::from_secs(60);
            let limiter =
                ItemExponentialFailureRateLimiter::new(minute, 1000 * 60 * minute);
            for _ in 0..2 {
                limiter.when(&"two");
            }
            assert_eq!(limiter.when(&"two"), 4 * minute);
            for _ in 0..1000 {
                limiter.when(&"overflow2");
            }
            assert_eq!(limiter.when(&"overflow2"), 1000 * 60 * minute);
        }

        /// `default_item_based_rate_limiter`: 1 ms doubling, capped at 1000 s.
        #[test]
        fn default_item_based_rate_limiter_doubles_from_one_millisecond() {
            let limiter = default_item_based_rate_limiter::<&str>();
            assert_eq!(limiter.when(&"a"), MS);
            assert_eq!(limiter.when(&"a"), 2 * MS);
            for _ in 0..40 {
                limiter.when(&"a");
            }
            assert_eq!(limiter.when(&"a"), Duration::from_secs(1000));
        }
    }
}
