//! Bearer tokens: mirrors kube-apiserver's `--token-file`
//! (`pkg/authentication/token/tokenfile`) behind the `WithAuthentication` filter
//! (`pkg/authentication/request/bearertoken`).
//!
//! The file has one `token,user` a line (further comma-separated columns, uid and
//! groups upstream, are ignored; blank lines and `#` comments are skipped). With a
//! token file every request except the health checks needs `Authorization: Bearer
//! <token>`, else 401 `Unauthorized`. Without one there is no authentication: the
//! server binds loopback by default.

use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;

use axum::extract::{Request, State};
use axum::http::header;
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use crate::status::ApiError;
use crate::{AppState, ServerError};

/// The user a request was authenticated as (a request extension).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct User(pub String);

/// Mirrors `tokenfile.TokenAuthenticator`: token → user.
#[derive(Clone, Debug, Default)]
pub struct TokenAuthenticator {
    tokens: HashMap<String, String>,
}

impl TokenAuthenticator {
    /// Mirrors `tokenfile.NewCSV`: reads `token,user` lines.
    pub fn from_file(path: &Path) -> Result<TokenAuthenticator, ServerError> {
        let text = std::fs::read_to_string(path).map_err(|e| {
            ServerError::TokenFile(format!("cannot read {}: {e}", path.display()))
        })?;
        TokenAuthenticator::parse(&text)
            .map_err(|e| ServerError::TokenFile(format!("{}: {e}", path.display())))
    }

    /// Parses the file's text.
    pub fn parse(text: &str) -> Result<TokenAuthenticator, String> {
        let mut tokens = HashMap::new();
        for (i, line) in text.lines().enumerate() {
            let line = line.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let mut columns = line.split(',').map(str::trim);
            match (columns.next(), columns.next()) {
                (Some(token), Some(user))
                    if !token.is_empty() && !user.is_empty() =>
                {
                    tokens.insert(token.to_string(), user.to_string());
                }
                _ => {
                    return Err(format!(
                        "line {}: expected `token,user`, got {line:?}",
                        i + 1
                    ));
                }
            }
        }
        Ok(TokenAuthenticator { tokens })
    }

    /// The user of an `Authorization` header value, if it carries a known bearer
    /// token.
    pub fn authenticate(&self, authorization: &str) -> Option<&str> {
        let (scheme, token) = authorization.trim().split_once(' ')?;
        if !scheme.eq_ignore_ascii_case("bearer") {
            return None;
        }
        self.tokens.get(token.trim()).map(String::as_str)
    }
}

/// Paths anyone may read, like the `system:public-info-viewer` role allows.
fn is_public(path: &str) -> bool {
    matches!(path, "/healthz" | "/readyz" | "/livez")
}

/// The authentication filter (`filters.WithAuthentication`): 401 `Status` unless the
/// request carries a valid bearer token, when a token file is configured.
pub async fn authenticate(
    State(state): State<Arc<AppState>>,
    mut request: Request,
    next: Next,
) -> Response {
    let Some(tokens) = &state.tokens else {
        return next.run(request).await;
    };
    if is_public(request.uri().path()) {
        return next.run(request).await;
    }
    let user = request
        .headers()
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| tokens.authenticate(v))
        .map(str::to_string);
    match user {
        Some(user) => {
            request.extensions_mut().insert(User(user));
            next.run(request).await
        }
        None => {
            let mut response = ApiError::unauthorized().into_response();
            response.headers_mut().insert(
                header::WWW_AUTHENTICATE,
                header::HeaderValue::from_static("Bearer"),
            );
            response
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn token_lines() {
        let auth =
            TokenAuthenticator::parse("# comment\nabc,alice,1,\"g\"\n\nxyz,bob\n")
                .unwrap();
        assert_eq!(auth.authenticate("Bearer abc"), Some("alice"));
        assert_eq!(auth.authenticate("bearer xyz"), Some("bob"));
        assert_eq!(auth.authenticate("Bearer nope"), None);
        assert_eq!(auth.authenticate("Basic abc"), None);
        assert!(TokenAuthenticator::parse("only-token\n").is_err());
    }
}
