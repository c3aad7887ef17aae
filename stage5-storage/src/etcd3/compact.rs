//! The compactor: mirrors apiserver's `pkg/storage/etcd3/compact.go`.
//!
//! etcd (and [`EmbeddedKv`](crate::kv::EmbeddedKv)) keeps every version of every key
//! until someone compacts it. kube-apiserver does, every
//! `--etcd-compaction-interval` (5 minutes by default; 0 turns it off): each round
//! compacts to the revision it saw **one interval earlier**, so the last interval's
//! history stays readable for slow watchers and for bursts, and everything older goes.
//!
//! ## Only one apiserver compacts
//!
//! Several apiservers share one etcd; each runs a compactor, and they agree through
//! the key `compact_rev_key`. Its `version` (how many times it was written) is a
//! logical clock, the *compact time*; its value is the revision the last round
//! compacted to. A round is one transaction ([`compact`]):
//!
//! ```text
//! if version(compact_rev_key) == my compact time
//! then put compact_rev_key = rev      (version + 1: I won this round), compact to rev
//! else get compact_rev_key            (someone else won: adopt their compact time)
//! ```
//!
//! The winner compacts to `rev`, the revision it saw in the previous round, and
//! remembers the transaction's revision for the next one. A loser learns the new
//! compact time and tries again one interval later, when it wins only if nobody
//! else did in between. So in normal operation the cluster compacts once per
//! interval, and when the compacting apiserver dies another takes over within
//! two intervals. The first round only sets up the key (there is no older revision
//! to compact to yet).
//!
//! Upstream also keeps one compactor per etcd endpoint in a process
//! (`StartCompactorPerEndpoint`); here each server starts its own, and the CAS
//! keeps two compactors on one store from compacting twice.
//!
//! ## Recovery
//!
//! A failed round is logged and the loop goes on; the next round retries. As
//! upstream, a round whose transaction succeeded but whose compaction failed still
//! advances the compact time.

use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use tokio::sync::watch;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use crate::kv::{Compare, Kv, KvError, TxnOp};

/// Mirrors `compactRevKey`: the key the compactors agree through. It lies outside
/// every resource prefix (`/registry/...`), so no resource's watch sees it.
pub const COMPACT_REV_KEY: &str = "compact_rev_key";

/// Mirrors kube-apiserver's default `--etcd-compaction-interval` (5 minutes).
pub const DEFAULT_COMPACTION_INTERVAL: Duration = Duration::from_secs(5 * 60);

/// What a compactor carries from one round to the next: the compact time it
/// expects (`compact_rev_key`'s version) and the revision to compact to when it
/// wins. Mirrors the `compactTime` and `rev` locals of `runCompactLoop`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CompactState {
    /// The version of `compact_rev_key` this compactor expects; 0 before the key
    /// exists.
    pub version: i64,
    /// The store's revision at the previous round; 0 before the first.
    pub revision: i64,
}

/// Mirrors `Compact`: one round of the protocol above. Returns the state for the
/// next round (always, even with an error, as upstream assigns all results), and
/// the revision compacted to: this round's own compaction when it won, or the
/// value the winner stored when it lost; 0 for none.
///
/// A lost round is no error.
pub async fn compact(
    kv: &dyn Kv,
    state: CompactState,
) -> (CompactState, Result<i64, KvError>) {
    let response = kv
        .txn(
            Bytes::from_static(COMPACT_REV_KEY.as_bytes()),
            Compare::Version(state.version),
            TxnOp::Put(Bytes::from(state.revision.to_string())),
        )
        .await;
    let response = match response {
        Ok(response) => response,
        Err(error) => return (state, Err(error)),
    };
    let current_revision = response.header_revision;
    if !response.succeeded {
        // Someone else compacted this round: adopt their compact time. (A key
        // that vanished counts as version 0: upstream would index an empty list.)
        let (version, compacted) = response.kv.map_or((0, 0), |kv| {
            let compacted = std::str::from_utf8(&kv.value)
                .ok()
                .and_then(|value| value.parse::<i64>().ok())
                .unwrap_or(0);
            (kv.version, compacted)
        });
        let next = CompactState {
            version,
            revision: current_revision,
        };
        return (next, Ok(compacted));
    }
    let next = CompactState {
        version: state.version + 1,
        revision: current_revision,
    };
    if state.revision == 0 {
        // We don't compact on bootstrap.
        return (next, Ok(0));
    }
    match kv.compact(state.revision).await {
        Ok(()) => {
            tracing::debug!(revision = state.revision, "etcd: compacted rev");
            (next, Ok(state.revision))
        }
        Err(error) => (next, Err(error)),
    }
}

