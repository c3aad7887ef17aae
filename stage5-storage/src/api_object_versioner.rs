//! apiserver's `pkg/storage/api_object_versioner.go`: resource versions are etcd
//! revisions, written as decimal strings.

use crate::errors::StorageError;

/// Parses a resource version as the apiserver's
/// `APIObjectVersioner.ParseResourceVersion` does: `""` is 0; otherwise a
/// non-negative integer, else 400 BadRequest.
pub fn parse_resource_version(rv: &str) -> Result<u64, StorageError> {
    if rv.is_empty() {
        return Ok(0);
    }
    rv.parse::<u64>().map_err(|_| {
        StorageError::BadRequest(format!(
            "invalid resource version {rv:?}: must be a non-negative integer"
        ))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resource_versions_parse_as_upstream() {
        assert!(parse_resource_version("abc").is_err());
        assert!(parse_resource_version("-1").is_err());
        assert_eq!(parse_resource_version("").unwrap(), 0);
        assert_eq!(parse_resource_version("42").unwrap(), 42);
    }
}
