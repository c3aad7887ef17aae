//! Mirrors the parts of kubernetes' `pkg/apis/certificates/validation`
//! `validation.go` a CertificateSigningRequest meets:
//! `ValidateCertificateSigningRequestCreate`, and the condition rules of its
//! status and approval updates (`validateConditions`).

use apimachinery::util::validation::field::{ErrorList, FieldError};
use base64::Engine as _;
use serde_json::Value;

use crate::apis::{items, text};

/// Mirrors `validateCertificateSigningRequest`'s spec: a signer name, a
/// request that is a PEM `CERTIFICATE REQUEST` block (its bytes arrive base64
/// encoded), and an expiry of at least ten minutes.
pub fn validate_certificate_signing_request(csr: &Value) -> ErrorList {
    let mut errors = ErrorList::new();
    let spec = &csr["spec"];
    if text(&spec["signerName"]).is_empty() {
        errors.push(FieldError::required("spec.signerName", ""));
    }
    let request = base64::engine::general_purpose::STANDARD
        .decode(text(&spec["request"]))
        .unwrap_or_default();
    let pem = String::from_utf8_lossy(&request);
    if !pem.contains("-----BEGIN CERTIFICATE REQUEST-----") {
        errors.push(FieldError::invalid(
            "spec.request",
            &format!("{} bytes", request.len()),
            "PEM block type must be CERTIFICATE REQUEST",
        ));
    }
    if let Some(seconds) = spec["expirationSeconds"].as_i64()
        && seconds < 600
    {
        errors.push(FieldError::invalid_number(
            "spec.expirationSeconds",
            seconds,
            "may not specify a duration less than 600 seconds (10 minutes)",
        ));
    }
    errors.extend(validate_conditions(csr));
    errors
}

/// Mirrors `validateConditions`: a status for each, `Approved`, `Denied` and
/// `Failed` only ever `True`, each type at most once, and never both
/// approved and denied.
pub fn validate_conditions(csr: &Value) -> ErrorList {
    let mut errors = ErrorList::new();
    let mut seen: Vec<&str> = Vec::new();
    for (i, condition) in items(&csr["status"]["conditions"]).iter().enumerate() {
        let path = format!("status.conditions[{i}]");
        let kind = text(&condition["type"]);
        let status = text(&condition["status"]);
        if status.is_empty() {
            errors.push(FieldError::required(&format!("{path}.status"), ""));
        } else if matches!(kind, "Approved" | "Denied" | "Failed")
            && status != "True"
        {
            errors.push(FieldError::not_supported(
                &format!("{path}.status"),
                status,
                &["True"],
            ));
        }
        if seen.contains(&kind) {
            errors.push(FieldError::duplicate(&format!("{path}.type"), kind));
        }
        seen.push(kind);
    }
    if seen.contains(&"Approved") && seen.contains(&"Denied") {
        errors.push(FieldError::invalid(
            "status.conditions",
            "",
            "Approved and Denied conditions are mutually exclusive",
        ));
    }
    errors
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_request_is_a_pem_csr_and_approval_excludes_denial() {
        let pem = "-----BEGIN CERTIFICATE REQUEST-----\nMIIB\n-----END CERTIFICATE REQUEST-----\n";
        let request = base64::engine::general_purpose::STANDARD.encode(pem);
        let mut csr = json!({"spec": {"request": request,
            "signerName": "kubernetes.io/kube-apiserver-client"}});
        assert!(validate_certificate_signing_request(&csr).is_empty());
        csr["status"] = json!({"conditions": [
            {"type": "Approved", "status": "True"},
            {"type": "Denied", "status": "True"}]});
        assert_eq!(
            validate_conditions(&csr)[0].detail,
            "Approved and Denied conditions are mutually exclusive"
        );
        let bad = json!({"spec": {"request": "bm9wZQ=="}});
        let fields: Vec<String> = validate_certificate_signing_request(&bad)
            .into_iter()
            .map(|e| e.field)
            .collect();
        assert_eq!(fields, ["spec.signerName", "spec.request"]);
    }
}
