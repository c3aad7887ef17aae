//! Exercise regions in the reference code, and the stubs that replace them.
//!
//! A region is the whole body of one function, between two mdBook anchor lines:
//!
//! ```text
//! pub fn split_meta_namespace_key(key: &str) -> Result<(&str, &str), InvalidKeyError> {
//!     // ANCHOR: ex1-split-key
//!     ...the reference body...
//!     // ANCHOR_END: ex1-split-key
//! }
//! ```
//!
//! [`stub`] keeps both anchor lines (so the book, `solution` and `reset` still find
//! the region) and replaces what lies between them with a comment that names the
//! exercise and its page in the book, a line that uses every parameter, so the
//! stubbed crate builds without `unused_variables` warnings, and a `todo!` whose
//! message names the exercise again:
//!
//! ```text
//!     // ANCHOR: ex1-split-key
//!     // Exercise: see book/src/stage1/exercises/ex1-split-key.md
//!     let _ = &key;
//!     todo!("ex1-split-key: Split a key into namespace and name")
//!     // ANCHOR_END: ex1-split-key
//! ```
//!
//! The same stub is what the book's chapters show in place of the reference body
//! (see `book/stubs.rs`), so every line of it fits the book's listings.
//!
//! The parameters come from the signature of the enclosing function, found by
//! scanning back from the `ANCHOR` line to the nearest `fn name` and parsing its
//! parameter list with bracket depth, so multi-line signatures, generics, `impl
//! Trait` and `Fn(A, B) -> C` types work. A `mut x` parameter is used as `&mut x`,
//! which also keeps `unused_mut` quiet.

/// What is wrong with a region, or with the function around it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum Error {
    /// The file has no `ANCHOR` line for the id.
    #[error("no `// ANCHOR: {id}` line")]
    NoAnchor {
        /// The region's id.
        id: String,
    },
    /// The region is never closed.
    #[error("`// ANCHOR: {id}` at line {line} has no `// ANCHOR_END: {id}`")]
    Unclosed {
        /// The region's id.
        id: String,
        /// The `ANCHOR` line, from 1.
        line: usize,
    },
    /// The region closes before it opens.
    #[error(
        "`// ANCHOR_END: {id}` (line {close}) comes before `// ANCHOR: {id}` (line {open})"
    )]
    EndBeforeStart {
        /// The region's id.
        id: String,
        /// The `ANCHOR` line, from 1.
        open: usize,
        /// The `ANCHOR_END` line, from 1.
        close: usize,
    },
    /// The region opens twice.
    #[error("`// ANCHOR: {id}` appears more than once")]
    OpensTwice {
        /// The region's id.
        id: String,
    },
    /// The region closes twice.
    #[error("`// ANCHOR_END: {id}` appears more than once")]
    ClosesTwice {
        /// The region's id.
        id: String,
    },
    /// No function lies around the region.
    #[error("region `{id}` is not inside a function (no `fn` above it)")]
    NotInFunction {
        /// The region's id.
        id: String,
    },
    /// The enclosing function's signature is beyond the parser.
    #[error("region `{id}`: cannot read the signature at line {line}")]
    Signature {
        /// The region's id.
        id: String,
        /// The line of the `fn`, from 1.
        line: usize,
        /// What the parser could not read.
        #[source]
        source: SignatureError,
    },
    /// Code stands between the function's `{` and the `ANCHOR` line.
    #[error(
        "region `{id}` must be the whole body of `fn {function}`, but code stands between the \
         function's `{{` and the `ANCHOR` line"
    )]
    CodeBefore {
        /// The region's id.
        id: String,
        /// The enclosing function.
        function: String,
    },
    /// Code stands between the `ANCHOR_END` line and the function's `}`.
    #[error(
        "region `{id}` must be the whole body of `fn {function}`, but the line after \
         `ANCHOR_END` is not the function's closing `}}`"
    )]
    CodeAfter {
        /// The region's id.
        id: String,
        /// The enclosing function.
        function: String,
    },
}

/// What [`parse_signature`] could not read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub(crate) struct SignatureError(String);

impl From<&str> for SignatureError {
    fn from(message: &str) -> SignatureError {
        SignatureError(message.to_string())
    }
}

