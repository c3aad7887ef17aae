//! The watch a Reflector reads: apimachinery's `watch.Interface`
//! ([`apimachinery::watch`]) with this crate's [`Error`] as what can break the
//! stream (a broken connection, an undecodable event, an object of the wrong
//! type).
//!
//! The events and the stream live in apimachinery, as in Go, because the server
//! (stage 5) builds the same ones; this crate only fixes the error type, so code
//! that names `stage3_reflector::Watch<Pod>` reads as it always did.

pub use apimachinery::watch::{
    Bookmark, EventType, INITIAL_EVENTS_ANNOTATION_KEY, WatchEvent, WatchStopper,
};

use crate::error::Error;

/// A watch as the Reflector reads it: apimachinery's [`Watch`](apimachinery::watch::Watch)
/// whose stream errors are this crate's [`Error`].
pub type Watch<T> = apimachinery::watch::Watch<T, Error>;

/// One item of a [`Watch`]: an event, or the error that ended the stream.
pub type WatchItem<T> = apimachinery::watch::WatchItem<T, Error>;
