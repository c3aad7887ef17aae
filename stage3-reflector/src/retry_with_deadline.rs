//! Retrying one kind of error for a limited time.
//!
//! Mirrors client-go's [`tools/cache/retry_with_deadline.go`], which the Reflector
//! uses to re-watch at once after internal errors (an etcd leader election, say) for
//! up to `max_internal_error_retry_duration`, instead of relisting.
//!
//! [`tools/cache/retry_with_deadline.go`]: https://github.com/kubernetes/client-go/blob/v0.36.0/tools/cache/retry_with_deadline.go

use std::time::Duration;

use tokio::time::Instant;

use crate::error::Error;

/// The error window: when the current run of retryable errors began and when it was
/// last seen.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Window {
    /// No retryable error recently.
    Quiet,
    /// Retryable errors since `first`, the latest at `last`.
    Failing { first: Instant, last: Instant },
}

/// Mirrors `retryWithDeadlineImpl`.
#[derive(Debug)]
pub struct RetryWithDeadline {
    max_retry_duration: Duration,
    min_reset_period: Duration,
    is_retryable: fn(&Error) -> bool,
    window: Window,
}

impl RetryWithDeadline {
    /// Retries errors for which `is_retryable` holds, for up to `max_retry_duration`
    /// after the first one. A gap of `min_reset_period` without such errors
    /// starts a new window. A zero `max_retry_duration` never retries.
    pub fn new(
        max_retry_duration: Duration,
        min_reset_period: Duration,
        is_retryable: fn(&Error) -> bool,
    ) -> Self {
        RetryWithDeadline {
            max_retry_duration,
            min_reset_period,
            is_retryable,
            window: Window::Quiet,
        }
    }

    /// Mirrors `After`: records that a watch ended with `error`.
    pub fn after(&mut self, error: &Error) {
        if !(self.is_retryable)(error) {
            return;
        }
        let now = Instant::now();
        self.window = match self.window {
            Window::Failing { first, last }
                if now.saturating_duration_since(last) < self.min_reset_period =>
            {
                Window::Failing { first, last: now }
            }
            _ => Window::Failing {
                first: now,
                last: now,
            },
        };
    }

    /// Mirrors `ShouldRetry`: whether the current window still allows a retry.
    pub fn should_retry(&mut self) -> bool {
        if self.max_retry_duration.is_zero() {
            return false;
        }
        let first = match self.window {
            // Go compares against the zero time here, which is always too long ago.
            Window::Quiet => return false,
            Window::Failing { first, .. } => first,
        };
        if Instant::now().saturating_duration_since(first) <= self.max_retry_duration
        {
            return true;
        }
        self.window = Window::Quiet;
        false
    }
}
