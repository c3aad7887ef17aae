//! [`Quantity`]: a parsed Kubernetes quantity (`"100m"`, `"1.5"`, `"64Mi"`,
//! `"1G"`, `"2e3"`).
//!
//! Mirrors apimachinery's
//! [quantity.go](https://github.com/kubernetes/apimachinery/blob/v0.36.0/pkg/api/resource/quantity.go)
//! (`ParseQuantity`, `Quantity.Value`, `Quantity.MilliValue`) and
//! [suffix.go](https://github.com/kubernetes/apimachinery/blob/v0.36.0/pkg/api/resource/suffix.go)
//! (the suffixes). The grammar is upstream's:
//!
//! ```text
//! <quantity>     ::= <signedNumber><suffix>
//! <signedNumber> ::= <number> | +<number> | -<number>
//! <number>       ::= <digits> | <digits>.<digits> | <digits>. | .<digits>
//! <suffix>       ::= <binarySI> | <decimalExponent> | <decimalSI>
//! <binarySI>     ::= Ki | Mi | Gi | Ti | Pi | Ei
//! <decimalSI>    ::= n | u | m | "" | k | M | G | T | P | E
//! <decimalExponent> ::= "e" <signedNumber> | "E" <signedNumber>
//! ```
//!
//! A value is kept exactly, as `unscaled × 10^scale` (upstream's `int64Amount`
//! with an `i128` instead of an `int64`, so `"1.5Gi"` is exact). As upstream,
//! precision below a nano (`10⁻⁹`) is rounded up when parsing, and
//! [`Quantity::value`] and [`Quantity::milli_value`] round up, away from zero.
//!
//! Where this differs: a number that does not fit in an `i128` (more than 38
//! significant digits, or such a number times a binary suffix) is refused with
//! [`QuantityError::TooLarge`], where upstream falls back to `inf.Dec`;
//! `value` and `milli_value` saturate at `i64::MIN`/`i64::MAX` where upstream
//! says they "might overflow". There is no formatting back to a canonical
//! string: the workspace writes the strings users write.

use std::fmt;
use std::str::FromStr;

/// Why a quantity string does not parse: upstream's `ErrFormatWrong`,
/// `ErrNumeric` and `ErrSuffix`, and one of its own.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum QuantityError {
    /// Mirrors `ErrFormatWrong`: not a signed number followed by a suffix.
    #[error(
        "quantities must match the regular expression \
         '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$' (got {0:?})"
    )]
    FormatWrong(String),
    /// Mirrors `ErrNumeric`: the number has no digits or two decimal points.
    #[error("unable to parse numeric part of quantity {0:?}")]
    Numeric(String),
    /// Mirrors `ErrSuffix`: the suffix is none of the known ones.
    #[error("unable to parse quantity's suffix {0:?}")]
    Suffix(String),
    /// More significant digits than an `i128` holds (upstream would switch to
    /// an arbitrary-precision decimal).
    #[error("quantity {0:?} is too large; use fewer digits or a bigger suffix")]
    TooLarge(String),
}

/// A Kubernetes quantity: `unscaled × 10^scale`, kept without trailing zeros
/// in `unscaled`, so that `==` compares values (`"1.5"` equals `"1500m"`).
///
/// Mirrors apimachinery's `resource.Quantity` for reading: parse one with
/// [`parse_quantity`] (or `str::parse`, or from a k8s-openapi `Quantity`), read
/// it with [`value`](Quantity::value) (memory, pods, ephemeral-storage) or
/// [`milli_value`](Quantity::milli_value) (cpu).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Quantity {
    unscaled: i128,
    scale: i32,
}

/// Upstream's suffix kinds: a power of 2 (`Ki` = 2¹⁰) or of 10 (`k` = 10³,
/// `e3` = 10³).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Suffix {
    /// `base 2, exponent`.
    Binary(u32),
    /// `base 10, exponent`.
    Decimal(i32),
}

