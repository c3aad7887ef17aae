//! Field errors: mirrors apimachinery's [`pkg/util/validation/field/errors.go`]
//! (`field.Error`, `ErrorType`, `ErrorList`, `Error.ErrorBody`): what is wrong
//! with one field, worded as kube-apiserver words it in a `Status`'s causes.
//!
//! [`pkg/util/validation/field/errors.go`]: https://github.com/kubernetes/apimachinery/blob/v0.36.0/pkg/util/validation/field/errors.go

use std::fmt;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::StatusCause;

/// Go's `strconv.Quote` (`%q`), which upstream uses for names and bad values;
/// the one copy is structured-merge-diff's (its `value.ToString` quotes the same
/// way).
pub use structured_merge_diff::value::quote as go_quote;

/// Mirrors `field.ErrorType`: the kinds of field error this server reports.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ErrorType {
    /// `ErrorTypeRequired`.
    Required,
    /// `ErrorTypeForbidden`.
    Forbidden,
    /// `ErrorTypeInvalid`.
    Invalid,
    /// `ErrorTypeTooLong`.
    TooLong,
    /// `ErrorTypeNotSupported`: a value outside a fixed set.
    NotSupported,
    /// `ErrorTypeDuplicate`: a value that must be unique appears twice.
    Duplicate,
}

impl ErrorType {
    /// The cause's `reason` (`metav1.CauseType`), e.g. `FieldValueInvalid`.
    pub fn reason(self) -> &'static str {
        match self {
            ErrorType::Required => "FieldValueRequired",
            ErrorType::Forbidden => "FieldValueForbidden",
            ErrorType::Invalid => "FieldValueInvalid",
            ErrorType::TooLong => "FieldValueTooLong",
            ErrorType::NotSupported => "FieldValueNotSupported",
            ErrorType::Duplicate => "FieldValueDuplicate",
        }
    }

    /// Mirrors `ErrorType.String`, e.g. `Invalid value`.
    pub fn text(self) -> &'static str {
        match self {
            ErrorType::Required => "Required value",
            ErrorType::Forbidden => "Forbidden",
            ErrorType::Invalid => "Invalid value",
            ErrorType::TooLong => "Too long",
            ErrorType::NotSupported => "Unsupported value",
            ErrorType::Duplicate => "Duplicate value",
        }
    }
}

/// Mirrors `field.Error` for string values: what is wrong with one field.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FieldError {
    /// The kind of error.
    pub error_type: ErrorType,
    /// The field's path, e.g. `metadata.labels`.
    pub field: String,
    /// The bad value, quoted in the message of an `Invalid` error.
    pub bad_value: String,
    /// Whether the bad value is a Go string (`%q`, quoted) rather than a
    /// number or a boolean (`%v`, as it is).
    pub quoted: bool,
    /// Why, e.g. `must be no more than 63 bytes`.
    pub detail: String,
}

/// Mirrors `field.ErrorList`.
pub type ErrorList = Vec<FieldError>;

impl FieldError {
    /// Mirrors `field.Invalid`.
    pub fn invalid(field: &str, value: &str, detail: impl Into<String>) -> Self {
        FieldError {
            error_type: ErrorType::Invalid,
            field: field.to_string(),
            bad_value: value.to_string(),
            quoted: true,
            detail: detail.into(),
        }
    }

    /// Mirrors `field.Invalid` of a number or a boolean, printed as it is.
    pub fn invalid_number(
        field: &str,
        value: impl fmt::Display,
        detail: impl Into<String>,
    ) -> Self {
        FieldError {
            quoted: false,
            ..FieldError::invalid(field, &value.to_string(), detail)
        }
    }

    /// Mirrors `field.NotSupported`: the value and the supported ones, quoted
    /// and sorted as upstream lists them.
    pub fn not_supported(field: &str, value: &str, supported: &[&str]) -> Self {
        let mut valid: Vec<String> = supported.iter().map(|v| go_quote(v)).collect();
        valid.sort();
        FieldError {
            error_type: ErrorType::NotSupported,
            field: field.to_string(),
            bad_value: value.to_string(),
            quoted: true,
            detail: format!("supported values: {}", valid.join(", ")),
        }
    }

    /// Mirrors `field.Duplicate`.
    pub fn duplicate(field: &str, value: &str) -> Self {
        FieldError {
            error_type: ErrorType::Duplicate,
            field: field.to_string(),
            bad_value: value.to_string(),
            quoted: true,
            detail: String::new(),
        }
    }

    /// Mirrors `field.Required`.
    pub fn required(field: &str, detail: impl Into<String>) -> Self {
        FieldError {
            error_type: ErrorType::Required,
            field: field.to_string(),
            bad_value: String::new(),
            quoted: true,
            detail: detail.into(),
        }
    }

    /// Mirrors `field.Forbidden`.
    pub fn forbidden(field: &str, detail: impl Into<String>) -> Self {
        FieldError {
            error_type: ErrorType::Forbidden,
            field: field.to_string(),
            bad_value: String::new(),
            quoted: true,
            detail: detail.into(),
        }
    }

    /// Mirrors `field.TooLong`: the value is left out of the message.
    pub fn too_long(field: &str, max_length: usize) -> Self {
        let unit = if max_length == 1 { "byte" } else { "bytes" };
        FieldError {
            error_type: ErrorType::TooLong,
            field: field.to_string(),
            bad_value: String::new(),
            quoted: true,
            detail: format!("may not be more than {max_length} {unit}"),
        }
    }

    /// Mirrors `Error.ErrorBody`: the message without the field, which is a
    /// cause's `message` (`Invalid value: "a b": name part must …`).
    pub fn error_body(&self) -> String {
        let mut body = match self.error_type {
            ErrorType::Invalid | ErrorType::NotSupported | ErrorType::Duplicate => {
                let value = if self.quoted {
                    go_quote(&self.bad_value)
                } else {
                    self.bad_value.clone()
                };
                format!("{}: {value}", self.error_type.text())
            }
            other => other.text().to_string(),
        };
        if !self.detail.is_empty() {
            body.push_str(": ");
            body.push_str(&self.detail);
        }
        body
    }

    /// The `StatusCause` `apierrors.NewInvalid` makes of this error.
    pub fn to_cause(&self) -> StatusCause {
        StatusCause {
            reason: Some(self.error_type.reason().to_string()),
            message: Some(self.error_body()),
            field: Some(self.field.clone()),
        }
    }
}

impl fmt::Display for FieldError {
    /// Mirrors `Error.Error`: `<field>: <body>`, one entry of the Status message.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.field, self.error_body())
    }
}