impl From<String> for SignatureError {
    fn from(message: String) -> SignatureError {
        SignatureError(message)
    }
}

/// What a stub says about its exercise (see [`stub`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Note {
    /// The `todo!` message: `<id>: <title>`.
    pub(crate) message: String,
    /// The exercise's own page in the book, from the workspace root, e.g.
    /// `book/src/stage1/exercises/ex1-split-key.md` (it names the exercise, which the
    /// stub's comment therefore does not repeat, so that it fits the book's listings).
    pub(crate) page: String,
}

/// Where one region sits in a file: the indices (from 0) of its two marker lines.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Region {
    /// The `// ANCHOR: id` line.
    pub(crate) open: usize,
    /// The `// ANCHOR_END: id` line.
    pub(crate) close: usize,
}

/// One name a function parameter binds, as the stub must use it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Binding {
    /// The bound name, e.g. `key` or `self`.
    pub(crate) name: String,
    /// Whether the binding is `mut` (then the stub takes `&mut name`).
    pub(crate) mutable: bool,
}

/// The parts of a function signature the stubber needs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Signature {
    /// The function's name.
    pub(crate) name: String,
    /// Every binding of every parameter, in order, without `_` and `_`-prefixed
    /// names.
    pub(crate) bindings: Vec<Binding>,
}

/// `text` as lines that keep their line endings, so joining them gives `text` back
/// byte for byte.
pub(crate) fn lines(text: &str) -> Vec<&str> {
    text.split_inclusive('\n').collect()
}

/// The name after the first `marker` (`ANCHOR:` or `ANCHOR_END:`) in a comment line,
/// as mdBook reads it (`[\w_-]+`).
pub(crate) fn marker_name<'a>(line: &'a str, marker: &str) -> Option<&'a str> {
    let comment = &line[line.find("//")?..];
    comment.match_indices(marker).find_map(|(at, _)| {
        let rest = comment[at + marker.len()..].trim_start();
        let len = rest
            .find(|c: char| !(c.is_alphanumeric() || c == '_' || c == '-'))
            .unwrap_or(rest.len());
        (len > 0).then(|| &rest[..len])
    })
}

/// Whether an anchor name has the exercise form `ex<digits>-<name>`; returns the
/// digits' value.
pub(crate) fn exercise_stage(id: &str) -> Option<u32> {
    let rest = id.strip_prefix("ex")?;
    let digits = rest.find('-')?;
    let (number, name) = (&rest[..digits], &rest[digits + 1..]);
    if number.is_empty()
        || name.is_empty()
        || !number.bytes().all(|b| b.is_ascii_digit())
    {
        return None;
    }
    number.parse().ok()
}

/// Every exercise region opened in `text`: `(id, line from 1)`, in file order.
pub(crate) fn exercise_anchors(text: &str) -> Vec<(String, usize)> {
    lines(text)
        .iter()
        .enumerate()
        .filter_map(|(index, line)| {
            let name = marker_name(line, "ANCHOR:")?;
            exercise_stage(name).map(|_| (name.to_string(), index + 1))
        })
        .collect()
}

/// Finds the region `id` in `text`: exactly one `ANCHOR: id` and, after it, one
/// `ANCHOR_END: id`.
pub(crate) fn find(text: &str, id: &str) -> Result<Region, Error> {
    let all = lines(text);
    let opens: Vec<usize> = (0..all.len())
        .filter(|&i| marker_name(all[i], "ANCHOR:") == Some(id))
        .collect();
    let closes: Vec<usize> = (0..all.len())
        .filter(|&i| marker_name(all[i], "ANCHOR_END:") == Some(id))
        .collect();
    let id = id.to_string();
    match (opens.as_slice(), closes.as_slice()) {
        ([], _) => Err(Error::NoAnchor { id }),
        ([open], [close]) if close > open => Ok(Region {
            open: *open,
            close: *close,
        }),
        ([open], []) => Err(Error::Unclosed { id, line: open + 1 }),
        ([open], [close]) => Err(Error::EndBeforeStart {
            id,
            open: open + 1,
            close: close + 1,
        }),
        ([_], _) => Err(Error::ClosesTwice { id }),
        _ => Err(Error::OpensTwice { id }),
    }
}