/// Mirrors apiserver's `compactor` (`NewCompactor`, `Stop`, `CompactRevision`):
/// compacts `kv` every interval in a task it owns.
///
/// Stop it with [`Compactor::stop`] (or by cancelling the token it was started
/// with); dropping it cancels the task without waiting.
#[derive(Debug)]
pub struct Compactor {
    stop: CancellationToken,
    task: Option<JoinHandle<()>>,
    compact_revision: watch::Receiver<i64>,
}

impl Compactor {
    /// Mirrors `NewCompactor`: starts the compaction loop on the current tokio
    /// runtime, first round one `interval` from now. An interval of zero starts no
    /// loop (compaction off, as `--etcd-compaction-interval=0` upstream). The loop
    /// also ends when `shutdown` is cancelled.
    pub fn start(
        kv: Arc<dyn Kv>,
        interval: Duration,
        shutdown: &CancellationToken,
    ) -> Compactor {
        let stop = shutdown.child_token();
        let (revision_tx, compact_revision) = watch::channel(0);
        let task = (!interval.is_zero()).then(|| {
            tokio::spawn(run_compact_loop(kv, interval, stop.clone(), revision_tx))
        });
        Compactor {
            stop,
            task,
            compact_revision,
        }
    }

    /// Mirrors `CompactRevision`: the newest revision this compactor compacted to
    /// or saw another compactor store; 0 before any.
    pub fn compact_revision(&self) -> i64 {
        *self.compact_revision.borrow()
    }

    /// A receiver that sees [`compact_revision`](Self::compact_revision) change
    /// (to wait for a compaction without polling).
    pub fn subscribe(&self) -> watch::Receiver<i64> {
        self.compact_revision.clone()
    }

    /// Whether a loop runs (false when the interval was zero or after stopping).
    pub fn is_running(&self) -> bool {
        self.task.as_ref().is_some_and(|task| !task.is_finished())
    }

    /// Mirrors `Stop`: ends the loop and waits for it. A round in flight is
    /// abandoned at its next await (the transaction and the compaction are each
    /// atomic in the store).
    pub async fn stop(mut self) {
        self.stop.cancel();
        if let Some(task) = self.task.take()
            && let Err(error) = task.await
        {
            tracing::error!(%error, "compactor task failed");
        }
    }
}

impl Drop for Compactor {
    fn drop(&mut self) {
        self.stop.cancel();
    }
}

