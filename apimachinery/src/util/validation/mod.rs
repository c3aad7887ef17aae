//! String checks: mirrors apimachinery's [`pkg/util/validation/validation.go`]
//! (`IsDNS1123Label`, `IsDNS1123Subdomain`, `IsQualifiedName`,
//! `IsValidLabelValue`, `MaxLenError`, `RegexError`, `EmptyError`) and
//! [`pkg/api/validate/content`], where Kubernetes 1.35 moved the label checks
//! (`IsLabelKey`, `IsLabelValue`, `IsPathSegmentName`; their length message says
//! "bytes", the name checks' still says "characters").
//!
//! Each check returns every rule the value breaks, as upstream's do, and an
//! empty list when the value is valid. The label selector parser
//! ([`crate::labels`]), the server's `ValidateObjectMeta`
//! ([`crate::api::validation::objectmeta`]) and the fan-out tool all call these:
//! there is one copy of each rule in the workspace.
//!
//! No regular expressions: each upstream pattern is a few byte checks, and the
//! pattern text is kept only because upstream quotes it in its messages. The
//! messages are upstream's, word for word.
//!
//! [`pkg/util/validation/validation.go`]: https://github.com/kubernetes/apimachinery/blob/v0.36.0/pkg/util/validation/validation.go
//! [`pkg/api/validate/content`]: https://github.com/kubernetes/apimachinery/blob/v0.36.0/pkg/api/validate/content/kube.go

pub mod field;

/// Mirrors `validation.DNS1123LabelMaxLength`.
pub const DNS1123_LABEL_MAX_LENGTH: usize = 63;
/// Mirrors `validation.DNS1123SubdomainMaxLength`.
pub const DNS1123_SUBDOMAIN_MAX_LENGTH: usize = 253;
/// Mirrors `content.labelKeyMaxLength`: the name part of a qualified name.
pub const QUALIFIED_NAME_MAX_LENGTH: usize = 63;
/// Mirrors `content.LabelValueMaxLength`.
pub const LABEL_VALUE_MAX_LENGTH: usize = 63;
/// Mirrors `validation.TotalAnnotationSizeLimitB`: keys plus values, in bytes.
pub const TOTAL_ANNOTATION_SIZE_LIMIT_B: usize = 256 * (1 << 10);

const DNS1123_LABEL_FMT: &str = "[a-z0-9]([-a-z0-9]*[a-z0-9])?";
const DNS1123_LABEL_ERR_MSG: &str = "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character";
const DNS1123_SUBDOMAIN_FMT: &str =
    "[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*";
const DNS1123_SUBDOMAIN_ERR_MSG: &str = "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character";
const LABEL_KEY_FMT: &str = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]";
const LABEL_KEY_ERR_MSG: &str = "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";
const LABEL_VALUE_FMT: &str = "(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?";
const LABEL_VALUE_ERR_MSG: &str = "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";

// ---------------------------------------------------------------------------------
// Messages
// ---------------------------------------------------------------------------------

/// Mirrors `validation.MaxLenError` (names and namespaces).
pub fn max_len_error(length: usize) -> String {
    format!("must be no more than {length} characters")
}

/// Mirrors `content.MaxLenError` (label keys and values, annotation keys).
pub fn content_max_len_error(length: usize) -> String {
    format!("must be no more than {length} bytes")
}

/// Mirrors `validation.RegexError`: the message, the examples and the pattern.
pub fn regex_error(msg: &str, pattern: &str, examples: &[&str]) -> String {
    if examples.is_empty() {
        return format!("{msg} (regex used for validation is '{pattern}')");
    }
    let mut text = format!("{msg} (e.g. ");
    for (i, example) in examples.iter().enumerate() {
        if i > 0 {
            text.push_str(" or ");
        }
        text.push_str(&format!("'{example}', "));
    }
    text.push_str(&format!("regex used for validation is '{pattern}')"));
    text
}

/// Mirrors `validation.EmptyError`.
pub fn empty_error() -> &'static str {
    "must be non-empty"
}

// ---------------------------------------------------------------------------------
// The patterns, by hand
// ---------------------------------------------------------------------------------

