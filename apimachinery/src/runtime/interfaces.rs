//! Mirrors the part of apimachinery's `pkg/runtime/interfaces.go` that lets an
//! object carry its own encodings: `CacheableObject` and the `Identifier` of an
//! encoding.
//!
//! The watch cache sends one object to many watchers and lists it to many
//! clients. Upstream wraps it in a `cachingObject` (apiserver's
//! `pkg/storage/cacher/caching_object.go`) that implements
//! `CacheableObject`: a serializer asks it for its encoding by the serializer's
//! identifier, the first asker encodes, every later one gets the same bytes.
//! The storage here keeps each object as JSON, so the JSON is the object; any
//! other encoding (protobuf, a Table row, the metadata alone) is asked for by
//! its identifier through [`cache_encode`].

use std::any::Any;
use std::sync::Arc;

use bytes::Bytes;

/// Mirrors `runtime.Identifier`: names one encoding of an object, e.g.
/// `protobuf` or `table-row`.
pub type Identifier = &'static str;

/// An encoding kept for an object: any type the encoder makes.
pub type Encoding = Arc<dyn Any + Send + Sync>;

/// Makes an encoding from the object's JSON, the first time it is asked for.
pub type EncodeFn<'a> = dyn FnMut(&[u8]) -> Result<Encoding, String> + 'a;

/// Mirrors `runtime.CacheableObject`: an object that remembers its encodings.
pub trait CacheableObject: Send + Sync + std::fmt::Debug {
    /// The object: its JSON, as the storage keeps it (`GetObject`).
    fn json(&self) -> Bytes;

    /// Mirrors `CacheEncode`: the encoding `id` of this object. The first call
    /// for an `id` runs `encode` and keeps what it returns; every later call
    /// gets the same value without encoding. An error is not kept. `encode`
    /// must not ask the same object for another encoding.
    fn cache_encode(
        &self,
        id: Identifier,
        encode: &mut EncodeFn<'_>,
    ) -> Result<Encoding, String>;
}

/// [`CacheableObject::cache_encode`] for an encoding of type `T`: `encode`
/// runs at most once per object and `id`, and the value is shared. An `id`
/// must always name the same type; a kept value of another type is an error.
pub fn cache_encode<T: Any + Send + Sync>(
    object: &dyn CacheableObject,
    id: Identifier,
    encode: impl FnOnce(&[u8]) -> Result<T, String>,
) -> Result<Arc<T>, String> {
    let mut encode = Some(encode);
    let kept = object.cache_encode(id, &mut |json| {
        let encode = encode
            .take()
            .ok_or_else(|| "an encoder ran twice".to_string())?;
        encode(json).map(|value| Arc::new(value) as Encoding)
    })?;
    kept.downcast::<T>()
        .map_err(|_| format!("the encoding {id:?} of an object has another type"))
}
