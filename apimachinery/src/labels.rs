//! Label selector strings: `app=web,tier in (frontend,backend),!canary`.
//!
//! Mirrors apimachinery's [`pkg/labels/selector.go`]: its lexer (`Lexer.Lex`), its
//! recursive descent parser (`Parser.parse`, `parseRequirement`, `parseValues`,
//! `parseIdentifiersList`, `parseExactValue`) with the key and value checks of
//! [`crate::util::validation`] (`IsLabelKey`, `IsDNS1123Subdomain`,
//! `IsValidLabelValue`), and `LabelSelectorAsSelector(…).String()`
//! ([`selector_string`]), which prints a `LabelSelector` the way
//! `kubectl get -o wide` and a `Scale`'s `status.selector` show it. The result is kube's [`Selector`], so
//! a parsed selector can go straight into `ListParams::labels_from` as well as into
//! a lister.
//!
//! kube can *match* a [`Selector`] against a label map but cannot *parse* one from a
//! string; a lister (and stage 5's HTTP edge, which receives `?labelSelector=`)
//! needs both.
//!
//! ## Grammar
//!
//! ```text
//!  <selector>    ::= "" | <requirement> ( "," <requirement> )*
//!  <requirement> ::= KEY                                  Exists
//!                  | "!" KEY                              DoesNotExist
//!                  | KEY ( "=" | "==" ) VALUE             Equal
//!                  | KEY "!=" VALUE                       NotEqual
//!                  | KEY "in" "(" VALUE ( "," VALUE )* ")"     In
//!                  | KEY "notin" "(" VALUE ( "," VALUE )* ")"  NotIn
//!  KEY   ::= [ DNS-1123 subdomain (≤ 253) "/" ] name (≤ 63, [A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?)
//!  VALUE ::= "" | name
//! ```
//!
//! Whitespace (space, tab, CR, LF) may surround any token. `in` and `notin` are
//! keywords only where an operator is expected: `in in (in, notin)` is a valid
//! selector.
//!
//! ## Where this differs from apimachinery
//! - `>` and `<` (apimachinery's `GreaterThan`/`LessThan`, which compare integer
//!   label values) are recognised but rejected with
//!   [`SelectorError::UnsupportedOperator`]: kube's [`Expression`] has no variant
//!   for them.
//! - `==` parses to [`Expression::Equal`] and prints back as `=`; apimachinery keeps
//!   a separate `DoubleEquals` operator that matches the same way.
//! - Every error carries the byte position of the offending token, and the "missing
//!   `)`" error names the token actually found (apimachinery reports the token
//!   before the list).
//! - A NUL byte is an ordinary character here (and so an invalid key or value);
//!   apimachinery's lexer treats it as the end of the string.
//!
//! Like apimachinery, the requirements come out sorted by key (a stable sort, so
//! requirements on the same key keep their order), and `key in ()` is accepted as
//! `key in ("")`.
//!
//! [`pkg/labels/selector.go`]: https://github.com/kubernetes/apimachinery/blob/v0.36.0/pkg/labels/selector.go

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

use kube::core::{Expression, Selector, SelectorExt};
use serde_json::Value;

use crate::util::validation;