/// Mirrors `ParseQuantity`: parses `text`, or says why it cannot.
///
/// # Errors
///
/// [`QuantityError`] when `text` is not a quantity.
pub fn parse_quantity(text: &str) -> Result<Quantity, QuantityError> {
    if text.is_empty() {
        return Err(QuantityError::FormatWrong(text.to_string()));
    }
    let (negative, rest) = match text.as_bytes()[0] {
        b'-' => (true, &text[1..]),
        b'+' => (false, &text[1..]),
        _ => (false, text),
    };
    let number_end = rest
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(rest.len());
    let (number, suffix) = rest.split_at(number_end);
    if number.is_empty() {
        return Err(QuantityError::FormatWrong(text.to_string()));
    }
    let (whole, fraction) = match number.split_once('.') {
        Some((whole, fraction)) => (whole, fraction),
        None => (number, ""),
    };
    if fraction.contains('.') || (whole.is_empty() && fraction.is_empty()) {
        return Err(QuantityError::Numeric(text.to_string()));
    }
    let suffix = interpret_suffix(suffix)
        .ok_or_else(|| QuantityError::Suffix(text.to_string()))?;

    let too_large = || QuantityError::TooLarge(text.to_string());
    let mut unscaled: i128 = 0;
    for digit in whole.bytes().chain(fraction.bytes()) {
        unscaled = unscaled
            .checked_mul(10)
            .and_then(|u| u.checked_add(i128::from(digit - b'0')))
            .ok_or_else(too_large)?;
    }
    let fraction_digits = i32::try_from(fraction.len()).map_err(|_| too_large())?;
    let mut scale = -fraction_digits;
    match suffix {
        Suffix::Binary(exponent) => {
            unscaled = unscaled
                .checked_mul(1_i128 << exponent)
                .ok_or_else(too_large)?;
        }
        Suffix::Decimal(exponent) => {
            scale = scale.checked_add(exponent).ok_or_else(too_large)?;
        }
    }
    if negative {
        unscaled = -unscaled;
    }
    Ok(Quantity { unscaled, scale }.round_up_to_nano().normalized())
}

/// Mirrors `suffixHandler.interpret`: the base and exponent of a suffix.
fn interpret_suffix(suffix: &str) -> Option<Suffix> {
    let known = match suffix {
        "Ki" => Suffix::Binary(10),
        "Mi" => Suffix::Binary(20),
        "Gi" => Suffix::Binary(30),
        "Ti" => Suffix::Binary(40),
        "Pi" => Suffix::Binary(50),
        "Ei" => Suffix::Binary(60),
        "n" => Suffix::Decimal(-9),
        "u" => Suffix::Decimal(-6),
        "m" => Suffix::Decimal(-3),
        "" => Suffix::Decimal(0),
        "k" => Suffix::Decimal(3),
        "M" => Suffix::Decimal(6),
        "G" => Suffix::Decimal(9),
        "T" => Suffix::Decimal(12),
        "P" => Suffix::Decimal(15),
        "E" => Suffix::Decimal(18),
        _ => {
            // A decimal exponent: `e` or `E`, then a signed integer.
            let exponent = suffix
                .strip_prefix('e')
                .or_else(|| suffix.strip_prefix('E'))?;
            let digits = exponent.trim_start_matches(['+', '-']);
            if digits.is_empty()
                || !digits.bytes().all(|b| b.is_ascii_digit())
                || exponent.len() - digits.len() > 1
            {
                return None;
            }
            return exponent.parse().ok().map(Suffix::Decimal);
        }
    };
    Some(known)
}

/// `10^exponent` when it fits.
fn pow10(exponent: u32) -> Option<i128> {
    10_i128.checked_pow(exponent)
}

/// `value / divisor`, rounded up, away from zero (upstream's `scaledValue`).
fn div_away_from_zero(value: i128, divisor: i128) -> i128 {
    let quotient = value / divisor;
    if value % divisor == 0 {
        quotient
    } else {
        quotient + value.signum()
    }
}

impl Quantity {
    /// Zero.
    pub const ZERO: Quantity = Quantity {
        unscaled: 0,
        scale: 0,
    };

    /// Mirrors `resource.NewMilliQuantity`: `milli` thousandths.
    #[must_use]
    pub fn from_milli(milli: i64) -> Self {
        Quantity {
            unscaled: i128::from(milli),
            scale: -3,
        }
        .normalized()
    }