/// Mirrors `runCompactLoop`: every `interval` (measured from the end of the
/// previous round, as Go's `clock.After` in a loop), one round of [`compact`].
async fn run_compact_loop(
    kv: Arc<dyn Kv>,
    interval: Duration,
    stop: CancellationToken,
    compact_revision: watch::Sender<i64>,
) {
    let mut state = CompactState::default();
    loop {
        tokio::select! {
            () = stop.cancelled() => return,
            () = tokio::time::sleep(interval) => {}
        }
        let round = tokio::select! {
            () = stop.cancelled() => return,
            round = compact(kv.as_ref(), state) => round,
        };
        let result;
        (state, result) = round;
        match result {
            // Mirrors `UpdateCompactRevision`: only ever forward.
            Ok(revision) => {
                compact_revision.send_if_modified(|current| {
                    let newer = revision > *current;
                    if newer {
                        *current = revision;
                    }
                    newer
                });
            }
            Err(error) => {
                tracing::error!(%error, "etcd: compact failed");
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use tokio::time::Instant;

    use super::*;
    use crate::kv::RangeRequest;
    use crate::kv::observed::ObservedKv;

    /// Helpers on the recording KV for these tests.
    trait CompactorTestKv {
        async fn write(&self) -> i64;
        async fn compact_key(&self) -> Option<(i64, String)>;
    }

    impl CompactorTestKv for ObservedKv {
        /// One write; answers the store's revision after it.
        async fn write(&self) -> i64 {
            let (revision, _) = self
                .put(Bytes::from_static(b"/registry/pods/a"), Bytes::from("x"))
                .await
                .expect("put");
            revision
        }

        /// `compact_rev_key`'s version and value, if it exists.
        async fn compact_key(&self) -> Option<(i64, String)> {
            let read = self
                .range(RangeRequest::key(COMPACT_REV_KEY))
                .await
                .expect("range");
            read.kvs.first().map(|kv| {
                (kv.version, String::from_utf8_lossy(&kv.value).into_owned())
            })
        }
    }

    /// Moves the paused clock to `at`. The runtime advances time only when every
    /// task is idle, so a compactor round due before `at` has finished (the
    /// embedded store answers at once) when this returns.
    async fn until(at: Instant) {
        tokio::time::sleep_until(at).await;
    }

    const MINUTE: Duration = Duration::from_secs(60);

    #[tokio::test(start_paused = true)]
    async fn compaction_each_interval_to_the_revision_seen_an_interval_before() {
        let kv = Arc::new(ObservedKv::default());
        let t0 = Instant::now();
        let shutdown = CancellationToken::new();
        let compactor = Compactor::start(
            Arc::clone(&kv) as Arc<dyn Kv>,
            DEFAULT_COMPACTION_INTERVAL,
            &shutdown,
        );
        kv.write().await; // 2
        until(t0 + 5 * MINUTE - Duration::from_millis(1)).await;
        assert_eq!(kv.compact_key().await, None, "nothing before the interval");

        // The first round only sets up the key: compact time 1, no compaction.
        until(t0 + 5 * MINUTE + Duration::from_millis(1)).await;
        let first_round = kv.inner.current_revision(); // the key's put: 3
        assert_eq!(kv.compact_key().await, Some((1, "0".into())));
        assert_eq!((kv.compactions(), kv.inner.compacted_revision()), (0, 0));

        // The second round compacts to the revision of the first.
        let written = kv.write().await; // 4
        until(t0 + 10 * MINUTE + Duration::from_millis(1)).await;
        assert_eq!(kv.compactions(), 1);
        assert_eq!(kv.inner.compacted_revision(), first_round);
        assert_eq!(compactor.compact_revision(), first_round);
        assert_eq!(kv.compact_key().await, Some((2, first_round.to_string())));
        let second_round = kv.inner.current_revision();
        assert_eq!(second_round, written + 1);

        // The third compacts to the second's revision: the last interval's history
        // (here the write at 4) stayed readable until now.
        until(t0 + 15 * MINUTE + Duration::from_millis(1)).await;
        assert_eq!(kv.compactions(), 2);
        assert_eq!(kv.inner.compacted_revision(), second_round);

        compactor.stop().await;
        until(t0 + 30 * MINUTE).await;
        assert_eq!(kv.compactions(), 2, "a stopped compactor compacts no more");
    }

    #[tokio::test(start_paused = true)]
    async fn compaction_by_two_compactors_happens_once_per_interval() {
        let kv = Arc::new(ObservedKv::default());
        let t0 = Instant::now();
        let shutdown = CancellationToken::new();
        let dyn_kv = Arc::clone(&kv) as Arc<dyn Kv>;
        let mut first = Some(Compactor::start(
            Arc::clone(&dyn_kv),
            DEFAULT_COMPACTION_INTERVAL,
            &shutdown,
        ));
        until(t0 + MINUTE).await;
        let second = Compactor::start(
            Arc::clone(&dyn_kv),
            DEFAULT_COMPACTION_INTERVAL,
            &shutdown,
        );
        // Rounds: the first at 5, 10, 15, ... minutes; the second at 6, 11, 16, ...
        let mut compactions = Vec::new();
        for minute in 2..=21 {
            kv.write().await;
            until(t0 + minute * MINUTE + Duration::from_millis(1)).await;
            compactions.push(kv.compactions());
            if minute == 17
                && let Some(first) = first.take()
            {
                // The compacting apiserver goes away: the other takes over.
                first.stop().await;
            }
        }
        let per_interval: Vec<usize> = compactions
            .chunks(5)
            .map(|chunk| chunk.last().copied().unwrap_or(0))
            .collect();
        // Minutes 2-6: bootstrap only; 7-11: the first compacts at 10; 12-16: at 15;
        // 17-21: the first stopped at 17, the second wins at 21 (its round at 16
        // lost and learnt the compact time of 15).
        assert_eq!(per_interval, vec![0, 1, 2, 3], "{compactions:?}");
        assert_eq!(compactions[20 - 2], 2, "nobody compacts at 20");
        assert_eq!(kv.compact_key().await.map(|(version, _)| version), Some(4));
        assert_eq!(second.compact_revision(), kv.inner.compacted_revision());
        shutdown.cancel();
        second.stop().await;
    }

    #[tokio::test(start_paused = true)]
    async fn compaction_interval_zero_starts_nothing() {
        let kv = Arc::new(ObservedKv::default());
        let shutdown = CancellationToken::new();
        let compactor = Compactor::start(
            Arc::clone(&kv) as Arc<dyn Kv>,
            Duration::ZERO,
            &shutdown,
        );
        assert!(!compactor.is_running());
        until(Instant::now() + 60 * MINUTE).await;
        assert_eq!(kv.compact_key().await, None);
        compactor.stop().await;
    }

    #[tokio::test(start_paused = true)]
    async fn compaction_stops_with_the_shutdown_token() {
        let kv = Arc::new(ObservedKv::default());
        let shutdown = CancellationToken::new();
        let compactor = Compactor::start(
            Arc::clone(&kv) as Arc<dyn Kv>,
            DEFAULT_COMPACTION_INTERVAL,
            &shutdown,
        );
        assert!(compactor.is_running());
        shutdown.cancel();
        until(Instant::now() + MINUTE).await;
        assert!(!compactor.is_running(), "the loop ended with the token");
        compactor.stop().await;
    }

    #[tokio::test]
    async fn compaction_round_that_loses_the_cas_adopts_the_winners_time() {
        let kv = ObservedKv::default();
        let (state, result) = compact(&kv, CompactState::default()).await;
        assert_eq!(result.ok(), Some(0));
        assert_eq!(state.version, 1);
        kv.write().await;
        // Another compactor, also at compact time 0, loses: no write, no compaction.
        let revision_before = kv.inner.current_revision();
        let (lost, result) = compact(&kv, CompactState::default()).await;
        assert_eq!(result.ok(), Some(0), "the winner stored 0 (bootstrap)");
        assert_eq!(
            lost,
            CompactState {
                version: 1,
                revision: revision_before
            }
        );
        assert_eq!(kv.inner.current_revision(), revision_before);
        assert_eq!(kv.compactions(), 0);
        // Its next round, at the adopted time, wins and compacts.
        let (won, result) = compact(&kv, lost).await;
        assert_eq!(result.ok(), Some(revision_before));
        assert_eq!(won.version, 2);
        assert_eq!(kv.inner.compacted_revision(), revision_before);
    }
}