// ANCHOR: selector_error
/// Mirrors the errors of apimachinery's `labels.Parse`: why a selector string was
/// rejected and where.
///
/// Positions are byte offsets from the start of the selector string; the end of the
/// string is at `selector.len()`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SelectorError {
    /// Inside one requirement, a token is not what the grammar allows there: a
    /// missing `(` or `)`, a missing value, or an unknown operator.
    #[error(
        "unable to parse requirement: found {found} at position {position}: expected {expected}"
    )]
    UnexpectedToken {
        /// Where the token starts.
        position: usize,
        /// The token that was found.
        found: Found,
        /// What the grammar allows at that point.
        expected: &'static str,
    },

    /// Between requirements, a token is not what the grammar allows there: a
    /// trailing or doubled comma, or a second operator such as the `=` in
    /// `key=a=b`.
    #[error("found {found} at position {position}: expected {expected}")]
    UnexpectedSeparator {
        /// Where the token starts.
        position: usize,
        /// The token that was found.
        found: Found,
        /// What the grammar allows at that point.
        expected: &'static str,
    },

    /// Mirrors apimachinery's `validateLabelKey`: the key is not a qualified name.
    #[error(
        "unable to parse requirement: invalid label key {key:?} at position {position}: {reason}"
    )]
    InvalidKey {
        /// Where the key starts.
        position: usize,
        /// The key as written.
        key: String,
        /// Every rule the key breaks, joined by `; `.
        reason: String,
    },

    /// Mirrors apimachinery's `validateLabelValue`: the value is not a valid label
    /// value.
    #[error(
        "unable to parse requirement: invalid label value {value:?} for key {key:?} at position {position}: {reason}"
    )]
    InvalidValue {
        /// Where the value starts.
        position: usize,
        /// The key the value belongs to.
        key: String,
        /// The value as written.
        value: String,
        /// Every rule the value breaks, joined by `; `.
        reason: String,
    },

    /// The operator is valid Kubernetes syntax that kube's [`Selector`] cannot
    /// represent.
    #[error(
        "unable to parse requirement: operator '{operator}' at position {position} is not supported: \
         kube's Selector has no greater-than or less-than expression; list the wanted values with 'in' instead"
    )]
    UnsupportedOperator {
        /// Where the operator starts.
        position: usize,
        /// The operator as written (`>` or `<`).
        operator: String,
    },
}
// ANCHOR_END: selector_error

impl SelectorError {
    /// The byte offset in the selector string where the problem starts.
    pub fn position(&self) -> usize {
        match self {
            Self::UnexpectedToken { position, .. }
            | Self::UnexpectedSeparator { position, .. }
            | Self::InvalidKey { position, .. }
            | Self::InvalidValue { position, .. }
            | Self::UnsupportedOperator { position, .. } => *position,
        }
    }
}

/// Mirrors the `found '…'` part of apimachinery's parse errors: the token a
/// [`SelectorError`] found where the grammar expected something else.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Found {
    /// A token, as written (an identifier, a keyword or a symbol).
    Token(String),
    /// The selector string ended.
    EndOfString,
}

impl fmt::Display for Found {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Token(token) => write!(f, "'{token}'"),
            Self::EndOfString => f.write_str("end of string"),
        }
    }
}

// ANCHOR: parse_label_selector
/// Mirrors apimachinery's `labels.Parse`: parses a label selector string into kube's
/// [`Selector`].
///
/// The empty string (or only whitespace) selects everything. The requirements come
/// out sorted by key, as in apimachinery, so two spellings of the same selector
/// compare equal. Keys and values are validated as the apiserver validates them; the
/// first problem found is returned, with its byte position. Never panics.
///
/// ```
/// # use std::collections::BTreeMap;
/// # use apimachinery::{matches_labels, parse_label_selector};
/// let selector = parse_label_selector("tier in (frontend, backend), app=web, !canary")?;
/// assert_eq!(selector.to_string(), "app=web,!canary,tier in (backend,frontend)");
///
/// let labels = BTreeMap::from([
///     ("app".to_string(), "web".to_string()),
///     ("tier".to_string(), "frontend".to_string()),
/// ]);
/// assert!(matches_labels(&selector, Some(&labels)));
/// # Ok::<(), apimachinery::SelectorError>(())
/// ```
pub fn parse_label_selector(selector: &str) -> Result<Selector, SelectorError> {
    let mut parser = Parser {
        tokens: lex(selector),
        position: 0,
    };
    let mut requirements = parser.parse()?;
    // Mirrors `sort.Sort(ByKey(items))`: a deterministic order, whatever the
    // spelling.
    requirements.sort_by(|a, b| expression_key(a).cmp(expression_key(b)));
    Ok(requirements.into_iter().collect())
}
// ANCHOR_END: parse_label_selector

/// Mirrors apimachinery's `Selector.Matches(labels.Set(obj.GetLabels()))`: whether
/// an object with these labels is selected.
///
/// An object without labels (`None`) is treated as having an empty label map, as a
/// nil Go map is: it matches `!key` and `key notin (…)` requirements and nothing
/// that needs a label present.
pub fn matches_labels(
    selector: &Selector,
    labels: Option<&BTreeMap<String, String>>,
) -> bool {
    static NO_LABELS: BTreeMap<String, String> = BTreeMap::new();
    selector.matches(labels.unwrap_or(&NO_LABELS))
}