/// The text between the region's marker lines, line endings included.
pub(crate) fn body(text: &str, id: &str) -> Result<String, Error> {
    let region = find(text, id)?;
    Ok(lines(text)[region.open + 1..region.close].concat())
}

/// Whether the region `id` holds a stub made by [`stub`] (its `todo!` names the id).
pub(crate) fn is_stub(text: &str, id: &str) -> Result<bool, Error> {
    let body = body(text, id)?;
    let needle = format!("todo!(\"{id}:");
    Ok(body
        .lines()
        .any(|line| line.trim_start().starts_with(&needle)))
}

/// The region's first line (from 1, the `ANCHOR` line) and the name of the function
/// whose body it is.
pub(crate) fn locate(text: &str, id: &str) -> Result<(usize, String), Error> {
    let region = find(text, id)?;
    let signature = enclosing_fn(&lines(text), region, id)?;
    Ok((region.open + 1, signature.name))
}

/// `text` with the lines between the region's markers replaced by `new_body` (which
/// must end with a line ending, or be empty).
fn splice(text: &str, region: Region, new_body: &str) -> String {
    let all = lines(text);
    let mut out = String::with_capacity(text.len() + new_body.len());
    out.push_str(&all[..=region.open].concat());
    out.push_str(new_body);
    out.push_str(&all[region.close..].concat());
    out
}

/// `text` with the region `id` stubbed: its body becomes a comment that names the
/// exercise and its page, a use of every parameter and `todo!("{message}")`. Fails
/// when the region is not the whole body of one function or a parameter pattern is
/// beyond the parser.
pub(crate) fn stub(text: &str, id: &str, note: &Note) -> Result<String, Error> {
    let region = find(text, id)?;
    let all = lines(text);
    let signature = enclosing_fn(&all, region, id)?;
    let open_line = all[region.open];
    let indent: String = open_line
        .chars()
        .take_while(|c| *c == ' ' || *c == '\t')
        .collect();
    let newline = if open_line.ends_with("\r\n") {
        "\r\n"
    } else {
        "\n"
    };
    Ok(splice(
        text,
        region,
        &stub_body(&indent, newline, &signature.bindings, note),
    ))
}

/// The lines of a stub body.
fn stub_body(
    indent: &str,
    newline: &str,
    bindings: &[Binding],
    note: &Note,
) -> String {
    let uses: Vec<String> = bindings
        .iter()
        .map(|b| {
            if b.mutable {
                format!("&mut {}", b.name)
            } else {
                format!("&{}", b.name)
            }
        })
        .collect();
    let mut out = format!("{indent}// Exercise: see {}{newline}", note.page);
    match uses.as_slice() {
        [] => {}
        [one] => out.push_str(&format!("{indent}let _ = {one};{newline}")),
        many => {
            out.push_str(&format!("{indent}let _ = ({});{newline}", many.join(", ")))
        }
    }
    out.push_str(&format!(
        "{indent}todo!({}){newline}",
        rust_format_literal(&note.message)
    ));
    out
}

/// `message` as a string literal that `todo!` prints as written: quotes, backslashes
/// and control characters escaped, and `{`/`}` doubled since the literal is a format
/// string.
fn rust_format_literal(message: &str) -> String {
    let mut escaped = String::with_capacity(message.len());
    for c in message.chars() {
        match c {
            '"' => escaped.push_str("\\\""),
            '\\' => escaped.push_str("\\\\"),
            c if c.is_control() => escaped.extend(c.escape_default()),
            c => escaped.push(c),
        }
    }
    format!("\"{}\"", escaped.replace('{', "{{").replace('}', "}}"))
}

/// `current` with the body of the region `id` replaced by `new_body` (as [`body`]
/// returns it).
pub(crate) fn replace_body(
    current: &str,
    id: &str,
    new_body: &str,
) -> Result<String, Error> {
    let region = find(current, id)?;
    Ok(splice(current, region, new_body))
}

