//! Mirrors the parts of kubernetes' `pkg/apis/discovery/validation`
//! `validation.go` an EndpointSlice meets: `ValidateEndpointSliceCreate` and
//! `ValidateEndpointSliceUpdate`.

use apimachinery::util::validation::field::{ErrorList, FieldError};
use serde_json::Value;

use crate::apis::{immutable, items, text};

const ADDRESS_TYPES: &[&str] = &["FQDN", "IPv4", "IPv6"];

/// Mirrors `ValidateEndpointSlice`: a known address type, addresses of that
/// type (one to a hundred per endpoint, at most a thousand endpoints), at most
/// a hundred ports with numbers in range.
pub fn validate_endpoint_slice(slice: &Value) -> ErrorList {
    let mut errors = ErrorList::new();
    let address_type = text(&slice["addressType"]);
    if address_type.is_empty() {
        errors.push(FieldError::required("addressType", ""));
    } else if !ADDRESS_TYPES.contains(&address_type) {
        errors.push(FieldError::not_supported(
            "addressType",
            address_type,
            ADDRESS_TYPES,
        ));
    }
    let endpoints = items(&slice["endpoints"]);
    if endpoints.len() > 1000 {
        errors.push(FieldError::invalid_number(
            "endpoints",
            endpoints.len(),
            "must have at most 1000 items",
        ));
    }
    for (i, endpoint) in endpoints.iter().enumerate() {
        let addresses = items(&endpoint["addresses"]);
        if addresses.is_empty() || addresses.len() > 100 {
            errors.push(FieldError::invalid_number(
                &format!("endpoints[{i}].addresses"),
                addresses.len(),
                "must have at least 1 address and at most 100",
            ));
        }
        for (j, address) in addresses.iter().enumerate() {
            let address = text(address);
            let fits = match address_type {
                "IPv4" => address.parse::<std::net::Ipv4Addr>().is_ok(),
                "IPv6" => address.parse::<std::net::Ipv6Addr>().is_ok(),
                _ => true,
            };
            if !fits {
                errors.push(FieldError::invalid(
                    &format!("endpoints[{i}].addresses[{j}]"),
                    address,
                    format!("must be a valid {address_type} address"),
                ));
            }
        }
    }
    let ports = items(&slice["ports"]);
    if ports.len() > 100 {
        errors.push(FieldError::invalid_number(
            "ports",
            ports.len(),
            "must have at most 100 items",
        ));
    }
    for (i, port) in ports.iter().enumerate() {
        if let Some(number) = port["port"].as_i64()
            && !(1..=65535).contains(&number)
        {
            errors.push(FieldError::invalid_number(
                &format!("ports[{i}].port"),
                number,
                "must be between 1 and 65535, inclusive",
            ));
        }
    }
    errors
}

/// Mirrors `ValidateEndpointSliceUpdate`: the address type is fixed.
pub fn validate_endpoint_slice_update(new: &Value, old: &Value) -> ErrorList {
    let mut errors = validate_endpoint_slice(new);
    errors.extend(immutable(
        &new["addressType"],
        &old["addressType"],
        "addressType",
    ));
    errors
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn addresses_follow_the_address_type() {
        let slice = json!({"addressType": "IPv4", "endpoints": [
            {"addresses": ["10.0.0.1"]}, {"addresses": ["fe80::1"]}],
            "ports": [{"port": 80}]});
        let errors = validate_endpoint_slice(&slice);
        assert_eq!(errors.len(), 1);
        assert_eq!(errors[0].field, "endpoints[1].addresses[0]");
        let mut v6 = slice.clone();
        v6["addressType"] = json!("IPv6");
        assert!(
            validate_endpoint_slice_update(&v6, &slice)
                .iter()
                .any(
                    |e| e.field == "addressType" && e.detail == "field is immutable"
                )
        );
    }
}
