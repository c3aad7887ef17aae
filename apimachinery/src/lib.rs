//! # The ground floor: k8s.io/apimachinery
//!
//! Both sides of the watch speak the same vocabulary: a client's informer
//! (stages 1 to 4) and the server (stage 5). In Kubernetes both sides import
//! `k8s.io/apimachinery`; here both stand on this crate, which every stage may
//! use. Each module sits at its Go package's path and is named after its file.
//!
//! | Go (k8s.io/apimachinery)                                  | Rust                          |
//! |-----------------------------------------------------------|-------------------------------|
//! | `pkg/labels/selector.go` (`Parse`, `Lexer`, `Parser`)     | [`labels::parse_label_selector`] |
//! | `labels.Selector.Matches`                                 | [`labels::matches_labels`]    |
//! | `pkg/fields/selector.go` (`ParseSelector`, `RequiresExactMatch`) | [`fields::FieldSelector`] |
//! | `pkg/fields/fields.go` (`Set`)                            | [`fields::Fields`]            |
//! | `pkg/watch/watch.go` (`Event`, `EventType`, `Interface`)  | [`watch::WatchEvent`], [`watch::EventType`], [`watch::Watch`] |
//! | `pkg/apis/meta/v1/types.go` (`ListOptions`, `ResourceVersionMatch`) | [`apis::meta::v1::ListOptions`], [`apis::meta::v1::WatchOptions`], [`apis::meta::v1::ResourceVersionMatch`] |
//! | `pkg/api/errors/errors.go` (`IsResourceExpired`, `IsTooManyRequests`, `APIStatus`, ...) | [`api::errors`] |
//! | `pkg/util/validation` (`IsDNS1123Label`, `IsQualifiedName`, ...), `pkg/api/validate/content` | [`util::validation`] |
//! | `pkg/util/validation/field` (`field.Error`, `ErrorList`) | [`util::validation::field`] |
//! | `pkg/api/validation/objectmeta.go` (`ValidateObjectMeta`, `NameIsDNSSubdomain`, ...) | [`api::validation::objectmeta`] |
//! | `pkg/util/duration/duration.go` (`HumanDuration`)       | [`util::duration::human_duration`] |
//! | `pkg/util/strategicpatch/patch.go` (`StrategicMergeMapPatch`), `meta.go` and `k8s.io/api`'s patch tags | [`util::strategicpatch`] |
//! | `pkg/util/managedfields/internal` (`DecodeManagedFields`, `capManagers`, `stripMeta`) | [`util::managedfields::internal`] |
//! | `pkg/util/managedfields/typeconverter.go` over the served kinds' OpenAPI | [`util::managedfields::typeconverter`] |
//! | `pkg/runtime/serializer/protobuf` (`Serializer.Decode`), `k8s.io/api`'s `generated.pb.go` | [`runtime::serializer::protobuf`] |
//! | `pkg/runtime/serializer/streaming`, `metav1.WatchEvent` (a watch on the wire) | [`runtime::serializer::streaming`] |

pub mod fields;
pub mod labels;
pub mod watch;

/// `pkg/api`: what is asked of API errors, and the rules of object metadata.
pub mod api {
    pub mod errors;
    /// `pkg/api/resource`: quantities (a pod's requests, a node's capacity).
    pub mod resource {
        pub mod quantity;

        pub use quantity::{Quantity, QuantityError, parse_quantity};
    }
    /// `pkg/api/validation`.
    pub mod validation {
        pub mod objectmeta;
    }
}

/// `pkg/util`: helpers both sides use.
pub mod util {
    pub mod duration;
    pub mod validation;
    /// `pkg/util/managedfields`: `metadata.managedFields`, over
    /// structured-merge-diff.
    pub mod managedfields {
        pub mod internal;
        pub mod typeconverter;
    }
    /// `pkg/util/strategicpatch`: strategic merge patch.
    pub mod strategicpatch {
        pub mod meta;
        pub mod patch;

        pub use meta::StructMeta;
        pub use patch::{MergeError, strategic_merge_patch};
    }
}

/// `pkg/runtime`: encoding objects.
pub mod runtime {
    pub mod interfaces;
    pub use interfaces::{CacheableObject, Identifier, cache_encode};

    /// `pkg/runtime/serializer`.
    pub mod serializer {
        pub mod protobuf;
        pub mod streaming;
    }
}

/// `pkg/apis`: the API types apimachinery defines itself.
pub mod apis {
    /// `pkg/apis/meta`.
    pub mod meta {
        /// `pkg/apis/meta/v1`.
        pub mod v1 {
            pub mod time;
            mod types;

            pub use time::{now, now_micro};
            pub use types::{ListOptions, ResourceVersionMatch, WatchOptions};
        }
    }
}

pub use fields::{
    FieldOp, FieldRequirement, FieldSelector, FieldSelectorError, Fields,
    field_value,
};
pub use labels::*;