/// `[a-z0-9]([-a-z0-9]*[a-z0-9])?`, upstream's `dns1123LabelFmt`.
fn matches_dns1123_label(value: &str) -> bool {
    let bytes = value.as_bytes();
    let end_ok = |b: &u8| b.is_ascii_lowercase() || b.is_ascii_digit();
    match (bytes.first(), bytes.last()) {
        (Some(first), Some(last)) => {
            end_ok(first)
                && end_ok(last)
                && bytes.iter().all(|b| end_ok(b) || *b == b'-')
        }
        _ => false,
    }
}

/// `dns1123SubdomainFmt`: labels joined by dots.
fn matches_dns1123_subdomain(value: &str) -> bool {
    value.split('.').all(matches_dns1123_label)
}

/// `([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]`, upstream's `labelKeyFmt`.
fn matches_label_key(value: &str) -> bool {
    let bytes = value.as_bytes();
    match (bytes.first(), bytes.last()) {
        (Some(first), Some(last)) => {
            first.is_ascii_alphanumeric()
                && last.is_ascii_alphanumeric()
                && bytes.iter().all(|b| {
                    b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.')
                })
        }
        _ => false,
    }
}

// ---------------------------------------------------------------------------------
// String checks: each returns every rule the value breaks (none when valid)
// ---------------------------------------------------------------------------------

/// Mirrors `validation.IsDNS1123Label`.
pub fn is_dns1123_label(value: &str) -> Vec<String> {
    let mut errors = Vec::new();
    if value.len() > DNS1123_LABEL_MAX_LENGTH {
        errors.push(max_len_error(DNS1123_LABEL_MAX_LENGTH));
    }
    if !matches_dns1123_label(value) {
        if matches_dns1123_subdomain(value) {
            // A valid subdomain but not a label: the length is checked, so dots.
            errors.push("must not contain dots".to_string());
        } else {
            errors.push(regex_error(
                DNS1123_LABEL_ERR_MSG,
                DNS1123_LABEL_FMT,
                &["my-name", "123-abc"],
            ));
        }
    }
    errors
}

/// Mirrors `validation.IsDNS1035Label`: a DNS-1123 label that starts with a
/// letter (service names).
pub fn is_dns1035_label(value: &str) -> Vec<String> {
    let mut errors = Vec::new();
    if value.len() > DNS1123_LABEL_MAX_LENGTH {
        errors.push(max_len_error(DNS1123_LABEL_MAX_LENGTH));
    }
    let starts_with_letter =
        value.bytes().next().is_some_and(|b| b.is_ascii_lowercase());
    if !starts_with_letter || !matches_dns1123_label(value) {
        errors.push(regex_error(
            "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character",
            "[a-z]([-a-z0-9]*[a-z0-9])?",
            &["my-name", "abc-123"],
        ));
    }
    errors
}

fn dns1123_subdomain_errors(
    value: &str,
    too_long: fn(usize) -> String,
) -> Vec<String> {
    let mut errors = Vec::new();
    if value.len() > DNS1123_SUBDOMAIN_MAX_LENGTH {
        errors.push(too_long(DNS1123_SUBDOMAIN_MAX_LENGTH));
    }
    if !matches_dns1123_subdomain(value) {
        errors.push(regex_error(
            DNS1123_SUBDOMAIN_ERR_MSG,
            DNS1123_SUBDOMAIN_FMT,
            &["example.com"],
        ));
    }
    errors
}

/// Mirrors `validation.IsDNS1123Subdomain` (object names).
pub fn is_dns1123_subdomain(value: &str) -> Vec<String> {
    dns1123_subdomain_errors(value, max_len_error)
}

