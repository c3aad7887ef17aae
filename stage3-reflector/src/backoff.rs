//! Exponential backoff with jitter and a reset after a healthy period.
//!
//! Mirrors apimachinery's [`pkg/util/wait/backoff.go`]: `wait.Backoff.Step` and the
//! `exponentialBackoffManagerImpl` that `NewExponentialBackoffManager` returns. The
//! Reflector builds one with 800 ms initial delay, factor 2, jitter 1.0, a 30 s cap
//! and a 2 minute reset, so a failing reflector settles at one request every [30 s,
//! 60 s).
//!
//! [`pkg/util/wait/backoff.go`]: https://github.com/kubernetes/apimachinery/blob/v0.36.0/pkg/util/wait/backoff.go

use std::time::Duration;

use tokio::time::Instant;

/// The parameters of an [`ExponentialBackoff`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct BackoffSettings {
    /// The first delay.
    pub initial: Duration,
    /// No delay grows beyond this, before jitter (`Cap`).
    pub cap: Duration,
    /// If no backoff was asked for during this long, start again at `initial`.
    pub reset_after: Duration,
    /// Each delay is the previous one times this.
    pub factor: f64,
    /// Each delay gets up to `jitter × delay` added at random; `0` turns jitter
    /// off.
    pub jitter: f64,
}

impl BackoffSettings {
    /// The reflector's settings (client-go's `NewReflectorWithOptions`): 800 ms
    /// doubling to 30 s, jitter 1.0, reset after 2 minutes.
    pub const REFLECTOR: BackoffSettings = BackoffSettings {
        initial: Duration::from_millis(800),
        cap: Duration::from_secs(30),
        reset_after: Duration::from_secs(120),
        factor: 2.0,
        jitter: 1.0,
    };
}

impl Default for BackoffSettings {
    fn default() -> Self {
        BackoffSettings::REFLECTOR
    }
}

/// Where the delay sequence stands.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Growth {
    /// Still doubling; this is the next delay before jitter.
    Growing(Duration),
    /// Reached the cap (`Steps` became 0 in Go); every delay is the cap plus jitter.
    Capped,
}

/// Mirrors `exponentialBackoffManagerImpl`: hands out ever longer delays, and starts
/// over after a quiet period.
#[derive(Clone, Debug)]
pub struct ExponentialBackoff {
    settings: BackoffSettings,
    growth: Growth,
    last_backoff_start: Instant,
}

impl ExponentialBackoff {
    /// A backoff whose quiet period starts now.
    pub fn new(settings: BackoffSettings) -> Self {
        ExponentialBackoff {
            settings,
            growth: Growth::Growing(settings.initial),
            last_backoff_start: Instant::now(),
        }
    }

    // ANCHOR: next_delay
    /// Mirrors `getNextBackoff`: the next delay to wait. If the previous call was
    /// more than `reset_after` ago the sequence starts over at `initial`.
    pub fn next_delay(&mut self) -> Duration {
        let now = Instant::now();
        if now.saturating_duration_since(self.last_backoff_start)
            > self.settings.reset_after
        {
            self.growth = Growth::Growing(self.settings.initial);
        }
        self.last_backoff_start = now;
        self.step()
    }

    /// Mirrors `wait.Backoff.Step`.
    fn step(&mut self) -> Duration {
        let delay = match self.growth {
            Growth::Capped => self.settings.cap,
            Growth::Growing(delay) => {
                let next = delay.mul_f64(self.settings.factor.max(0.0));
                self.growth = if next > self.settings.cap {
                    Growth::Capped
                } else {
                    Growth::Growing(next)
                };
                delay
            }
        };
        jitter(delay, self.settings.jitter)
    }
    // ANCHOR_END: next_delay
}

/// Mirrors `wait.Jitter`: `delay` plus a random amount in `[0, max_factor × delay)`.
pub fn jitter(delay: Duration, max_factor: f64) -> Duration {
    if max_factor <= 0.0 {
        return delay;
    }
    delay + delay.mul_f64(rand::random::<f64>() * max_factor)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn no_jitter() -> BackoffSettings {
        BackoffSettings {
            jitter: 0.0,
            ..BackoffSettings::REFLECTOR
        }
    }

    #[tokio::test(start_paused = true)]
    async fn doubles_from_800ms_up_to_the_30s_cap() {
        let mut backoff = ExponentialBackoff::new(no_jitter());
        let delays: Vec<u64> = (0..9)
            .map(|_| backoff.next_delay().as_millis() as u64)
            .collect();
        assert_eq!(
            delays,
            [800, 1600, 3200, 6400, 12800, 25600, 30000, 30000, 30000]
        );
    }

    #[tokio::test(start_paused = true)]
    async fn jitter_stays_within_one_times_the_delay() {
        let mut backoff = ExponentialBackoff::new(BackoffSettings::REFLECTOR);
        let mut expected = 800u64;
        for _ in 0..20 {
            let delay = backoff.next_delay().as_millis() as u64;
            assert!(
                (expected..2 * expected).contains(&delay),
                "{delay} vs {expected}"
            );
            expected = (expected * 2).min(30_000);
        }
    }

    #[tokio::test(start_paused = true)]
    async fn resets_after_two_quiet_minutes() {
        let mut backoff = ExponentialBackoff::new(no_jitter());
        for _ in 0..5 {
            backoff.next_delay();
        }
        tokio::time::advance(Duration::from_secs(120)).await;
        // Exactly two minutes is not "more than" two minutes.
        assert_eq!(backoff.next_delay(), Duration::from_millis(25600));
        tokio::time::advance(Duration::from_secs(121)).await;
        assert_eq!(backoff.next_delay(), Duration::from_millis(800));
    }
}
