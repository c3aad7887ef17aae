//! # Stage 2: DeltaFIFO (and RealFIFO)
//!
//! The queue between the Reflector (stage 3), which writes what it lists and
//! watches, and the informer (stage 4), which pops changes, updates its indexer
//! (stage 1) and tells the handlers.
//!
//! This crate mirrors client-go's `tools/cache/delta_fifo.go`, as source document
//! 003 describes it, and `the_real_fifo.go`, which replaced it as the informers'
//! default queue in client-go 1.33–1.36:
//!
//! | client-go (Go) | here (Rust) |
//! |---|---|
//! | `DeltaFIFO`, `DeltaFIFOOptions`, `NewDeltaFIFOWithOptions` | [`DeltaFifo`], [`DeltaFifoOptions`], [`DeltaFifo::new`] |
//! | `DeltaType` (`Added`, `Updated`, `Deleted`, `Replaced`, `Sync`) | [`DeltaType`] |
//! | `Delta`, `Deltas`, `Oldest`, `Newest` | [`Delta`], [`Deltas`], [`Deltas::oldest`], [`Deltas::newest`] |
//! | `DeletedFinalStateUnknown` | [`DeletedFinalStateUnknown`] |
//! | `queueActionLocked`, `dedupDeltas`, `isDeletionDup` | private `queue_action_locked`, [`dedup_deltas`] |
//! | `Replace`, `Resync`, `syncKeyLocked` | [`DeltaFifo::replace_list`], [`DeltaFifo::resync_known`], private `sync_key_locked` |
//! | `Pop`, `PopProcessFunc`, `ErrFIFOClosed` | [`Queue::pop`] with a closure, [`PopError::Closed`] |
//! | `HasSynced`, `Close`, `KeyOf` | [`Queue::has_synced`], [`Queue::close`], [`DeltaFifo::key_of`] and friends |
//! | `Queue`, `TransformFunc`, `KeyListerGetter` | [`Queue`], [`TransformFunc`], [`KnownObjects`] |
//! | `RealFIFO`, `NewRealFIFO`, `PopBatch` | [`RealFifo`], [`RealFifo::new`], [`RealFifo::pop_batch`] |
//!
//! ## Data flow
//!
//! ```text
//!  Reflector ── add/update/delete/replace/resync ──► DeltaFifo
//!                                                     items: key ──► [Delta, Delta, …]
//!                                                     queue: key, key, key …
//!                                                            (first come, first out)
//!  informer  ◄── pop(process(deltas, is_in_initial_list)) ──┘
//!     └─► indexer (the DeltaFifo's known objects) ─► handlers
//! ```

mod delta;
mod delta_fifo;
mod error;
mod queue;
mod the_real_fifo;

pub use delta::{
    DeletedFinalStateUnknown, Delta, DeltaObject, DeltaType, Deltas, ReplacedAllInfo,
};
pub use delta_fifo::{DeltaFifo, DeltaFifoOptions, dedup_deltas};
pub use error::{FifoError, PopError};
pub use queue::{KnownObjects, Queue, TransformFunc};
pub use the_real_fifo::{RealFifo, RealFifoMode, RealFifoOptions};
