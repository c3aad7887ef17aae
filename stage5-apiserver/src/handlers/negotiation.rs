//! Which representation a `GET` answers with: mirrors apiserver's
//! `pkg/endpoints/handlers/negotiation/negotiate.go` (`NegotiateOutputMediaType`,
//! `NegotiateMediaTypeOptions`, `acceptMediaTypeOptions`), the Accept parser it
//! uses (munnerz/goautoneg's `ParseAccept`), and the `RequestScope`'s endpoint
//! restrictions (`AllowsMediaTypeTransform`, `AllowsServerVersion`,
//! `AllowsStreamSchema`) from `handlers/rest.go`.
//!
//! The Accept header is a list of clauses (`type/subtype;param=value;q=0.5`),
//! sorted by quality. The first clause that matches a served media type
//! (`application/json`, `application/vnd.kubernetes.protobuf`, or
//! `application/*`, `*/*`, which pick JSON) and whose parameters the endpoint
//! allows wins: `as`, `g`, `v` ask for a conversion (a
//! `meta.k8s.io/v1` `Table`, `PartialObjectMetadata` or
//! `PartialObjectMetadataList`; `v1beta1` too), `stream=watch` and `sv=v1` are
//! allowed, other parameters are ignored. kubectl sends
//! `application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json`
//! and gets a v1 Table. No header, or an empty one, is plain JSON; a header that
//! no clause of satisfies is 406 `NotAcceptable`.

use std::collections::BTreeMap;

use crate::status::ApiError;

/// The media types this server serializes: `MediaTypesForSerializer`'s list.
/// (kube-apiserver also serves `application/yaml`.)
pub const SUPPORTED_MEDIA_TYPES: &[&str] =
    &["application/json", "application/vnd.kubernetes.protobuf"];

/// The serializer a clause chose: `SerializerInfo`'s media type.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum MediaType {
    /// `application/json`.
    #[default]
    Json,
    /// `application/vnd.kubernetes.protobuf`.
    Protobuf,
}

impl MediaType {
    /// The answer's `Content-Type`.
    pub fn content_type(self) -> &'static str {
        match self {
            MediaType::Json => "application/json",
            MediaType::Protobuf => {
                apimachinery::runtime::serializer::protobuf::CONTENT_TYPE
            }
        }
    }

    /// A watch's `Content-Type`: JSON's stream is JSON; protobuf's says
    /// `stream=watch`.
    pub fn watch_content_type(self) -> &'static str {
        match self {
            MediaType::Json => "application/json",
            MediaType::Protobuf => {
                apimachinery::runtime::serializer::protobuf::WATCH_CONTENT_TYPE
            }
        }
    }
}

/// A `schema.GroupVersionKind` that a client asked the answer to be converted to.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct GroupVersionKind {
    /// `g=`, e.g. `meta.k8s.io`.
    pub group: String,
    /// `v=`, e.g. `v1`.
    pub version: String,
    /// `as=`, e.g. `Table`.
    pub kind: String,
}

/// Mirrors `MediaTypeOptions`: what the chosen clause asked for.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct MediaTypeOptions {
    /// The serializer of the chosen clause.
    pub media_type: MediaType,
    /// `pretty=1`.
    pub pretty: bool,
    /// `stream=watch`.
    pub stream: String,
    /// `as`/`g`/`v`: the conversion asked for, if any.
    pub convert: Option<GroupVersionKind>,
    /// `sv=`.
    pub use_server_version: String,
    /// Parameters this server does not know (ignored).
    pub unrecognized: Vec<String>,
}

/// One clause of an Accept header: mirrors goautoneg's `Accept`.
#[derive(Clone, Debug, PartialEq)]
pub struct AcceptClause {
    /// `application`, or `*`.
    pub type_: String,
    /// `json`, or `*`.
    pub sub_type: String,
    /// The quality, `q=` (1 by default, 0 when it does not parse).
    pub q: f64,
    /// Every other parameter; a repeated name keeps its last value.
    pub params: BTreeMap<String, String>,
}

/// Go's `strings.Index`-based split at the first `sep`.
fn next_split_element(s: &str, sep: char) -> (&str, &str) {
    match s.find(sep) {
        Some(i) => (&s[..i], &s[i + 1..]),
        None => (s, ""),
    }
}

fn trim_spaces(s: &str) -> &str {
    s.trim_matches(' ')
}

/// goautoneg's `acceptSlice.Less`, kept as it is: a higher quality first, then
/// a concrete type or subtype before a wildcard (without looking at quality
/// again, so it is not a strict order).
fn less(a: &AcceptClause, b: &AcceptClause) -> bool {
    if a.q > b.q {
        return true;
    }
    if a.type_ != "*" && b.type_ == "*" {
        return true;
    }
    a.sub_type != "*" && b.sub_type == "*"
}