/// The key an expression constrains.
fn expression_key(expression: &Expression) -> &str {
    match expression {
        Expression::In(key, _)
        | Expression::NotIn(key, _)
        | Expression::Equal(key, _)
        | Expression::NotEqual(key, _)
        | Expression::Exists(key)
        | Expression::DoesNotExist(key) => key,
    }
}

// ---------------------------------------------------------------------------------------------
// Lexer
// ---------------------------------------------------------------------------------------------

/// Mirrors apimachinery's `Token` constants (without `ErrorToken`, which its lexer
/// never produces either).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum TokenKind {
    EndOfString,
    ClosedPar,
    Comma,
    DoesNotExist,
    DoubleEquals,
    Equals,
    GreaterThan,
    Identifier,
    In,
    LessThan,
    NotEquals,
    NotIn,
    OpenPar,
}

/// Mirrors apimachinery's `ScannedItem`, plus where the token starts.
#[derive(Debug, Clone, Copy)]
struct Token<'a> {
    kind: TokenKind,
    literal: &'a str,
    position: usize,
}

impl Token<'_> {
    fn found(&self) -> Found {
        match self.kind {
            TokenKind::EndOfString => Found::EndOfString,
            _ => Found::Token(self.literal.to_string()),
        }
    }
}

/// Mirrors apimachinery's `isWhitespace`.
fn is_whitespace(byte: u8) -> bool {
    matches!(byte, b' ' | b'\t' | b'\r' | b'\n')
}

/// Mirrors apimachinery's `isSpecialSymbol`: the bytes that end an identifier.
fn is_special_symbol(byte: u8) -> bool {
    matches!(byte, b'=' | b'!' | b'(' | b')' | b',' | b'>' | b'<')
}

/// Mirrors apimachinery's `Parser.scan` over `Lexer.Lex`: the whole input as tokens,
/// ending with exactly one `EndOfString`.
///
/// Token boundaries fall on ASCII bytes or the ends of the input, so every slice is
/// on a `char` boundary; multi-byte characters end up inside identifiers (and then
/// fail validation).
fn lex(input: &str) -> Vec<Token<'_>> {
    let bytes = input.as_bytes();
    let mut tokens = Vec::with_capacity(bytes.len() / 2 + 2);
    let mut pos = 0;
    loop {
        while bytes.get(pos).copied().is_some_and(is_whitespace) {
            pos += 1;
        }
        let start = pos;
        let Some(&first) = bytes.get(pos) else {
            tokens.push(Token {
                kind: TokenKind::EndOfString,
                literal: "",
                position: bytes.len(),
            });
            return tokens;
        };
        let kind = if is_special_symbol(first) {
            // Mirrors `scanSpecialSymbol`: the longest symbol token, and the only
            // two-byte ones are `!=` and `==`.
            match (first, bytes.get(pos + 1)) {
                (b'!', Some(b'=')) => {
                    pos += 2;
                    TokenKind::NotEquals
                }
                (b'=', Some(b'=')) => {
                    pos += 2;
                    TokenKind::DoubleEquals
                }
                _ => {
                    pos += 1;
                    match first {
                        b'=' => TokenKind::Equals,
                        b'!' => TokenKind::DoesNotExist,
                        b'(' => TokenKind::OpenPar,
                        b')' => TokenKind::ClosedPar,
                        b',' => TokenKind::Comma,
                        b'>' => TokenKind::GreaterThan,
                        _ => TokenKind::LessThan,
                    }
                }
            }
        } else {
            // Mirrors `scanIDOrKeyword`.
            while bytes
                .get(pos)
                .is_some_and(|&b| !is_special_symbol(b) && !is_whitespace(b))
            {
                pos += 1;
            }
            match input.get(start..pos) {
                Some("in") => TokenKind::In,
                Some("notin") => TokenKind::NotIn,
                _ => TokenKind::Identifier,
            }
        };
        tokens.push(Token {
            kind,
            literal: input.get(start..pos).unwrap_or_default(),
            position: start,
        });
    }
}

