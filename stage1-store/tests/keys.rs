//! Key functions: client-go's MetaNamespaceKeyFunc and SplitMetaNamespaceKey cases.

mod common;

use common::pod;
use k8s_openapi::api::core::v1::{Namespace, Pod};

use stage1_store::{meta_namespace_key_func, split_meta_namespace_key};

mod ex1_namespace_key {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn namespaced_object_is_namespace_slash_name() {
        assert_eq!(
            meta_namespace_key_func(&*pod("default", "web-0")).unwrap(),
            "default/web-0"
        );
    }

    #[test]
    fn cluster_scoped_object_is_just_its_name() {
        let ns = Namespace {
            metadata: k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta {
                name: Some("kube-system".into()),
                ..Default::default()
            },
            ..Default::default()
        };
        assert_eq!(meta_namespace_key_func(&ns).unwrap(), "kube-system");
        assert_eq!(meta_namespace_key_func(&*pod("", "p")).unwrap(), "p");
    }

    #[test]
    fn object_without_a_name_is_a_key_error_that_describes_it() {
        let nameless = Pod {
            metadata: k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta {
                namespace: Some("team-a".into()),
                ..Default::default()
            },
            ..Default::default()
        };
        let err = meta_namespace_key_func(&nameless).unwrap_err();
        assert_eq!(err.object, r#"Pod in namespace "team-a""#);
        assert_eq!(
            err.to_string(),
            r#"couldn't create key for object Pod in namespace "team-a": object has no name"#
        );
    }
}

mod ex1_split_key {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn name_only() {
        assert_eq!(split_meta_namespace_key("a").unwrap(), ("", "a"));
    }

    #[test]
    fn namespace_and_name() {
        assert_eq!(split_meta_namespace_key("ns/a").unwrap(), ("ns", "a"));
    }

    #[test]
    fn empty_parts_are_kept_as_client_go_does() {
        assert_eq!(split_meta_namespace_key("").unwrap(), ("", ""));
        assert_eq!(split_meta_namespace_key("/a").unwrap(), ("", "a"));
    }

    #[test]
    fn three_parts_are_an_error_naming_the_key() {
        let err = split_meta_namespace_key("a/b/c").unwrap_err();
        assert_eq!(err.key, "a/b/c");
        assert!(err.to_string().contains(r#""a/b/c""#), "{err}");
        assert!(split_meta_namespace_key("a//").is_err());
    }
}