/// Finds the function whose whole body is the region, and parses its signature.
fn enclosing_fn(all: &[&str], region: Region, id: &str) -> Result<Signature, Error> {
    let (start_line, column) = (0..region.open)
        .rev()
        .find_map(|i| fn_keyword(code_part(all[i])).map(|col| (i, col)))
        .ok_or_else(|| Error::NotInFunction { id: id.to_string() })?;
    let mut source = code_part(all[start_line])[column..].to_string();
    for line in &all[start_line + 1..region.open] {
        source.push('\n');
        source.push_str(code_part(line));
    }
    let (signature, after_brace) =
        parse_signature(&source).map_err(|source| Error::Signature {
            id: id.to_string(),
            line: start_line + 1,
            source,
        })?;
    if !after_brace.trim().is_empty() {
        return Err(Error::CodeBefore {
            id: id.to_string(),
            function: signature.name,
        });
    }
    let next_code = all[region.close + 1..]
        .iter()
        .map(|line| code_part(line).trim())
        .find(|line| !line.is_empty());
    if !next_code.is_some_and(|line| line.starts_with('}')) {
        return Err(Error::CodeAfter {
            id: id.to_string(),
            function: signature.name,
        });
    }
    Ok(signature)
}

/// A line without its `//` comment (string literals in signatures are not expected).
fn code_part(line: &str) -> &str {
    let line = line.trim_end_matches(['\n', '\r']);
    line.find("//").map_or(line, |at| &line[..at])
}

/// Whether a byte can be part of an identifier.
fn is_ident_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_'
}

/// The byte offset of a `fn name` item (not `Fn(`, not a `fn(` pointer type) in a
/// line of code.
fn fn_keyword(code: &str) -> Option<usize> {
    let bytes = code.as_bytes();
    code.match_indices("fn").map(|(at, _)| at).find(|&at| {
        let before_ok = at == 0 || !is_ident_byte(bytes[at - 1]);
        let rest = &code[at + 2..];
        let trimmed = rest.trim_start();
        before_ok
            && trimmed.len() < rest.len()
            && trimmed
                .bytes()
                .next()
                .is_some_and(|b| b.is_ascii_alphabetic() || b == b'_')
    })
}

/// Parses `fn name<generics>(params) -> ret where ... {` and returns the signature
/// and the text after the body's opening `{`.
pub(crate) fn parse_signature(
    source: &str,
) -> Result<(Signature, &str), SignatureError> {
    let rest = source
        .trim_start()
        .strip_prefix("fn")
        .ok_or("no `fn` keyword")?
        .trim_start();
    let name_len = rest
        .bytes()
        .position(|b| !is_ident_byte(b))
        .unwrap_or(rest.len());
    let name = rest[..name_len]
        .strip_prefix("r#")
        .unwrap_or(&rest[..name_len]);
    if name.is_empty() {
        return Err("no function name after `fn`".into());
    }
    let mut rest = rest[name_len..].trim_start();
    if let Some(generics) = rest.strip_prefix('<') {
        let end =
            find_top_level(generics, '>').ok_or("unclosed `<` in the generics")?;
        rest = generics[end + 1..].trim_start();
    }
    let params = rest
        .strip_prefix('(')
        .ok_or("no `(` after the function name")?;
    let end =
        find_top_level(params, ')').ok_or("unclosed `(` in the parameter list")?;
    let (params, after) = (&params[..end], &params[end + 1..]);
    let brace =
        find_top_level(after, '{').ok_or("no `{` opens the function body")?;
    let mut bindings = Vec::new();
    for param in split_top_level(params, ',') {
        if !param.trim().is_empty() {
            bindings.extend(param_bindings(param)?);
        }
    }
    Ok((
        Signature {
            name: name.to_string(),
            bindings,
        },
        &after[brace + 1..],
    ))
}

/// Whether the `>` at byte `at` belongs to `->` or `=>` rather than closing a `<`.
fn is_arrow(s: &str, at: usize) -> bool {
    at > 0 && matches!(s.as_bytes()[at - 1], b'-' | b'=')
}

/// The byte offset of the first `target` outside any `()`, `[]`, `{}` or `<>` in
/// `s`; `None` when there is none, or a closing bracket with no opener comes first.
fn find_top_level(s: &str, target: char) -> Option<usize> {
    let mut depth = 0usize;
    for (at, c) in s.char_indices() {
        let closer = matches!(c, ')' | ']' | '}') || (c == '>' && !is_arrow(s, at));
        if depth == 0 && c == target && (c != '>' || closer) {
            return Some(at);
        }
        if matches!(c, '(' | '[' | '{' | '<') {
            depth += 1;
        } else if closer {
            depth = depth.checked_sub(1)?;
        }
    }
    None
}

