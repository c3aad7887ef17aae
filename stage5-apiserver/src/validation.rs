//! Object metadata on create: mirrors apimachinery's `ValidateObjectMeta` (names
//! must be RFC 1123 subdomains), `names.SimpleNameGenerator` (`generateName`) and
//! `rest.FillObjectMetaSystemFields` (uid and creationTimestamp).

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use rand::RngExt as _;

/// Mirrors `validation.DNS1123SubdomainMaxLength`.
pub const DNS1123_SUBDOMAIN_MAX_LENGTH: usize = 253;

/// Mirrors `validation.IsDNS1123Subdomain`: why `name` is not a lowercase RFC 1123
/// subdomain, or `None` when it is.
pub fn dns1123_subdomain_error(name: &str) -> Option<String> {
    if name.len() > DNS1123_SUBDOMAIN_MAX_LENGTH {
        return Some(format!(
            "must be no more than {DNS1123_SUBDOMAIN_MAX_LENGTH} characters"
        ));
    }
    let label_ok = |label: &str| {
        let bytes = label.as_bytes();
        !bytes.is_empty()
            && bytes[0].is_ascii_alphanumeric()
            && bytes[bytes.len() - 1].is_ascii_alphanumeric()
            && bytes
                .iter()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || *b == b'-')
    };
    if name.split('.').all(label_ok) {
        None
    } else {
        Some(
            "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com')"
                .to_string(),
        )
    }
}

/// Mirrors `names.SimpleNameGenerator.GenerateName`: the base (cut to leave room)
/// and five random lowercase consonants and digits.
pub fn generate_name(base: &str) -> String {
    const ALPHABET: &[u8] = b"bcdfghjklmnpqrstvwxz2456789";
    const MAX_BASE: usize = 63 - 5;
    let base: String = base.chars().take(MAX_BASE).collect();
    let mut rng = rand::rng();
    let suffix: String = (0..5)
        .map(|_| char::from(ALPHABET[rng.random_range(0..ALPHABET.len())]))
        .collect();
    format!("{base}{suffix}")
}

/// A random (version 4) UUID, as `uuid.NewUUID` gives `metadata.uid`.
pub fn new_uid() -> String {
    let mut bytes: [u8; 16] = rand::rng().random();
    bytes[6] = (bytes[6] & 0x0f) | 0x40;
    bytes[8] = (bytes[8] & 0x3f) | 0x80;
    let hex: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
    format!(
        "{}-{}-{}-{}-{}",
        &hex[0..8],
        &hex[8..12],
        &hex[12..16],
        &hex[16..20],
        &hex[20..32]
    )
}

/// Now, truncated to seconds as `metav1.Now()` serializes.
pub fn now() -> Time {
    let now = k8s_openapi::jiff::Timestamp::now();
    let secs =
        k8s_openapi::jiff::Timestamp::from_second(now.as_second()).unwrap_or(now);
    Time(secs)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn subdomains() {
        assert_eq!(dns1123_subdomain_error("web-0"), None);
        assert_eq!(dns1123_subdomain_error("a.b.c"), None);
        assert!(dns1123_subdomain_error("Web").is_some());
        assert!(dns1123_subdomain_error("-a").is_some());
        assert!(dns1123_subdomain_error("a..b").is_some());
        assert!(dns1123_subdomain_error("").is_some());
        assert!(dns1123_subdomain_error(&"a".repeat(254)).is_some());
        assert!(dns1123_subdomain_error("a_b").is_some());
    }

    #[test]
    fn generated_names_and_uids() {
        let name = generate_name("web-");
        assert!(name.starts_with("web-") && name.len() == 9, "{name}");
        assert_eq!(dns1123_subdomain_error(&name), None);
        let uid = new_uid();
        assert_eq!(uid.len(), 36);
        assert_ne!(uid, new_uid());
    }
}