/// Mirrors `validation.IsQualifiedName` (`content.IsLabelKey`): an optional DNS
/// subdomain prefix and `/`, then a name of at most 63 bytes.
pub fn is_qualified_name(value: &str) -> Vec<String> {
    let mut errors = Vec::new();
    let parts: Vec<&str> = value.split('/').collect();
    let name = match parts.as_slice() {
        [name] => *name,
        [prefix, name] => {
            if prefix.is_empty() {
                errors.push(format!("prefix part {}", empty_error()));
            } else {
                errors.extend(
                    dns1123_subdomain_errors(prefix, content_max_len_error)
                        .into_iter()
                        .map(|msg| format!("prefix part {msg}")),
                );
            }
            *name
        }
        _ => {
            return vec![format!(
                "a valid label key {} with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')",
                regex_error(
                    LABEL_KEY_ERR_MSG,
                    LABEL_KEY_FMT,
                    &["MyName", "my.name", "123-abc"]
                )
            )];
        }
    };
    if name.is_empty() {
        errors.push(format!("name part {}", empty_error()));
    } else if name.len() > QUALIFIED_NAME_MAX_LENGTH {
        errors.push(format!(
            "name part {}",
            content_max_len_error(QUALIFIED_NAME_MAX_LENGTH)
        ));
    }
    if !matches_label_key(name) {
        errors.push(format!(
            "name part {}",
            regex_error(
                LABEL_KEY_ERR_MSG,
                LABEL_KEY_FMT,
                &["MyName", "my.name", "123-abc"]
            )
        ));
    }
    errors
}

/// Mirrors `validation.IsValidLabelValue` (`content.IsLabelValue`): empty, or a
/// qualified name part of at most 63 bytes.
pub fn is_valid_label_value(value: &str) -> Vec<String> {
    let mut errors = Vec::new();
    if value.len() > LABEL_VALUE_MAX_LENGTH {
        errors.push(content_max_len_error(LABEL_VALUE_MAX_LENGTH));
    }
    if !value.is_empty() && !matches_label_key(value) {
        errors.push(regex_error(
            LABEL_VALUE_ERR_MSG,
            LABEL_VALUE_FMT,
            &["MyValue", "my_value", "12345"],
        ));
    }
    errors
}

/// Mirrors `content.IsPathSegmentName`: what any name must be to sit in a URL path
/// and a storage key.
pub fn is_path_segment_name(name: &str) -> Vec<String> {
    if name == "." || name == ".." {
        return vec![format!("may not be '{name}'")];
    }
    is_path_segment_prefix(name)
}

