//! The errors of stage 2.

use stage1_store::{BoxError, KeyError, StoreError};

/// What can go wrong in a queue.
#[derive(Debug, thiserror::Error)]
pub enum FifoError {
    /// The key function failed, or a `Deltas` was empty (client-go's
    /// `ErrZeroLengthDeltasObject`).
    #[error(transparent)]
    Key(#[from] KeyError),

    /// The transform function refused an object; nothing was queued.
    #[error("transform failed for object with key {key:?}: {source}")]
    Transform {
        /// The object's key.
        key: String,
        /// The transformer's error.
        #[source]
        source: BoxError,
    },
}

impl From<FifoError> for StoreError {
    fn from(err: FifoError) -> Self {
        match err {
            FifoError::Key(key) => StoreError::Key(key),
            other => StoreError::Other(Box::new(other)),
        }
    }
}

/// Why `pop` returned without processing an item.
#[derive(Debug, thiserror::Error)]
pub enum PopError<E> {
    /// Mirrors client-go's `ErrFIFOClosed`: the queue was closed and is empty.
    #[error("DeltaFIFO: manipulating with closed queue")]
    Closed,
    /// The process function failed. The item is not requeued (client-go removed
    /// requeueing in 1.33).
    #[error("processing a popped item failed: {0}")]
    Process(#[source] E),
}