/// `s` split at every `sep` outside brackets (`sep` must not be a bracket).
fn split_top_level(s: &str, sep: char) -> Vec<&str> {
    let mut parts = Vec::new();
    let mut depth = 0usize;
    let mut start = 0;
    for (at, c) in s.char_indices() {
        match c {
            '(' | '[' | '{' | '<' => depth += 1,
            ')' | ']' | '}' => depth = depth.saturating_sub(1),
            '>' if !is_arrow(s, at) => depth = depth.saturating_sub(1),
            c if c == sep && depth == 0 => {
                parts.push(&s[start..at]);
                start = at + c.len_utf8();
            }
            _ => {}
        }
    }
    parts.push(&s[start..]);
    parts
}

/// The byte offset of the `:` that separates a parameter's pattern from its type
/// (not `::`).
fn type_colon(s: &str) -> Option<usize> {
    let bytes = s.as_bytes();
    let mut depth = 0usize;
    for (at, c) in s.char_indices() {
        match c {
            '(' | '[' | '{' | '<' => depth += 1,
            ')' | ']' | '}' => depth = depth.saturating_sub(1),
            '>' if !is_arrow(s, at) => depth = depth.saturating_sub(1),
            ':' if depth == 0 => {
                let double = bytes.get(at + 1) == Some(&b':')
                    || (at > 0 && bytes[at - 1] == b':');
                if !double {
                    return Some(at);
                }
            }
            _ => {}
        }
    }
    None
}

/// `s` without leading `#[...]` attributes.
fn strip_attributes(mut s: &str) -> Result<&str, SignatureError> {
    loop {
        s = s.trim_start();
        let Some(attr) = s.strip_prefix("#[") else {
            return Ok(s);
        };
        let end = find_top_level(attr, ']').ok_or("unclosed `#[` on a parameter")?;
        s = &attr[end + 1..];
    }
}

/// The bindings of one parameter such as `mut key: &str`, `&mut self` or `(a, _b):
/// (u8, u8)`.
fn param_bindings(param: &str) -> Result<Vec<Binding>, SignatureError> {
    let param = strip_attributes(param)?;
    let pattern = match type_colon(param) {
        Some(at) => param[..at].trim(),
        None => param.trim(),
    };
    // `self`, `mut self`, `&self`, `&'a mut self`, `self: Arc<Self>`.
    let unreferenced = pattern.strip_prefix('&').map(|rest| {
        let rest = rest.trim_start();
        let rest = match rest.strip_prefix('\'') {
            Some(lifetime) => lifetime
                .trim_start_matches(|c: char| c == '_' || c.is_alphanumeric()),
            None => rest,
        };
        rest.trim_start()
    });
    let self_pattern = unreferenced.unwrap_or(pattern);
    let self_mut = self_pattern
        .strip_prefix("mut")
        .filter(|rest| rest.starts_with(char::is_whitespace))
        .map(str::trim_start);
    if self_mut.unwrap_or(self_pattern) == "self" {
        return Ok(vec![Binding {
            name: "self".into(),
            mutable: unreferenced.is_none() && self_mut.is_some(),
        }]);
    }
    if type_colon(param).is_none() {
        return Err(format!("parameter `{param}` has no type").into());
    }
    pattern_bindings(pattern)
}

/// Strips a keyword followed by whitespace, e.g. `mut` from `mut x`.
fn strip_keyword<'a>(s: &'a str, keyword: &str) -> Option<&'a str> {
    s.strip_prefix(keyword)
        .filter(|rest| rest.starts_with(char::is_whitespace))
        .map(str::trim_start)
}

/// Whether `s` is one identifier (raw identifiers included).
fn is_identifier(s: &str) -> bool {
    let s = s.strip_prefix("r#").unwrap_or(s);
    s.bytes()
        .next()
        .is_some_and(|b| b.is_ascii_alphabetic() || b == b'_')
        && s.bytes().all(is_ident_byte)
}