    /// Mirrors `resource.NewQuantity`: a whole number.
    #[must_use]
    pub fn from_value(value: i64) -> Self {
        Quantity {
            unscaled: i128::from(value),
            scale: 0,
        }
    }

    /// Trailing zeros moved into the scale (zero has scale 0), so that equal
    /// values are equal (`"1.5"` is `"1500m"`).
    fn normalized(mut self) -> Self {
        if self.unscaled == 0 {
            return Quantity::ZERO;
        }
        while self.unscaled % 10 == 0 && self.scale < i32::MAX {
            self.unscaled /= 10;
            self.scale += 1;
        }
        self
    }

    /// Upstream keeps nothing below a nano: rounds up (away from zero) to
    /// `10⁻⁹`.
    fn round_up_to_nano(self) -> Self {
        if self.scale >= -9 {
            return self;
        }
        let unscaled = match u32::try_from(-9 - self.scale).ok().and_then(pow10) {
            Some(divisor) => div_away_from_zero(self.unscaled, divisor),
            // Smaller than a nano by more than 38 digits: one nano, or zero.
            None => self.unscaled.signum(),
        };
        Quantity {
            unscaled,
            scale: -9,
        }
    }

    /// Mirrors `ScaledValue`: the value in units of `10^scale`, rounded up away
    /// from zero, saturating at the bounds of an `i64`.
    #[must_use]
    pub fn scaled_value(&self, scale: i32) -> i64 {
        let shift = i64::from(self.scale) - i64::from(scale);
        let scaled = if self.unscaled == 0 {
            0
        } else if shift >= 0 {
            u32::try_from(shift)
                .ok()
                .and_then(pow10)
                .and_then(|factor| self.unscaled.checked_mul(factor))
                .unwrap_or(if self.unscaled > 0 {
                    i128::MAX
                } else {
                    i128::MIN
                })
        } else {
            match u32::try_from(-shift).ok().and_then(pow10) {
                Some(divisor) => div_away_from_zero(self.unscaled, divisor),
                None => self.unscaled.signum(),
            }
        };
        i64::try_from(scaled).unwrap_or(if scaled > 0 { i64::MAX } else { i64::MIN })
    }

    /// Mirrors `Value`: the value rounded up to a whole number, away from zero
    /// (`"1.5"` is 2, `"64Mi"` is 67108864).
    #[must_use]
    pub fn value(&self) -> i64 {
        self.scaled_value(0)
    }

    /// Mirrors `MilliValue`: `ceil(q × 1000)` (`"100m"` is 100, `"1"` is 1000).
    #[must_use]
    pub fn milli_value(&self) -> i64 {
        self.scaled_value(-3)
    }

    /// Mirrors `IsZero`.
    #[must_use]
    pub fn is_zero(&self) -> bool {
        self.unscaled == 0
    }
}

impl FromStr for Quantity {
    type Err = QuantityError;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        parse_quantity(text)
    }
}

impl TryFrom<&k8s_openapi::apimachinery::pkg::api::resource::Quantity> for Quantity {
    type Error = QuantityError;

    fn try_from(
        quantity: &k8s_openapi::apimachinery::pkg::api::resource::Quantity,
    ) -> Result<Self, Self::Error> {
        parse_quantity(&quantity.0)
    }
}

