//! Mirrors apiserver's `pkg/storage/cacher/time_budget.go`: how long the dispatcher
//! may wait for blocked watchers.
//!
//! Each event may wait for slow watchers, but the waiting is paid from a budget that
//! refills at 50 ms per second and holds at most 100 ms. What a dispatch does not
//! use goes back. A watcher that is still blocked when the budget runs out is
//! closed: one slow client can't slow the events of every other client by more than
//! 5 %.

use std::time::Duration;

use parking_lot::Mutex;
use tokio::time::Instant;

/// Mirrors `refreshPerSecond`: budget added per second.
pub const REFRESH_PER_SECOND: Duration = Duration::from_millis(50);
/// Mirrors `maxBudget`: the most budget that can be saved up.
pub const MAX_BUDGET: Duration = Duration::from_millis(100);

// ANCHOR: time_budget
/// Mirrors `timeBudgetImpl`.
#[derive(Debug)]
pub struct TimeBudget {
    state: Mutex<BudgetState>,
    refresh: Duration,
    max_budget: Duration,
}

#[derive(Debug)]
struct BudgetState {
    budget: Duration,
    last: Instant,
}

impl TimeBudget {
    /// Mirrors `newTimeBudget`: an empty budget that starts refilling now.
    pub fn new() -> Self {
        TimeBudget::with_rates(REFRESH_PER_SECOND, MAX_BUDGET)
    }

    /// A budget with other rates (for tests and tuning).
    pub fn with_rates(refresh: Duration, max_budget: Duration) -> Self {
        TimeBudget {
            state: Mutex::new(BudgetState {
                budget: Duration::ZERO,
                last: Instant::now(),
            }),
            refresh,
            max_budget,
        }
    }

    /// Mirrors `takeAvailable`: adds what accrued since the last call (refresh ×
    /// elapsed seconds, capped at the maximum) and takes all of it.
    pub fn take_available(&self) -> Duration {
        // ANCHOR: ex5-time-budget
        let mut state = self.state.lock();
        let now = Instant::now();
        let elapsed = now.saturating_duration_since(state.last);
        let accrued = self.refresh.mul_f64(elapsed.as_secs_f64());
        state.budget = (state.budget + accrued).min(self.max_budget);
        state.last = now;
        std::mem::take(&mut state.budget)
        // ANCHOR_END: ex5-time-budget
    }

    /// Mirrors `returnUnused`: gives back what a dispatch did not use (never above
    /// the maximum).
    pub fn return_unused(&self, unused: Duration) {
        let mut state = self.state.lock();
        state.budget = (state.budget + unused).min(self.max_budget);
    }
}
// ANCHOR_END: time_budget

/// What the live page reads.
impl TimeBudget {
    /// What [`take_available`](Self::take_available) would take now, without
    /// taking it (for the live page).
    pub fn available(&self) -> Duration {
        let state = self.state.lock();
        let elapsed = Instant::now().saturating_duration_since(state.last);
        (state.budget + self.refresh.mul_f64(elapsed.as_secs_f64()))
            .min(self.max_budget)
    }

    /// The most the budget can save.
    pub fn max_budget(&self) -> Duration {
        self.max_budget
    }
}

impl Default for TimeBudget {
    fn default() -> Self {
        TimeBudget::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    mod ex5_time_budget {
        use super::*;

        #[tokio::test(start_paused = true)]
        async fn ex5_time_budget_refills_at_50ms_per_second_up_to_100ms() {
            let budget = TimeBudget::new();
            assert_eq!(budget.take_available(), Duration::ZERO);
            tokio::time::advance(Duration::from_secs(1)).await;
            assert_eq!(budget.take_available(), Duration::from_millis(50));
            // Taken: nothing left until time passes.
            assert_eq!(budget.take_available(), Duration::ZERO);
            tokio::time::advance(Duration::from_secs(10)).await;
            assert_eq!(budget.take_available(), MAX_BUDGET);
        }

        #[tokio::test(start_paused = true)]
        async fn ex5_time_budget_gets_unused_time_back_capped() {
            let budget = TimeBudget::new();
            tokio::time::advance(Duration::from_millis(1500)).await;
            let taken = budget.take_available();
            assert_eq!(taken, Duration::from_millis(75));
            budget.return_unused(Duration::from_millis(30));
            assert_eq!(budget.take_available(), Duration::from_millis(30));
            budget.return_unused(Duration::from_millis(500));
            assert_eq!(budget.take_available(), MAX_BUDGET);
        }
    }
}