/// Mirrors `content.IsPathSegmentPrefix`.
pub fn is_path_segment_prefix(name: &str) -> Vec<String> {
    ["/", "%"]
        .into_iter()
        .filter(|bad| name.contains(bad))
        .map(|bad| format!("may not contain '{bad}'"))
        .collect()
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    pub(crate) const LABEL_KEY_REGEX_MSG: &str = "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')";

    #[test]
    fn regex_errors_are_worded_as_upstream() {
        assert_eq!(
            regex_error("msg", "re", &[]),
            "msg (regex used for validation is 're')"
        );
        // Upstream's "', " then " or " leaves two spaces before every "or".
        assert_eq!(
            regex_error("msg", "re", &["a", "b"]),
            "msg (e.g. 'a',  or 'b', regex used for validation is 're')"
        );
    }

    #[test]
    fn dns1123_labels() {
        for ok in [
            "a",
            "ab",
            "abc",
            "a1",
            "a-1",
            "a--1--2--b",
            "0",
            "01",
            "1-0",
        ] {
            assert_eq!(is_dns1123_label(ok), Vec::<String>::new(), "{ok}");
        }
        assert!(is_dns1123_label(&"a".repeat(63)).is_empty());
        assert_eq!(is_dns1123_label(&"a".repeat(64)), [max_len_error(63)]);
        assert_eq!(
            is_dns1123_label("BAD_NS"),
            [
                "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')"
            ]
        );
        assert_eq!(is_dns1123_label("a.b"), ["must not contain dots"]);
        for bad in [
            "", "A", "ABC", "aBc", "A1", "-", "a-", "-a", "_", "a_", "a b",
        ] {
            assert_eq!(is_dns1123_label(bad).len(), 1, "{bad:?}");
        }
        // Too long and badly formed: both messages, length first.
        assert_eq!(is_dns1123_label(&format!("{}_", "a".repeat(63))).len(), 2);
    }

    #[test]
    fn dns1123_subdomains() {
        for ok in ["a", "a.b.c", "1.a", "a-1.b-2", "web-0"] {
            assert!(is_dns1123_subdomain(ok).is_empty(), "{ok}");
        }
        assert!(is_dns1123_subdomain(&"a".repeat(253)).is_empty());
        assert_eq!(is_dns1123_subdomain(&"a".repeat(254)), [max_len_error(253)]);
        assert_eq!(max_len_error(253), "must be no more than 253 characters");
        for bad in ["", "Web", "-a", "a..b", ".a", "a.", "a_b"] {
            assert_eq!(is_dns1123_subdomain(bad).len(), 1, "{bad:?}");
        }
        assert!(is_dns1123_subdomain("a_b")[0].ends_with(
            "(e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
        ));
    }

    /// Upstream's `TestIsLabelKey` cases.

    #[test]
    fn qualified_names() {
        let ok = [
            "simple",
            "now-with-dashes",
            "1-starts-with-num",
            "1234",
            "simple/simple",
            "now-with-dashes/simple",
            "now-with-dashes/now-with-dashes",
            "now.with.dots/simple",
            "now-with.dashes-and.dots/simple",
            "1-num.2-num/3-num",
            "1234/5678",
            "1.2.3.4/5678",
            "Uppercase_Is_OK_123",
            "example.com/Uppercase_Is_OK_123",
            "requests.storage-foo",
        ];
        for key in ok {
            assert!(is_qualified_name(key).is_empty(), "{key}");
        }
        assert!(is_qualified_name(&"a".repeat(63)).is_empty());
        let longest = format!("{}/{}", "a".repeat(253), "b".repeat(63));
        assert!(is_qualified_name(&longest).is_empty());
        let bad = [
            "nospecialchars%^=@",
            "cantendwithadash-",
            "-cantstartwithadash-",
            "only/one/slash",
            "Example.com/abc",
            "example_com/abc",
            "example.com/",
            "/simple",
        ];
        for key in bad {
            assert!(!is_qualified_name(key).is_empty(), "{key}");
        }
        assert_eq!(
            is_qualified_name("a b"),
            [format!("name part {LABEL_KEY_REGEX_MSG}")]
        );
        assert_eq!(
            is_qualified_name(&"a".repeat(64)),
            ["name part must be no more than 63 bytes"]
        );
        assert_eq!(
            is_qualified_name(&format!("{}/abc", "a".repeat(254))),
            ["prefix part must be no more than 253 bytes"]
        );
        // The prefix/name split: an empty side is its own message.
        assert_eq!(
            is_qualified_name("/simple"),
            ["prefix part must be non-empty"]
        );
        assert_eq!(
            is_qualified_name("example.com/"),
            [
                "name part must be non-empty".to_string(),
                format!("name part {LABEL_KEY_REGEX_MSG}")
            ]
        );
        assert_eq!(
            is_qualified_name("only/one/slash"),
            [format!(
                "a valid label key {LABEL_KEY_REGEX_MSG} with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"
            )]
        );
        assert!(is_qualified_name("Example.com/abc")[0].starts_with(
            "prefix part a lowercase RFC 1123 subdomain must consist of"
        ));
    }

    /// Upstream's `TestIsLabelValue` cases.

    #[test]
    fn label_values() {
        for ok in [
            "simple",
            "now-with-dashes",
            "1-starts-with-num",
            "end-with-num-1",
            "1234",
            "",
        ] {
            assert!(is_valid_label_value(ok).is_empty(), "{ok:?}");
        }
        assert!(is_valid_label_value(&"a".repeat(63)).is_empty());
        for bad in [
            "nospecialchars%^=@",
            "Tama-nui-te-rā.is.Māori.sun",
            "\\backslashes\\are\\bad",
            "-starts-with-dash",
            "ends-with-dash-",
            ".starts.with.dot",
            "ends.with.dot.",
        ] {
            assert_eq!(is_valid_label_value(bad).len(), 1, "{bad}");
        }
        assert_eq!(
            is_valid_label_value(&"a".repeat(64)),
            ["must be no more than 63 bytes"]
        );
        assert_eq!(
            is_valid_label_value("a b"),
            [
                "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"
            ]
        );
        // Bytes, not characters: 32 two-byte characters are 64 bytes.
        assert_eq!(is_valid_label_value(&"ā".repeat(32)).len(), 2);
    }
}