/// Mirrors goautoneg's `ParseAccept`: splits at `,` and `;`, trims spaces, skips
/// a malformed media range (`text`, `a/b/c`) or parameter (`x`, `a=b=c`), reads
/// `q` as a float (0 if it does not parse), and sorts. Go sorts with
/// `sort.Sort`, an insertion sort for up to 12 clauses; this is that insertion
/// sort for any number.
pub fn parse_accept(header: &str) -> Vec<AcceptClause> {
    let mut clauses = Vec::new();
    let mut remaining = header;
    while !remaining.is_empty() {
        let (part, rest) = next_split_element(remaining, ',');
        remaining = rest;
        let part = trim_spaces(part);
        let (range, mut params_text) = next_split_element(part, ';');
        let (type_, after_slash) = next_split_element(range, '/');
        let type_ = trim_spaces(type_).to_string();
        let sub_type = if after_slash.is_empty() {
            if type_ == "*" {
                "*".to_string()
            } else {
                continue;
            }
        } else {
            let (sub, extra) = next_split_element(after_slash, '/');
            if !extra.is_empty() {
                continue;
            }
            trim_spaces(sub).to_string()
        };
        let mut clause = AcceptClause {
            type_,
            sub_type,
            q: 1.0,
            params: BTreeMap::new(),
        };
        while !params_text.is_empty() {
            let (param, rest) = next_split_element(params_text, ';');
            params_text = rest;
            let (token, value) = next_split_element(param, '=');
            if value.is_empty() {
                continue;
            }
            let (value, extra) = next_split_element(value, '=');
            if !extra.is_empty() {
                continue;
            }
            let token = trim_spaces(token);
            if token == "q" {
                clause.q = value.parse::<f32>().map_or(0.0, f64::from);
            } else {
                clause
                    .params
                    .insert(token.to_string(), trim_spaces(value).to_string());
            }
        }
        clauses.push(clause);
    }
    for i in 1..clauses.len() {
        let mut j = i;
        while j > 0 && less(&clauses[j], &clauses[j - 1]) {
            clauses.swap(j, j - 1);
            j -= 1;
        }
    }
    clauses
}

/// Mirrors `RequestScope.AllowsMediaTypeTransform` for a built-in resource: no
/// conversion is always fine; a `Table` in `meta.k8s.io/v1` or `v1beta1` as
/// JSON (or YAML); `PartialObjectMetadata` and `PartialObjectMetadataList` in
/// either version; nothing else.
pub fn allows_media_type_transform(
    mime_type: &str,
    mime_sub_type: &str,
    target: Option<&GroupVersionKind>,
) -> bool {
    let Some(target) = target else {
        return true;
    };
    if target.group != "meta.k8s.io"
        || !matches!(target.version.as_str(), "v1" | "v1beta1")
    {
        return false;
    }
    match target.kind.as_str() {
        "Table" => {
            mime_type == "application" && matches!(mime_sub_type, "json" | "yaml")
        }
        "PartialObjectMetadata" | "PartialObjectMetadataList" => true,
        _ => false,
    }
}

/// Mirrors `acceptMediaTypeOptions` for the JSON or protobuf serializer (both
/// can stream): `None` if the clause's parameters are not allowed here.
fn accept_media_type_options(
    params: &BTreeMap<String, String>,
    media_type: MediaType,
) -> Option<MediaTypeOptions> {
    let mut options = MediaTypeOptions {
        media_type,
        ..MediaTypeOptions::default()
    };
    for (key, value) in params {
        match key.as_str() {
            "as" => {
                options.convert.get_or_insert_with(Default::default).kind =
                    value.clone()
            }
            "g" => {
                options.convert.get_or_insert_with(Default::default).group =
                    value.clone()
            }
            "v" => {
                options.convert.get_or_insert_with(Default::default).version =
                    value.clone();
            }
            // `AllowsStreamSchema`: only `watch`.
            "stream" => {
                if !value.is_empty() && value != "watch" {
                    return None;
                }
                options.stream = value.clone();
            }
            // `AllowsServerVersion`: the meta group version's, `v1`.
            "sv" => {
                if !value.is_empty() && value != "v1" {
                    return None;
                }
                options.use_server_version = value.clone();
            }
            "export" => {}
            "pretty" => options.pretty = value == "1",
            _ => options.unrecognized.push(key.clone()),
        }
    }
    let sub_type = match media_type {
        MediaType::Json => "json",
        MediaType::Protobuf => "vnd.kubernetes.protobuf",
    };
    if !allows_media_type_transform(
        "application",
        sub_type,
        options.convert.as_ref(),
    ) {
        return None;
    }
    Some(options)
}

/// Mirrors `NegotiateMediaTypeOptions`: the options of the first clause (in
/// sorted order) that names a served media type and whose parameters are
/// allowed; `None` if there is none. An empty header is plain JSON.
pub fn negotiate_media_type_options(header: &str) -> Option<MediaTypeOptions> {
    if header.is_empty() {
        return Some(MediaTypeOptions::default());
    }
    parse_accept(header).iter().find_map(|clause| {
        let media_type = match (clause.type_.as_str(), clause.sub_type.as_str()) {
            ("application", "json" | "*") | ("*", "*") => MediaType::Json,
            ("application", "vnd.kubernetes.protobuf") => MediaType::Protobuf,
            _ => return None,
        };
        accept_media_type_options(&clause.params, media_type)
    })
}

