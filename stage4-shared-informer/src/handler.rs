//! What an informer tells you, and how you listen.
//!
//! Mirrors client-go's `ResourceEventHandler`, `ResourceEventHandlerFuncs` and
//! `FilteringResourceEventHandler` (tools/cache/controller.go), and the notification
//! types of shared_informer.go (`addNotification`, `updateNotification`,
//! `deleteNotification`).

use std::sync::Arc;

use stage2_deltafifo::DeletedFinalStateUnknown;

// ANCHOR: deleted_object
/// The object a delete notification carries: the last state seen, or a tombstone
/// when the deletion was inferred from a relist (client-go passes
/// `DeletedFinalStateUnknown` through the same `interface{}`).
#[derive(Debug)]
pub enum DeletedObject<K> {
    /// The final state of the object, as the watch reported it.
    Object(Arc<K>),
    /// The deletion was missed while the watch was down; `obj` is the last state
    /// this client saw.
    Tombstone(DeletedFinalStateUnknown<K>),
}
// ANCHOR_END: deleted_object

impl<K> Clone for DeletedObject<K> {
    fn clone(&self) -> Self {
        match self {
            Self::Object(obj) => Self::Object(Arc::clone(obj)),
            Self::Tombstone(t) => Self::Tombstone(t.clone()),
        }
    }
}

impl<K> DeletedObject<K> {
    /// The object, or the tombstone's last known state.
    pub fn object(&self) -> Option<&Arc<K>> {
        match self {
            Self::Object(obj) => Some(obj),
            Self::Tombstone(t) => t.obj.as_ref(),
        }
    }
}

// ANCHOR: notification
/// Mirrors shared_informer.go's `addNotification`, `updateNotification` and
/// `deleteNotification`: what the processor hands each listener. Cloning is cheap:
/// objects are shared `Arc`s.
#[derive(Debug)]
pub enum Notification<K> {
    /// An object appeared (or was in the initial list).
    Add {
        /// The object.
        new: Arc<K>,
        /// Whether it came from the informer's first list (or a late handler's
        /// replay).
        is_in_initial_list: bool,
    },
    /// An object changed, or was resynced (then `old` and `new` have the same
    /// resourceVersion).
    Update {
        /// The state in the cache before.
        old: Arc<K>,
        /// The state now.
        new: Arc<K>,
    },
    /// An object went away.
    Delete {
        /// Its last state, or a tombstone.
        old: DeletedObject<K>,
    },
}
// ANCHOR_END: notification

impl<K> Clone for Notification<K> {
    fn clone(&self) -> Self {
        match self {
            Self::Add {
                new,
                is_in_initial_list,
            } => Self::Add {
                new: Arc::clone(new),
                is_in_initial_list: *is_in_initial_list,
            },
            Self::Update { old, new } => Self::Update {
                old: Arc::clone(old),
                new: Arc::clone(new),
            },
            Self::Delete { old } => Self::Delete { old: old.clone() },
        }
    }
}

// ANCHOR: handler_trait
/// Mirrors client-go's `ResourceEventHandler`: the three callbacks a handler
/// implements. Every method has an empty default, like a `ResourceEventHandlerFuncs`
/// with nil fields.
///
/// A listener calls its handler serially, from one task: a handler never runs
/// concurrently with itself. Handlers run on the tokio runtime and should return
/// quickly; hand slow work to a queue (client-go's workqueue pattern) or
/// `spawn_blocking`. Do not mutate the objects: they are the informer's cache.
pub trait ResourceEventHandler<K>: Send + Sync + 'static {
    /// An object was added. `is_in_initial_list` is true for the objects of the
    /// first list.
    fn on_add(&self, obj: &Arc<K>, is_in_initial_list: bool) {
        let _ = (obj, is_in_initial_list);
    }
    /// An object was updated, or resynced (same resourceVersion on both sides).
    fn on_update(&self, old: &Arc<K>, new: &Arc<K>) {
        let _ = (old, new);
    }
    /// An object was deleted; it may be a tombstone.
    fn on_delete(&self, obj: &DeletedObject<K>) {
        let _ = obj;
    }
}
// ANCHOR_END: handler_trait

// ANCHOR: arc_impl
/// A shared handler is a handler: register an `Arc` and keep a clone to inspect it.
impl<K, H> ResourceEventHandler<K> for Arc<H>
where
    K: 'static,
    H: ResourceEventHandler<K> + ?Sized,
{
    fn on_add(&self, obj: &Arc<K>, is_in_initial_list: bool) {
        (**self).on_add(obj, is_in_initial_list);
    }
    fn on_update(&self, old: &Arc<K>, new: &Arc<K>) {
        (**self).on_update(old, new);
    }
    fn on_delete(&self, obj: &DeletedObject<K>) {
        (**self).on_delete(obj);
    }
}
// ANCHOR_END: arc_impl

