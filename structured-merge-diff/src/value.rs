//! Values: mirrors structured-merge-diff's [`value`] package as far as field
//! paths need it: `ToString` (how a list-map key or a set item is written in a
//! path) and `Compare` (the total order in which sets keep their elements).
//!
//! The values are `serde_json` values: the objects here are JSON.
//!
//! [`value`]: https://github.com/kubernetes-sigs/structured-merge-diff/tree/v6.3.0/value

use std::cmp::Ordering;

use serde_json::Value;

/// Mirrors Go's `strconv.Quote` (`%q`), which `ToString` and apimachinery's
/// field errors use for strings: `"` and `\` escaped, control characters as `\n`, `\x01`, `\u0085`.
/// Printability follows Rust's `char::is_control` and `is_whitespace`, close to
/// Go's `unicode.IsPrint` (which also escapes unassigned and format characters).
pub fn quote(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 2);
    out.push('"');
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\u{7}' => out.push_str("\\a"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{b}' => out.push_str("\\v"),
            ' ' => out.push(' '),
            c if !c.is_control() && !c.is_whitespace() => out.push(c),
            c if (c as u32) < 0x80 => out.push_str(&format!("\\x{:02x}", c as u32)),
            c if (c as u32) < 0x10000 => {
                out.push_str(&format!("\\u{:04x}", c as u32))
            }
            c => out.push_str(&format!("\\U{:08x}", c as u32)),
        }
    }
    out.push('"');
    out
}

/// Mirrors `value.ToString`: strings quoted as Go's `%q`, the rest as written.
pub fn to_string(value: &Value) -> String {
    match value {
        Value::String(s) => quote(s),
        Value::Array(items) => {
            let parts: Vec<String> = items.iter().map(to_string).collect();
            format!("[{}]", parts.join(","))
        }
        Value::Object(map) => {
            let parts: Vec<String> = map
                .iter()
                .map(|(k, v)| format!("{k}={}", to_string(v)))
                .collect();
            format!("{{{}}}", parts.join(";"))
        }
        other => other.to_string(),
    }
}

/// Mirrors `value.FieldList.Compare`: by name, then value, item by item.
pub fn compare_fields(a: &[(String, Value)], b: &[(String, Value)]) -> Ordering {
    for (x, y) in a.iter().zip(b) {
        let order = x.0.cmp(&y.0).then_with(|| compare(&x.1, &y.1));
        if order != Ordering::Equal {
            return order;
        }
    }
    a.len().cmp(&b.len())
}

/// Mirrors `value.Compare`'s total order: numbers (compared as numbers), then
/// strings, booleans, lists, maps, and null last.
pub fn compare(a: &Value, b: &Value) -> Ordering {
    fn rank(v: &Value) -> u8 {
        match v {
            Value::Number(_) => 0,
            Value::String(_) => 1,
            Value::Bool(_) => 2,
            Value::Array(_) => 3,
            Value::Object(_) => 4,
            Value::Null => 5,
        }
    }
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => match (x.as_i64(), y.as_i64()) {
            (Some(x), Some(y)) => x.cmp(&y),
            _ => {
                let (x, y) = (x.as_f64().unwrap_or(0.0), y.as_f64().unwrap_or(0.0));
                x.partial_cmp(&y).unwrap_or(Ordering::Equal)
            }
        },
        (Value::String(x), Value::String(y)) => x.cmp(y),
        (Value::Bool(x), Value::Bool(y)) => x.cmp(y),
        (Value::Array(x), Value::Array(y)) => {
            for (p, q) in x.iter().zip(y) {
                let order = compare(p, q);
                if order != Ordering::Equal {
                    return order;
                }
            }
            x.len().cmp(&y.len())
        }
        (Value::Object(x), Value::Object(y)) => {
            let x: Vec<(String, Value)> =
                x.iter().map(|(k, v)| (k.clone(), v.clone())).collect();
            let y: Vec<(String, Value)> =
                y.iter().map(|(k, v)| (k.clone(), v.clone())).collect();
            compare_fields(&x, &y)
        }
        _ => rank(a).cmp(&rank(b)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_are_quoted_as_go_quotes_them() {
        assert_eq!(quote("a b"), "\"a b\"");
        assert_eq!(quote("q\"\\"), "\"q\\\"\\\\\"");
        assert_eq!(quote("\n\t\u{1}\u{7f}"), "\"\\n\\t\\x01\\x7f\"");
        assert_eq!(quote("rā"), "\"rā\"");
        assert_eq!(quote("\u{85}"), "\"\\u0085\"");
    }
}