/// Whether `s` is a path such as `Point` or `crate::Pair` that names a struct or
/// variant.
fn is_path(s: &str) -> bool {
    !s.is_empty() && s.split("::").all(|part| is_identifier(part.trim()))
}

/// The names a pattern binds: identifiers, `mut`/`ref` bindings, tuples, slices,
/// references, `name @ pattern`, and tuple-struct and struct patterns. `_` and
/// `_name` bind nothing the stub needs to use.
fn pattern_bindings(pattern: &str) -> Result<Vec<Binding>, SignatureError> {
    let p = pattern.trim();
    let unsupported = || {
        Err(SignatureError(format!(
            "unsupported parameter pattern `{p}`"
        )))
    };
    if p == "_" || p == ".." || p.is_empty() {
        return Ok(Vec::new());
    }
    if let Some(inner) = p.strip_prefix('&') {
        let inner = inner.trim_start();
        return pattern_bindings(strip_keyword(inner, "mut").unwrap_or(inner));
    }
    if let Some(at) = find_top_level(p, '@') {
        let mut out = pattern_bindings(&p[..at])?;
        out.extend(pattern_bindings(&p[at + 1..])?);
        return Ok(out);
    }
    for (open, close) in [('(', ')'), ('[', ']')] {
        if p.starts_with(open) && p.ends_with(close) {
            return elements(&p[1..p.len() - 1]);
        }
    }
    if let Some(rest) = strip_keyword(p, "ref") {
        let name = strip_keyword(rest, "mut").unwrap_or(rest);
        return single(name, false).map_or_else(unsupported, Ok);
    }
    if let Some(name) = strip_keyword(p, "mut") {
        return single(name, true).map_or_else(unsupported, Ok);
    }
    if is_identifier(p) {
        return single(p, false).map_or_else(unsupported, Ok);
    }
    // `Pair(a, b)`: a tuple-struct pattern.
    if let Some(open) = p.find('(')
        && p.ends_with(')')
        && is_path(p[..open].trim())
    {
        return elements(&p[open + 1..p.len() - 1]);
    }
    // `Point { x, y: py, .. }`: a struct pattern.
    if let Some(open) = p.find('{')
        && p.ends_with('}')
        && is_path(p[..open].trim())
    {
        let mut out = Vec::new();
        for field in split_top_level(&p[open + 1..p.len() - 1], ',') {
            out.extend(match type_colon(field) {
                Some(at) => pattern_bindings(&field[at + 1..])?,
                None => pattern_bindings(field)?,
            });
        }
        return Ok(out);
    }
    unsupported()
}

/// The bindings of comma-separated sub-patterns.
fn elements(inner: &str) -> Result<Vec<Binding>, SignatureError> {
    let mut out = Vec::new();
    for element in split_top_level(inner, ',') {
        out.extend(pattern_bindings(element)?);
    }
    Ok(out)
}