/// Calls the handler method that matches `notification`.
pub(crate) fn dispatch<K: 'static>(
    handler: &dyn ResourceEventHandler<K>,
    notification: &Notification<K>,
) {
    match notification {
        Notification::Add {
            new,
            is_in_initial_list,
        } => handler.on_add(new, *is_in_initial_list),
        Notification::Update { old, new } => handler.on_update(old, new),
        Notification::Delete { old } => handler.on_delete(old),
    }
}

type AddFn<K> = Box<dyn Fn(&Arc<K>, bool) + Send + Sync>;
type UpdateFn<K> = Box<dyn Fn(&Arc<K>, &Arc<K>) + Send + Sync>;
type DeleteFn<K> = Box<dyn Fn(&DeletedObject<K>) + Send + Sync>;

/// Mirrors client-go's `ResourceEventHandlerFuncs`: a handler made of closures; a
/// missing closure ignores its notification.
///
/// ```
/// # use k8s_openapi::api::core::v1::Pod;
/// use stage4_shared_informer::ResourceEventHandlerFuncs;
/// let handler = ResourceEventHandlerFuncs::<Pod>::new()
///     .add_func(|pod, _initial| println!("added {:?}", pod.metadata.name))
///     .delete_func(|pod| println!("deleted {:?}", pod.object().map(|p| &p.metadata.name)));
/// ```
pub struct ResourceEventHandlerFuncs<K> {
    add: Option<AddFn<K>>,
    update: Option<UpdateFn<K>>,
    delete: Option<DeleteFn<K>>,
}

impl<K> Default for ResourceEventHandlerFuncs<K> {
    fn default() -> Self {
        Self {
            add: None,
            update: None,
            delete: None,
        }
    }
}

impl<K> ResourceEventHandlerFuncs<K> {
    /// A handler that ignores everything until closures are set.
    pub fn new() -> Self {
        Self::default()
    }

    /// Sets the add closure (client-go's `AddFunc`).
    #[must_use]
    pub fn add_func(
        mut self,
        f: impl Fn(&Arc<K>, bool) + Send + Sync + 'static,
    ) -> Self {
        self.add = Some(Box::new(f));
        self
    }

    /// Sets the update closure (client-go's `UpdateFunc`).
    #[must_use]
    pub fn update_func(
        mut self,
        f: impl Fn(&Arc<K>, &Arc<K>) + Send + Sync + 'static,
    ) -> Self {
        self.update = Some(Box::new(f));
        self
    }

    /// Sets the delete closure (client-go's `DeleteFunc`).
    #[must_use]
    pub fn delete_func(
        mut self,
        f: impl Fn(&DeletedObject<K>) + Send + Sync + 'static,
    ) -> Self {
        self.delete = Some(Box::new(f));
        self
    }
}

impl<K: Send + Sync + 'static> ResourceEventHandler<K>
    for ResourceEventHandlerFuncs<K>
{
    fn on_add(&self, obj: &Arc<K>, is_in_initial_list: bool) {
        if let Some(f) = &self.add {
            f(obj, is_in_initial_list);
        }
    }
    fn on_update(&self, old: &Arc<K>, new: &Arc<K>) {
        if let Some(f) = &self.update {
            f(old, new);
        }
    }
    fn on_delete(&self, obj: &DeletedObject<K>) {
        if let Some(f) = &self.delete {
            f(obj);
        }
    }
}

// ANCHOR: filtering
/// Mirrors client-go's `FilteringResourceEventHandler`: passes on only objects that
/// match the filter, turning an update that crosses the filter into an add or a
/// delete.
pub struct FilteringResourceEventHandler<K, H> {
    filter: Box<dyn Fn(&K) -> bool + Send + Sync>,
    handler: H,
}

impl<K, H> FilteringResourceEventHandler<K, H> {
    /// Wraps `handler` behind `filter`.
    pub fn new(
        filter: impl Fn(&K) -> bool + Send + Sync + 'static,
        handler: H,
    ) -> Self {
        Self {
            filter: Box::new(filter),
            handler,
        }
    }
}

impl<K, H> ResourceEventHandler<K> for FilteringResourceEventHandler<K, H>
where
    K: Send + Sync + 'static,
    H: ResourceEventHandler<K>,
{
    fn on_add(&self, obj: &Arc<K>, is_in_initial_list: bool) {
        if (self.filter)(obj) {
            self.handler.on_add(obj, is_in_initial_list);
        }
    }

    fn on_update(&self, old: &Arc<K>, new: &Arc<K>) {
        // ANCHOR: ex4-filter-update
        match ((self.filter)(old), (self.filter)(new)) {
            (true, true) => self.handler.on_update(old, new),
            (false, true) => self.handler.on_add(new, false),
            (true, false) => self
                .handler
                .on_delete(&DeletedObject::Object(Arc::clone(old))),
            (false, false) => {}
        }
        // ANCHOR_END: ex4-filter-update
    }

    fn on_delete(&self, obj: &DeletedObject<K>) {
        if obj.object().is_some_and(|o| (self.filter)(o)) {
            self.handler.on_delete(obj);
        }
    }
}
// ANCHOR_END: filtering
