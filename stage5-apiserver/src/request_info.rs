//! Mirrors apiserver's `pkg/endpoints/request/requestinfo.go`
//! (`RequestInfoFactory.NewRequestInfo`): what an `/api` or `/apis` path asks for.
//!
//! ```text
//! /api                                          APIVersions
//! /api/v1                                       APIResourceList of the core group
//! /apis                                         APIGroupList
//! /apis/apps  /apis/apps/v1                     APIGroup, APIResourceList
//! /api/v1/pods                                  collection across namespaces (or cluster-scoped)
//! /api/v1/namespaces/default/pods[/web-0]       namespaced collection [object]
//! /api/v1/nodes/n1   /api/v1/namespaces/default namespace-less object
//! /api/v1/watch/...                             the legacy watch prefix
//! ```

/// What an API path names.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ApiPath {
    /// `/api`: the core group's versions.
    CoreVersions,
    /// `/apis`: every group.
    Groups,
    /// `/apis/{group}`: one group.
    Group(String),
    /// `/api/v1` or `/apis/{group}/{version}`: the resources of a group version.
    Resources {
        /// `""` for the core group.
        group: String,
        /// The version.
        version: String,
    },
    /// A collection or an object.
    Resource(ResourceRequest),
}

/// Mirrors the resource part of `request.RequestInfo`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ResourceRequest {
    /// `""` for the core group.
    pub group: String,
    /// The version.
    pub version: String,
    /// The namespace from the URL, if any.
    pub namespace: Option<String>,
    /// The plural resource name.
    pub resource: String,
    /// The object's name, for object paths.
    pub name: Option<String>,
    /// A subresource (`status`, `log`, …); this server serves none.
    pub subresource: Option<String>,
    /// The path started with the legacy `watch/` segment.
    pub legacy_watch: bool,
}

/// Parses a path starting with `/api` or `/apis`; `None` when it names nothing this
/// server knows the shape of (answered with 404).
pub fn parse(path: &str) -> Option<ApiPath> {
    let segments: Vec<&str> = path.trim_matches('/').split('/').collect();
    if segments.iter().any(|s| s.is_empty()) {
        return None;
    }
    let (group, version, rest) = match segments.as_slice() {
        ["api"] => return Some(ApiPath::CoreVersions),
        ["apis"] => return Some(ApiPath::Groups),
        ["apis", group] => return Some(ApiPath::Group((*group).to_string())),
        ["api", version] => {
            return Some(ApiPath::Resources {
                group: String::new(),
                version: (*version).to_string(),
            });
        }
        ["apis", group, version] => {
            return Some(ApiPath::Resources {
                group: (*group).to_string(),
                version: (*version).to_string(),
            });
        }
        ["api", version, rest @ ..] => ("", *version, rest),
        ["apis", group, version, rest @ ..] => (*group, *version, rest),
        _ => return None,
    };
    let (legacy_watch, rest) = match rest {
        ["watch", rest @ ..] if !rest.is_empty() => (true, rest),
        other => (false, other),
    };
    // `namespaceSubresources`: a namespace's own `status` and `finalize`
    // name no resource inside it.
    let (namespace, parts) = match rest {
        ["namespaces", _, "status" | "finalize"] => (None, rest),
        ["namespaces", ns, parts @ ..] if !parts.is_empty() => {
            (Some((*ns).to_string()), parts)
        }
        other => (None, other),
    };
    let (resource, name, subresource) = match parts {
        [resource] => (*resource, None, None),
        [resource, name] => (*resource, Some((*name).to_string()), None),
        [resource, name, sub] => (
            *resource,
            Some((*name).to_string()),
            Some((*sub).to_string()),
        ),
        _ => return None,
    };
    Some(ApiPath::Resource(ResourceRequest {
        group: group.to_string(),
        version: version.to_string(),
        namespace,
        resource: resource.to_string(),
        name,
        subresource,
        legacy_watch,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn resource(path: &str) -> ResourceRequest {
        match parse(path) {
            Some(ApiPath::Resource(r)) => r,
            other => panic!("{path}: {other:?}"),
        }
    }

    #[test]
    fn discovery_paths() {
        assert_eq!(parse("/api"), Some(ApiPath::CoreVersions));
        assert_eq!(parse("/apis"), Some(ApiPath::Groups));
        assert_eq!(parse("/apis/apps"), Some(ApiPath::Group("apps".into())));
        assert_eq!(
            parse("/apis/apps/v1"),
            Some(ApiPath::Resources {
                group: "apps".into(),
                version: "v1".into()
            })
        );
        assert_eq!(parse("/api//v1"), None);
    }

    #[test]
    fn namespaced_cluster_scoped_and_namespace_objects() {
        let r = resource("/api/v1/namespaces/default/pods/web-0");
        assert_eq!(r.namespace.as_deref(), Some("default"));
        assert_eq!(
            (r.resource.as_str(), r.name.as_deref()),
            ("pods", Some("web-0"))
        );
        let r = resource("/api/v1/namespaces/default");
        assert_eq!(r.namespace, None);
        assert_eq!(
            (r.resource.as_str(), r.name.as_deref()),
            ("namespaces", Some("default"))
        );
        let r = resource("/api/v1/namespaces");
        assert_eq!((r.resource.as_str(), r.name), ("namespaces", None));
        let r = resource("/apis/apps/v1/namespaces/x/deployments");
        assert_eq!(
            (r.group.as_str(), r.namespace.as_deref()),
            ("apps", Some("x"))
        );
        let r = resource("/api/v1/watch/namespaces/x/pods");
        assert!(r.legacy_watch);
        let r = resource("/api/v1/namespaces/x/pods/a/status");
        assert_eq!(r.subresource.as_deref(), Some("status"));
        let r = resource("/api/v1/namespaces/x/finalize");
        assert_eq!(
            (
                r.resource.as_str(),
                r.name.as_deref(),
                r.subresource.as_deref()
            ),
            ("namespaces", Some("x"), Some("finalize"))
        );
        assert_eq!(r.namespace, None);
        assert_eq!(parse("/api/v1/namespaces/x/pods/a/b/c"), None);
    }
}