/// One identifier binding, or none for a `_`-prefixed name; `None` if `name` is no
/// identifier.
fn single(name: &str, mutable: bool) -> Option<Vec<Binding>> {
    let name = name.trim();
    if !is_identifier(name) {
        return None;
    }
    if name.starts_with('_') {
        return Some(Vec::new());
    }
    Some(vec![Binding {
        name: name.to_string(),
        mutable,
    }])
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A note whose `todo!` says `message`.
    fn note(message: &str) -> Note {
        Note {
            message: message.to_string(),
            page: "book/src/stage1/exercises/ex1-split.md".to_string(),
        }
    }

    /// `current` with the region `id` taken from `reference`.
    fn restore(current: &str, reference: &str, id: &str) -> Result<String, Error> {
        replace_body(current, id, &body(reference, id)?)
    }

    /// The bindings of a signature, rendered as the stub would use them.
    fn uses(source: &str) -> Vec<String> {
        let (signature, _) = parse_signature(source).unwrap();
        signature
            .bindings
            .iter()
            .map(|b| {
                if b.mutable {
                    format!("&mut {}", b.name)
                } else {
                    format!("&{}", b.name)
                }
            })
            .collect()
    }

    #[test]
    fn simple_and_self_parameters() {
        assert_eq!(uses("fn f(key: &str) -> u8 {"), ["&key"]);
        assert_eq!(uses("fn f(&self, a: u8) {"), ["&self", "&a"]);
        assert_eq!(uses("fn f(&mut self) {"), ["&self"]);
        assert_eq!(uses("fn f(&'a mut self) {"), ["&self"]);
        assert_eq!(uses("fn f(mut self, x: u8) {"), ["&mut self", "&x"]);
        assert_eq!(uses("fn f(self: Arc<Self>) {"), ["&self"]);
        assert_eq!(uses("fn f() -> u8 {"), Vec::<String>::new());
    }

    #[test]
    fn mut_and_underscore_parameters() {
        assert_eq!(
            uses("fn f(mut x: Vec<u8>, _y: u8, _: u16, ref z: u8) {"),
            ["&mut x", "&z"]
        );
        assert_eq!(uses("fn f(#[allow(unused)] a: u8,) {"), ["&a"]);
    }

    #[test]
    fn patterns_bind_their_names() {
        assert_eq!(
            uses(
                "fn f((a, _b): (u8, u8), &(c, mut d): &(u8, u8), [e, ..]: [u8; 3]) {"
            ),
            ["&a", "&c", "&mut d", "&e"]
        );
        assert_eq!(
            uses(
                "fn f(Pair(a, b): Pair, Point { x, y: py, .. }: Point, all @ _: u8) {"
            ),
            ["&a", "&b", "&x", "&py", "&all"]
        );
        assert!(parse_signature("fn f(1..=3: u8) {").is_err());
    }

    #[test]
    fn generics_with_commas_and_closures() {
        let source = "fn by_index<'a, K: Into<String>, F>(\n    index: &HashMap<K, Vec<(u8, u8)>>,\n    \
                      f: F,\n    g: impl Fn(&K, u8) -> Result<(), String>,\n    h: &dyn Fn(u8) -> u8,\n) -> \
                      Result<Vec<&'a str>, Error>\nwhere\n    F: Fn(&K) -> Option<(u8, u8)>,\n{\n";
        let (signature, rest) = parse_signature(source).unwrap();
        assert_eq!(signature.name, "by_index");
        assert_eq!(uses(source), ["&index", "&f", "&g", "&h"]);
        assert_eq!(rest, "\n");
    }

    #[test]
    fn multi_line_signature_in_a_file() {
        let text = "\
impl X {
    /// Docs mentioning fn other(a).
    pub(crate) fn update<'i>(
        &mut self,
        old: Option<&T>, // comment, with a comma
        mut new: Option<&T>,
        _key: &Arc<str>,
    ) -> Result<(), E> {
        // ANCHOR: ex1-update
        body();
        // ANCHOR_END: ex1-update
    }
}
";
        let stubbed = stub(text, "ex1-update", &note("ex1-update: Update")).unwrap();
        assert!(
            stubbed.contains(
                "        // ANCHOR: ex1-update\n        \
                 // Exercise: see book/src/stage1/exercises/ex1-split.md\n        \
                 let _ = (&self, &old, &mut new);\n        \
                 todo!(\"ex1-update: Update\")\n        // ANCHOR_END: ex1-update\n"
            ),
            "{stubbed}"
        );
    }

    const CODE: &str = "\
use std::fmt;