// ---------------------------------------------------------------------------------------------
// Parser
// ---------------------------------------------------------------------------------------------

/// Mirrors apimachinery's `ParserContext`: where `in` and `notin` are operators and
/// where they are plain identifiers (keys and values).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Context {
    KeyAndOperator,
    Values,
}

/// What follows a key: mirrors the operator that `parseKeyAndInferOperator` infers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum KeyOperator {
    /// `key` alone.
    Exists,
    /// `!key`.
    DoesNotExist,
    /// `key` followed by a binary operator, parsed next.
    Binary,
}

/// Mirrors apimachinery's `Parser`.
struct Parser<'a> {
    /// Never empty: `lex` always ends with `EndOfString`.
    tokens: Vec<Token<'a>>,
    position: usize,
}

impl<'a> Parser<'a> {
    /// Mirrors `Parser.lookahead`: the current token, without moving. Past the end
    /// it keeps returning `EndOfString`.
    fn lookahead(&self, context: Context) -> Token<'a> {
        let mut token = self
            .tokens
            .get(self.position)
            .or_else(|| self.tokens.last())
            .copied()
            .unwrap_or(Token {
                kind: TokenKind::EndOfString,
                literal: "",
                position: 0,
            });
        if context == Context::Values
            && matches!(token.kind, TokenKind::In | TokenKind::NotIn)
        {
            token.kind = TokenKind::Identifier;
        }
        token
    }

    /// Mirrors `Parser.consume`: the current token, moving past it (but never past
    /// the end).
    fn consume(&mut self, context: Context) -> Token<'a> {
        let token = self.lookahead(context);
        if self.position + 1 < self.tokens.len() {
            self.position += 1;
        }
        token
    }

    /// Mirrors `Parser.parse`: comma-separated requirements up to the end of the
    /// string.
    fn parse(&mut self) -> Result<Vec<Expression>, SelectorError> {
        let mut requirements = Vec::new();
        loop {
            let token = self.lookahead(Context::Values);
            match token.kind {
                TokenKind::Identifier | TokenKind::DoesNotExist => {
                    requirements.push(self.parse_requirement()?);
                    let after = self.consume(Context::Values);
                    match after.kind {
                        TokenKind::EndOfString => return Ok(requirements),
                        TokenKind::Comma => {
                            let next = self.lookahead(Context::Values);
                            if !matches!(
                                next.kind,
                                TokenKind::Identifier | TokenKind::DoesNotExist
                            ) {
                                return Err(separator_error(
                                    next,
                                    "an identifier after ','",
                                ));
                            }
                        }
                        _ => {
                            return Err(separator_error(
                                after,
                                "',' or end of string",
                            ));
                        }
                    }
                }
                TokenKind::EndOfString => return Ok(requirements),
                _ => {
                    return Err(separator_error(
                        token,
                        "'!', an identifier, or end of string",
                    ));
                }
            }
        }
    }

    /// Mirrors `Parser.parseRequirement` and the checks of `NewRequirement`.
    fn parse_requirement(&mut self) -> Result<Expression, SelectorError> {
        let (key, key_operator) = self.parse_key_and_infer_operator()?;
        match key_operator {
            KeyOperator::Exists => return Ok(Expression::Exists(key.to_string())),
            KeyOperator::DoesNotExist => {
                return Ok(Expression::DoesNotExist(key.to_string()));
            }
            KeyOperator::Binary => {}
        }
        let operator = self.consume(Context::KeyAndOperator);
        match operator.kind {
            TokenKind::In | TokenKind::NotIn => {
                let values = self.parse_values()?;
                let set = values
                    .into_iter()
                    .map(|value| validate_value(key, value))
                    .collect::<Result<BTreeSet<String>, _>>()?;
                Ok(if operator.kind == TokenKind::In {
                    Expression::In(key.to_string(), set)
                } else {
                    Expression::NotIn(key.to_string(), set)
                })
            }
            TokenKind::Equals | TokenKind::DoubleEquals | TokenKind::NotEquals => {
                let value = validate_value(key, self.parse_exact_value()?)?;
                Ok(if operator.kind == TokenKind::NotEquals {
                    Expression::NotEqual(key.to_string(), value)
                } else {
                    Expression::Equal(key.to_string(), value)
                })
            }
            TokenKind::GreaterThan | TokenKind::LessThan => {
                Err(SelectorError::UnsupportedOperator {
                    position: operator.position,
                    operator: operator.literal.to_string(),
                })
            }
            _ => Err(requirement_error(
                operator,
                "one of '=', '==', '!=', 'in', 'notin'",
            )),
        }
    }

    /// Mirrors `Parser.parseKeyAndInferOperator`: an optional `!`, a valid key, and
    /// whether an operator follows.
    fn parse_key_and_infer_operator(
        &mut self,
    ) -> Result<(&'a str, KeyOperator), SelectorError> {
        let mut token = self.consume(Context::Values);
        let negated = token.kind == TokenKind::DoesNotExist;
        if negated {
            token = self.consume(Context::Values);
        }
        if token.kind != TokenKind::Identifier {
            return Err(requirement_error(token, "an identifier"));
        }
        let errors = validation::is_qualified_name(token.literal);
        if !errors.is_empty() {
            return Err(SelectorError::InvalidKey {
                position: token.position,
                key: token.literal.to_string(),
                reason: errors.join("; "),
            });
        }
        // As in apimachinery, `!key` is complete whatever follows; anything but ','
        // or the end is then rejected between requirements (`!x=a`).
        let operator = if negated {
            KeyOperator::DoesNotExist
        } else if matches!(
            self.lookahead(Context::Values).kind,
            TokenKind::EndOfString | TokenKind::Comma
        ) {
            KeyOperator::Exists
        } else {
            KeyOperator::Binary
        };
        Ok((token.literal, operator))
    }

    /// Mirrors `Parser.parseValues`: `(` values `)`, where `()` is the single empty
    /// value.
    fn parse_values(&mut self) -> Result<Vec<Token<'a>>, SelectorError> {
        let open = self.consume(Context::Values);
        if open.kind != TokenKind::OpenPar {
            return Err(requirement_error(open, "'('"));
        }
        let next = self.lookahead(Context::Values);
        match next.kind {
            TokenKind::Identifier | TokenKind::Comma => {
                let values = self.parse_identifiers_list()?;
                let close = self.consume(Context::Values);
                if close.kind != TokenKind::ClosedPar {
                    return Err(requirement_error(close, "')'"));
                }
                Ok(values)
            }
            TokenKind::ClosedPar => {
                self.consume(Context::Values);
                Ok(vec![empty_value(next.position)])
            }
            _ => Err(requirement_error(next, "',', ')' or an identifier")),
        }
    }

    /// Mirrors `Parser.parseIdentifiersList`: comma-separated, possibly empty
    /// values, leaving the closing `)` for the caller. `(,a)`, `(a,,b)` and
    /// `(a,)` all contain the empty value.
    fn parse_identifiers_list(&mut self) -> Result<Vec<Token<'a>>, SelectorError> {
        let mut values = Vec::new();
        loop {
            let token = self.consume(Context::Values);
            match token.kind {
                TokenKind::Identifier => {
                    values.push(token);
                    let next = self.lookahead(Context::Values);
                    match next.kind {
                        TokenKind::Comma => {}
                        TokenKind::ClosedPar => return Ok(values),
                        _ => return Err(requirement_error(next, "',' or ')'")),
                    }
                }
                TokenKind::Comma => {
                    if values.is_empty() {
                        values.push(empty_value(token.position)); // "(,"
                    }
                    let next = self.lookahead(Context::Values);
                    match next.kind {
                        TokenKind::ClosedPar => {
                            values.push(empty_value(next.position)); // ",)"
                            return Ok(values);
                        }
                        TokenKind::Comma => {
                            self.consume(Context::Values);
                            values.push(empty_value(next.position)); // ",,"
                        }
                        _ => {}
                    }
                }
                _ => {
                    return Err(requirement_error(
                        token,
                        "',', ')' or an identifier",
                    ));
                }
            }
        }
    }

    /// Mirrors `Parser.parseExactValue`: one value, which may be empty (`key=`,
    /// `key=,other`).
    fn parse_exact_value(&mut self) -> Result<Token<'a>, SelectorError> {
        let next = self.lookahead(Context::Values);
        if matches!(next.kind, TokenKind::EndOfString | TokenKind::Comma) {
            return Ok(empty_value(next.position));
        }
        let token = self.consume(Context::Values);
        if token.kind == TokenKind::Identifier {
            Ok(token)
        } else {
            Err(requirement_error(token, "a value, ',' or end of string"))
        }
    }
}