impl fmt::Display for Quantity {
    /// `unscaled` and, when the scale is not zero, `e<scale>`: a form
    /// [`parse_quantity`] reads back (not upstream's canonical form).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.scale == 0 {
            write!(f, "{}", self.unscaled)
        } else {
            write!(f, "{}e{}", self.unscaled, self.scale)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn q(text: &str) -> Quantity {
        parse_quantity(text).unwrap_or_else(|e| panic!("{text}: {e}"))
    }

    /// The suffixes kubectl users write, read as the scheduler reads them: cpu
    /// in millicores, everything else in units.
    #[test]
    fn test_quantity_parse() {
        let cases: &[(&str, i64, i64)] = &[
            // (text, Value, MilliValue)
            ("0", 0, 0),
            ("1", 1, 1000),
            ("100m", 1, 100),
            ("1500m", 2, 1500),
            ("0.5", 1, 500),
            ("1.5", 2, 1500),
            (".5", 1, 500),
            ("5.", 5, 5000),
            ("2000", 2000, 2_000_000),
            ("1k", 1000, 1_000_000),
            ("1M", 1_000_000, 1_000_000_000),
            ("1G", 1_000_000_000, 1_000_000_000_000),
            ("1T", 1_000_000_000_000, 1_000_000_000_000_000),
            ("1Ki", 1024, 1_024_000),
            ("64Mi", 64 << 20, (64 << 20) * 1000),
            ("1Gi", 1 << 30, (1 << 30) * 1000),
            ("1.5Gi", 3 << 29, (3 << 29) * 1000),
            ("1Ti", 1 << 40, (1 << 40) * 1000),
            ("1e3", 1000, 1_000_000),
            ("1E3", 1000, 1_000_000),
            ("1e-3", 1, 1),
            ("12e+2", 1200, 1_200_000),
            ("1E", 1_000_000_000_000_000_000, i64::MAX),
            ("1n", 1, 1),
            ("1u", 1, 1),
            ("+1", 1, 1000),
            ("-1", -1, -1000),
            ("-100m", -1, -100),
            ("-1.5", -2, -1500),
            ("134217728", 134_217_728, 134_217_728_000),
        ];
        for (text, value, milli) in cases {
            let quantity = q(text);
            assert_eq!(quantity.value(), *value, "Value of {text}");
            assert_eq!(quantity.milli_value(), *milli, "MilliValue of {text}");
        }
    }

    /// Mirrors `TestQuantityParse`'s invalid cases: every one is refused.
    #[test]
    fn test_quantity_parse_invalid() {
        for text in [
            "", " ", "1 ", " 1", "1K", "1KB", "1Kib", "1mi", "1i", "1e", "1e+",
            "1e1.0", "1e-+1", "1.2.3", ".", "-", "+", "m", "Ki", "1.0.Ki", "1ki",
            "1 Gi", "0x10", "1,5",
        ] {
            assert!(parse_quantity(text).is_err(), "{text:?} should not parse");
        }
        assert!(matches!(
            parse_quantity("1K"),
            Err(QuantityError::Suffix(_))
        ));
        assert!(matches!(
            parse_quantity("1.2.3"),
            Err(QuantityError::Numeric(_))
        ));
        assert!(matches!(
            parse_quantity("Ki"),
            Err(QuantityError::FormatWrong(_))
        ));
    }

    /// Below a nano, values round up when parsed (upstream's
    /// `TestQuantityParseZero` and the rounding cases).
    #[test]
    fn test_quantity_rounds_up_below_nano() {
        assert_eq!(q("0.0000000001").scaled_value(-9), 1);
        assert_eq!(q("1.0000000001").scaled_value(-9), 1_000_000_001);
        assert_eq!(q("-0.0000000001").scaled_value(-9), -1);
        assert!(q("0").is_zero());
        assert!(q("0.000").is_zero());
        assert!(q("0Mi").is_zero());
    }

    /// Huge numbers are refused, huge values saturate.
    #[test]
    fn test_quantity_large() {
        assert!(matches!(
            parse_quantity("100000000000000000000000000000000000000000"),
            Err(QuantityError::TooLarge(_))
        ));
        assert_eq!(q("8Ei").value(), i64::MAX);
        assert_eq!(q("1e100").value(), i64::MAX);
        assert_eq!(q("-1e100").value(), i64::MIN);
        assert_eq!(q("1e-100").value(), 1);
    }

    #[test]
    fn test_quantity_from_k8s_openapi_and_constructors() {
        let wire =
            k8s_openapi::apimachinery::pkg::api::resource::Quantity("250m".into());
        let parsed = Quantity::try_from(&wire).expect("parses");
        assert_eq!(parsed.milli_value(), 250);
        assert_eq!(Quantity::from_milli(250).milli_value(), 250);
        assert_eq!(Quantity::from_value(3).milli_value(), 3000);
        assert_eq!(
            "1.5Gi".parse::<Quantity>().expect("parses").value(),
            3 << 29
        );
        assert_eq!(q(&q("1500m").to_string()), q("1.5"));
        assert_eq!(Quantity::ZERO.value(), 0);
    }
}