pub fn split(key: &str) -> Result<(&str, &str), Error> {
    // ANCHOR: ex1-split
    let mut parts = key.split('/');
    match (parts.next(), parts.next()) {
        (Some(a), None) => Ok((\"\", a)),
        _ => Err(Error),
    }
    // ANCHOR_END: ex1-split
}

fn keys<'i>(index: Option<&'i Index>, values: &[Cow<'_, str>]) -> Vec<&'i str>
{
    // ANCHOR: ex1-keys
    let Some(index) = index else {
        return Vec::new();
    };
    values.iter().flat_map(|v| index.get(v)).collect()
    // ANCHOR_END: ex1-keys
}
";

    #[test]
    fn stub_then_restore_round_trips() {
        assert_eq!(
            rust_format_literal("it's \\ \"q\"\n"),
            "\"it's \\\\ \\\"q\\\"\\n\""
        );
        let split = note("ex1-split: Split {a} \"b\"");
        let once = stub(CODE, "ex1-split", &split).unwrap();
        assert!(once.contains(
            "    // ANCHOR: ex1-split\n    \
             // Exercise: see book/src/stage1/exercises/ex1-split.md\n    \
             let _ = &key;\n    todo!(\"ex1-split: Split {{a}} \\\"b\\\"\")\n"
        ));
        assert!(is_stub(&once, "ex1-split").unwrap());
        assert!(!is_stub(&once, "ex1-keys").unwrap());
        let twice = stub(&once, "ex1-keys", &note("ex1-keys: Keys")).unwrap();
        assert!(twice.contains(
            "    let _ = (&index, &values);\n    todo!(\"ex1-keys: Keys\")\n"
        ));
        let back = restore(
            &restore(&twice, CODE, "ex1-split").unwrap(),
            CODE,
            "ex1-keys",
        )
        .unwrap();
        assert_eq!(back.as_bytes(), CODE.as_bytes());
        // Stubbing a stub changes nothing.
        assert_eq!(stub(&once, "ex1-split", &split).unwrap(), once);
    }

    #[test]
    fn crlf_files_keep_their_line_endings() {
        let crlf = CODE.replace('\n', "\r\n");
        let stubbed = stub(&crlf, "ex1-split", &note("m")).unwrap();
        assert!(!stubbed.replace("\r\n", "").contains('\n'));
        assert_eq!(restore(&stubbed, &crlf, "ex1-split").unwrap(), crlf);
    }

    #[test]
    fn region_must_be_a_whole_body() {
        let partial = "fn f(a: u8) {\n    let b = a;\n    // ANCHOR: ex1-x\n    b;\n    // ANCHOR_END: ex1-x\n}\n";
        let err = stub(partial, "ex1-x", &note("m")).unwrap_err().to_string();
        assert!(err.contains("whole body of `fn f`"), "{err}");
        let trailing = "fn f(a: u8) {\n    // ANCHOR: ex1-x\n    a;\n    // ANCHOR_END: ex1-x\n    a;\n}\n";
        assert!(
            stub(trailing, "ex1-x", &note("m"))
                .unwrap_err()
                .to_string()
                .contains("closing")
        );
        let outside = "// ANCHOR: ex1-x\nstruct S;\n// ANCHOR_END: ex1-x\n";
        assert!(
            stub(outside, "ex1-x", &note("m"))
                .unwrap_err()
                .to_string()
                .contains("not inside a function")
        );
    }

    #[test]
    fn markers_are_found_and_checked() {
        assert_eq!(
            exercise_anchors(CODE),
            [("ex1-split".to_string(), 4), ("ex1-keys".to_string(), 15)]
        );
        assert_eq!(
            find(CODE, "ex1-split").unwrap(),
            Region { open: 3, close: 9 }
        );
        assert!(
            find(CODE, "ex1-spl")
                .unwrap_err()
                .to_string()
                .contains("no `// ANCHOR: ex1-spl`")
        );
        let twice = format!("{CODE}// ANCHOR: ex1-keys\n");
        assert!(
            find(&twice, "ex1-keys")
                .unwrap_err()
                .to_string()
                .contains("more than once")
        );
        let unclosed = "fn f() {\n// ANCHOR: ex2-a\n}\n";
        assert!(
            find(unclosed, "ex2-a")
                .unwrap_err()
                .to_string()
                .contains("no `// ANCHOR_END")
        );
        assert_eq!(
            marker_name("    // ANCHOR: ex1-a rest", "ANCHOR:"),
            Some("ex1-a")
        );
        assert_eq!(marker_name("let s = \"ANCHOR: ex1-a\";", "ANCHOR:"), None);
        assert_eq!(exercise_stage("ex12-a-b"), Some(12));
        assert_eq!(exercise_stage("ex-a"), None);
        assert_eq!(exercise_stage("ex1-"), None);
        assert_eq!(exercise_stage("example-1"), None);
    }

    #[test]
    fn fn_keyword_is_an_item_not_a_type() {
        assert_eq!(fn_keyword("pub fn f("), Some(4));
        assert_eq!(fn_keyword("    async fn g<T>("), Some(10));
        assert_eq!(fn_keyword("where F: Fn(u8) -> u8,"), None);
        assert_eq!(fn_keyword("    f: fn(u8) -> u8,"), None);
        assert_eq!(fn_keyword("let define = 1;"), None);
    }
}