/// Mirrors `NegotiateOutputMediaType`: the negotiated options, or 406
/// `NotAcceptable` listing the served media types.
pub fn negotiate_output_media_type(
    accept: &str,
) -> Result<MediaTypeOptions, ApiError> {
    negotiate_media_type_options(accept).ok_or_else(|| {
        ApiError::not_acceptable(format!(
            "only the following media types are accepted: {}",
            SUPPORTED_MEDIA_TYPES.join(", ")
        ))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table(version: &str) -> Option<GroupVersionKind> {
        Some(GroupVersionKind {
            group: "meta.k8s.io".into(),
            version: version.into(),
            kind: "Table".into(),
        })
    }

    #[test]
    fn kubectls_accept_list_picks_the_v1_table() {
        let kubectl = "application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json";
        let chosen = negotiate_media_type_options(kubectl).unwrap();
        assert_eq!(chosen.convert, table("v1"));
        let beta =
            "application/json;as=Table;v=v1beta1;g=meta.k8s.io, application/json";
        assert_eq!(
            negotiate_media_type_options(beta).unwrap().convert,
            table("v1beta1")
        );
    }

    #[test]
    fn an_unservable_conversion_falls_through_to_the_next_clause_or_406() {
        let other = "application/json;as=Table;g=other;v=v1";
        assert_eq!(negotiate_media_type_options(other), None);
        let error = negotiate_output_media_type(other).unwrap_err();
        assert_eq!(error.code(), 406);
        assert_eq!(error.status.reason.as_deref(), Some("NotAcceptable"));
        assert_eq!(
            error.status.message.as_deref(),
            Some(
                "only the following media types are accepted: application/json, application/vnd.kubernetes.protobuf"
            )
        );
        let with_fallback =
            "application/json;as=Table;g=other;v=v1, application/json";
        assert_eq!(
            negotiate_media_type_options(with_fallback).unwrap().convert,
            None
        );
        // `as` without a group and version is no known conversion.
        assert_eq!(
            negotiate_media_type_options("application/json;as=Table"),
            None
        );
        assert_eq!(negotiate_media_type_options("application/yaml"), None);
        assert_eq!(
            negotiate_media_type_options("application/json;stream=other"),
            None
        );
        assert_eq!(negotiate_media_type_options("application/json;sv=v2"), None);
    }

    #[test]
    fn wildcards_empty_headers_and_quality() {
        assert_eq!(
            negotiate_media_type_options(""),
            Some(MediaTypeOptions::default())
        );
        for (header, media_type) in [
            ("*/*", MediaType::Json),
            ("*", MediaType::Json),
            ("application/*", MediaType::Json),
            (
                "application/vnd.kubernetes.protobuf, */*",
                MediaType::Protobuf,
            ),
            (
                "application/json, application/vnd.kubernetes.protobuf",
                MediaType::Json,
            ),
            (
                "application/vnd.kubernetes.protobuf;q=0.5, application/json",
                MediaType::Json,
            ),
        ] {
            let chosen = negotiate_media_type_options(header);
            assert_eq!(
                chosen.map(|o| (o.media_type, o.convert)),
                Some((media_type, None)),
                "{header}"
            );
        }
        // A Table is JSON only (`AllowsMediaTypeTransform`); metadata alone may
        // be protobuf.
        let table = "application/vnd.kubernetes.protobuf;as=Table;v=v1;g=meta.k8s.io, application/json";
        let chosen = negotiate_media_type_options(table).unwrap();
        assert_eq!((chosen.media_type, chosen.convert), (MediaType::Json, None));
        let metadata = "application/vnd.kubernetes.protobuf;as=PartialObjectMetadataList;v=v1;g=meta.k8s.io";
        let chosen = negotiate_media_type_options(metadata).unwrap();
        assert_eq!(chosen.media_type, MediaType::Protobuf);
        assert_eq!(chosen.convert.unwrap().kind, "PartialObjectMetadataList");
        // The higher quality clause wins, whatever the order.
        let header = "application/json;q=0.5, application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1";
        assert_eq!(
            negotiate_media_type_options(header)
                .unwrap()
                .convert
                .unwrap()
                .kind,
            "PartialObjectMetadataList"
        );
        let clauses = parse_accept(
            "text/html;q=0.2, a/b/c, application/json ; charset=utf-8; q=x",
        );
        assert_eq!(clauses.len(), 2);
        assert_eq!(clauses[0].type_, "text");
        assert_eq!(clauses[1].q, 0.0);
        assert_eq!(clauses[1].params["charset"], "utf-8");
    }
}
