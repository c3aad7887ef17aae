//! apimachinery's `metav1.Now()` and `metav1.NowMicro()` (time.go, micro_time.go): the wall clock as the
//! k8s-openapi `Time` (whole seconds on the wire) and `MicroTime`
//! (microseconds).

use std::time::{SystemTime, UNIX_EPOCH};

use k8s_openapi::apimachinery::pkg::apis::meta::v1::{MicroTime, Time};
use k8s_openapi::jiff::Timestamp;

/// The wall clock now, truncated to `precision_nanos` (1 for nanoseconds).
fn now_truncated(precision_nanos: u32) -> Timestamp {
    let since_epoch = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default();
    let seconds = i64::try_from(since_epoch.as_secs()).unwrap_or(i64::MAX);
    let nanos = since_epoch.subsec_nanos() / precision_nanos * precision_nanos;
    Timestamp::new(seconds, i32::try_from(nanos).unwrap_or(0))
        .unwrap_or(Timestamp::UNIX_EPOCH)
}

/// Mirrors `metav1.Now()`, in whole seconds as a `Time` is serialized.
#[must_use]
pub fn now() -> Time {
    Time(now_truncated(1_000_000_000))
}

/// Mirrors `metav1.NowMicro()`.
#[must_use]
pub fn now_micro() -> MicroTime {
    MicroTime(now_truncated(1_000))
}
