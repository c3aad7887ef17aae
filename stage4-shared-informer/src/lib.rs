//! # Stage 4: the shared informer
//!
//! One list-and-watch per type, one cache, and any number of handlers: what every
//! Kubernetes controller is built on. This crate mirrors client-go's
//! `tools/cache/controller.go`, `shared_informer.go` (with `sharedProcessor` and
//! `processorListener`), `informers/factory.go` and `listers.go`, as source
//! documents 003 and 004 describe them, on top of stage 1's indexer,
//! stage 2's queues and stage 3's Reflector.
//!
//! | client-go (Go) | here (Rust) |
//! |---|---|
//! | `Config`, `New`, `controller.Run`, `processLoop` | [`Config`], [`Controller::new`], [`Controller::run`] |
//! | `processDeltas` | [`process_deltas`] |
//! | `sharedIndexInformer`, `NewSharedIndexInformer` | [`SharedIndexInformer`], [`SharedIndexInformer::new`] |
//! | `AddEventHandler(WithResyncPeriod)`, `RemoveEventHandler` | [`SharedIndexInformer::add_event_handler`], …`_with_resync_period`, [`SharedIndexInformer::remove_event_handler`] |
//! | `ResourceEventHandlerRegistration`, its `HasSynced` | [`ResourceEventHandlerRegistration`], [`ResourceEventHandlerRegistration::has_synced`] |
//! | `HandleDeltas`, `OnAdd`/`OnUpdate`/`OnDelete` | private `handle_deltas`, the informer's `ResourceEventHandler` impl |
//! | `ResourceEventHandler`, `ResourceEventHandlerFuncs`, `FilteringResourceEventHandler` | [`ResourceEventHandler`], [`ResourceEventHandlerFuncs`], [`FilteringResourceEventHandler`] |
//! | `sharedProcessor`, `processorListener` | private `SharedProcessor`, `ProcessorListener` |
//! | `determineResyncPeriod`, `minimumResyncPeriod` | [`determine_resync_period`], [`MINIMUM_RESYNC_PERIOD`] |
//! | `sharedInformerFactory`, `InformerFor`, `Start`, `WaitForCacheSync`, `Shutdown` | [`SharedInformerFactory`] and its methods |
//! | `listers.go` (`ListAll`, `ListAllByNamespace`), generated listers | [`Lister`], [`NamespaceLister`] |
//! | `labels.Parse` (apimachinery, from the shared `apimachinery` crate) | [`parse_label_selector`] |
//! | (none: the informer's live page for the workshop) | [`debug_ui::InformerPage`] |
//!
//! ## One event, from the watch to two handlers
//!
//! ```text
//!  Reflector ─► queue (DeltaFIFO) ─► pop ─► handle_deltas ─┬─► indexer (update first)
//!                                                          │
//!  ┌───────────────────────────────────────────────────────┘
//!  └─► processor.distribute
//!        ├─► listener 1: add → pop task → ring → run task → handler 1
//!        └─► listener 2: add → pop task → ring → run task → handler 2
//! ```

#[doc(hidden)]
pub mod bench_support;
mod controller;
pub mod debug_ui;
mod factory;
mod handler;
mod listener;
mod listers;
mod processor;
mod shared_informer;

pub use apimachinery::labels::*;
pub use controller::{Config, Controller, InformerQueue, ProcessFn, process_deltas};
pub use factory::{
    FactoryInformer, FactoryResource, FakeSource, KubeSource, ListerWatcherSource,
    SharedInformerFactory, SharedInformerFactoryBuilder, TweakListOptions,
    TweakedListerWatcher, TypedInformer,
};
pub use handler::{
    DeletedObject, FilteringResourceEventHandler, Notification,
    ResourceEventHandler, ResourceEventHandlerFuncs,
};
pub use listener::{INITIAL_BUFFER_SIZE, PANIC_PAUSE};
pub use listers::*;
pub use processor::{ListenerStats, determine_resync_period};
pub use shared_informer::{
    InformerError, MINIMUM_RESYNC_PERIOD, QueueKind,
    ResourceEventHandlerRegistration, SharedIndexInformer,
};