/// The empty value, written as nothing at `position`.
fn empty_value(position: usize) -> Token<'static> {
    Token {
        kind: TokenKind::Identifier,
        literal: "",
        position,
    }
}

fn requirement_error(token: Token<'_>, expected: &'static str) -> SelectorError {
    SelectorError::UnexpectedToken {
        position: token.position,
        found: token.found(),
        expected,
    }
}

fn separator_error(token: Token<'_>, expected: &'static str) -> SelectorError {
    SelectorError::UnexpectedSeparator {
        position: token.position,
        found: token.found(),
        expected,
    }
}

/// Mirrors `metav1.LabelSelectorAsSelector(…).String()` of a `LabelSelector`
/// in its JSON form (`matchLabels`, `matchExpressions`): requirements sorted by
/// key, `k=v` for a label, `k in (a,b)`, `k notin (a,b)`, `k`, `!k`.
pub fn selector_string(selector: &Value) -> String {
    let mut requirements: Vec<(String, String)> = Vec::new();
    if let Some(labels) = selector["matchLabels"].as_object() {
        for (key, value) in labels {
            let value = value.as_str().unwrap_or_default();
            requirements.push((key.clone(), format!("{key}={value}")));
        }
    }
    for expression in selector["matchExpressions"]
        .as_array()
        .into_iter()
        .flatten()
    {
        let key = expression["key"].as_str().unwrap_or_default();
        let mut values: Vec<&str> = expression["values"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .collect();
        values.sort_unstable();
        let text = match expression["operator"].as_str().unwrap_or_default() {
            "In" => format!("{key} in ({})", values.join(",")),
            "NotIn" => format!("{key} notin ({})", values.join(",")),
            "Exists" => key.to_string(),
            "DoesNotExist" => format!("!{key}"),
            _ => continue,
        };
        requirements.push((key.to_string(), text));
    }
    requirements.sort();
    requirements
        .into_iter()
        .map(|(_, text)| text)
        .collect::<Vec<_>>()
        .join(",")
}

/// Mirrors apimachinery's `validateLabelValue`.
fn validate_value(key: &str, value: Token<'_>) -> Result<String, SelectorError> {
    let errors = validation::is_valid_label_value(value.literal);
    if errors.is_empty() {
        Ok(value.literal.to_string())
    } else {
        Err(SelectorError::InvalidValue {
            position: value.position,
            key: key.to_string(),
            value: value.literal.to_string(),
            reason: errors.join("; "),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_label_selector_prints_sorted_by_key_as_upstream() {
        let selector = serde_json::json!({
            "matchLabels": {"tier": "web", "app": "shop"},
            "matchExpressions": [
                {"key": "zone", "operator": "In", "values": ["b", "a"]},
                {"key": "canary", "operator": "DoesNotExist"},
                {"key": "env", "operator": "NotIn", "values": ["dev"]},
                {"key": "owner", "operator": "Exists"},
            ],
        });
        assert_eq!(
            selector_string(&selector),
            "app=shop,!canary,env notin (dev),owner,tier=web,zone in (a,b)"
        );
        assert_eq!(selector_string(&serde_json::json!({})), "");
        // The printed form parses back to the same requirements.
        let printed = selector_string(&selector);
        let parsed = parse_label_selector(&printed).expect("parses");
        let labels: BTreeMap<String, String> = [
            ("app", "shop"),
            ("tier", "web"),
            ("zone", "a"),
            ("env", "prod"),
            ("owner", "me"),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
        assert!(matches_labels(&parsed, Some(&labels)));
    }
}
