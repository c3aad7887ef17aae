//! One tab: evaluating JavaScript, waiting on the DOM, emulating, screenshots.

use std::sync::{Arc, Mutex as StdMutex, Weak};
use std::time::Duration;

use base64::Engine as _;
use serde_json::{Value, json};
use tokio::sync::mpsc::UnboundedReceiver;

use crate::connection::{COMMAND_TIMEOUT, Connection, Event};
use crate::{Error, lock};

/// What `wait_for` allows beyond its own timeout, for the page's answer to
/// arrive, and for evaluating its `describe` expression.
const WAIT_SLACK: Duration = Duration::from_secs(5);

/// How the page-side wait says it timed out; what the condition last threw follows.
const WAIT_TIMED_OUT: &str = "chromium-driver: wait_for timed out; last thrown: ";

/// An open tab, attached through its own CDP session.
pub struct Page {
    connection: Arc<Connection>,
    session: String,
    console: Arc<StdMutex<Vec<String>>>,
}

impl Page {
    /// Attaches to `session` and starts collecting its console errors.
    pub(crate) fn attach(
        connection: Arc<Connection>,
        session: String,
    ) -> Result<Page, Error> {
        let console = Arc::new(StdMutex::new(Vec::new()));
        let subscriber =
            console_subscriber(session.clone(), Arc::downgrade(&console));
        connection.subscribe(subscriber)?;
        Ok(Page {
            connection,
            session,
            console,
        })
    }

    /// Sets the viewport and enables the Page and Runtime domains.
    pub(crate) async fn prepare(
        &self,
        width: u32,
        height: u32,
    ) -> Result<(), Error> {
        let metrics = json!({
            "width": width,
            "height": height,
            "deviceScaleFactor": 1,
            "mobile": false,
        });
        self.call("Emulation.setDeviceMetricsOverride", metrics)
            .await?;
        self.call("Page.enable", json!({})).await?;
        self.call("Runtime.enable", json!({})).await?;
        Ok(())
    }

    /// Navigates to `url` and waits (at most 30 s) for the new document's load event.
    pub(crate) async fn navigate(&self, url: &str) -> Result<(), Error> {
        let mut events = self.connection.events(&self.session)?;
        let answer = self.call("Page.navigate", json!({ "url": url })).await?;
        let failed = answer.get("errorText").and_then(Value::as_str);
        if let Some(error) = failed.filter(|error| !error.is_empty()) {
            let message = format!("{url}: {error}");
            return Err(Error::Cdp {
                method: "Page.navigate",
                message,
            });
        }
        // A same-document navigation has no loader, and fires no load event.
        let Some(loader) = answer.get("loaderId").and_then(Value::as_str) else {
            return Ok(());
        };
        let loaded =
            tokio::time::timeout(COMMAND_TIMEOUT, loaded(&mut events, loader));
        let timeout = Error::Timeout {
            method: "Page.loadEventFired",
        };
        loaded.await.map_err(|_| timeout)?
    }

    /// Evaluates `expression` in the page and returns its value.
    ///
    /// A promise is awaited. The value comes back as JSON (`null` for
    /// `undefined`; `NaN`, `Infinity` and BigInts as strings). If the expression
    /// throws, or its promise rejects, the error holds the exception's text and
    /// description.
    pub async fn eval(&self, expression: &str) -> Result<Value, Error> {
        self.evaluate(expression, COMMAND_TIMEOUT).await
    }

    /// Waits until the JavaScript expression `condition` is truthy.
    ///
    /// The page checks it at once and again after every DOM mutation (no
    /// polling); an exception while checking counts as false. If it is still
    /// false after `timeout`, the error holds `describe` evaluated in the page
    /// (an expression giving a string, e.g. `document.body.innerText`), so a
    /// failing test shows what the page showed.
    pub async fn wait_for(
        &self,
        condition: &str,
        timeout: Duration,
        describe: &str,
    ) -> Result<(), Error> {
        let script = wait_script(condition, timeout);
        let Err(error) = self.evaluate(&script, timeout + WAIT_SLACK).await else {
            return Ok(());
        };
        match timed_out(&error) {
            Some(thrown) => {
                Err(self.not_met(condition, timeout, thrown, describe).await)
            }
            None => Err(error),
        }
    }

    /// Emulates `prefers-color-scheme: dark` (or `light`).
    pub async fn set_color_scheme(&self, dark: bool) -> Result<(), Error> {
        let value = if dark { "dark" } else { "light" };
        let features = json!([{ "name": "prefers-color-scheme", "value": value }]);
        let params = json!({ "features": features });
        self.call("Emulation.setEmulatedMedia", params).await?;
        Ok(())
    }

    /// A PNG of the viewport, as its bytes.
    pub async fn screenshot(&self) -> Result<Vec<u8>, Error> {
        let method = "Page.captureScreenshot";
        let params = json!({ "format": "png", "captureBeyondViewport": false });
        let answer = self.call(method, params).await?;
        let data = answer
            .get("data")
            .and_then(Value::as_str)
            .unwrap_or_default();
        let decoded = base64::engine::general_purpose::STANDARD.decode(data);
        decoded.map_err(|error| Error::Cdp {
            method,
            message: format!("bad data: {error}"),
        })
    }

    /// What the page logged with `console.error` or `console.warn`, and the
    /// exceptions nobody caught, since it was opened.
    pub fn console_errors(&self) -> Vec<String> {
        lock(&self.console).clone()
    }

    /// Sends `method` to this tab's session.
    async fn call(
        &self,
        method: &'static str,
        params: Value,
    ) -> Result<Value, Error> {
        self.connection
            .call(Some(&self.session), method, params)
            .await
    }

    /// `Runtime.evaluate`, waiting up to `limit` for its answer.
    async fn evaluate(
        &self,
        expression: &str,
        limit: Duration,
    ) -> Result<Value, Error> {
        let params = json!({
            "expression": expression,
            "awaitPromise": true,
            "returnByValue": true,
        });
        let session = Some(self.session.as_str());
        let call =
            self.connection
                .call_within(session, "Runtime.evaluate", params, limit);
        let answer = call.await?;
        if let Some(details) = answer.get("exceptionDetails") {
            let (text, description) = exception_parts(details);
            return Err(Error::Exception { text, description });
        }
        Ok(value_of(&answer["result"]))
    }

    /// The error of a `wait_for` that timed out, with `describe`'s view of the page.
    async fn not_met(
        &self,
        condition: &str,
        timeout: Duration,
        thrown: &str,
        describe: &str,
    ) -> Error {
        let page = match self.evaluate(describe, WAIT_SLACK).await {
            Ok(Value::String(text)) => text,
            Ok(other) => other.to_string(),
            Err(error) => format!("(describing the page failed: {error})"),
        };
        Error::WaitTimeout {
            condition: condition.to_owned(),
            timeout,
            last_thrown: thrown.to_owned(),
            page,
        }
    }
}

/// Waits for the load event of the document `loader` brings: its main-frame
/// commit first, then the next `Page.loadEventFired`.
async fn loaded(
    events: &mut UnboundedReceiver<Event>,
    loader: &str,
) -> Result<(), Error> {
    let mut committed = false;
    while let Some(event) = events.recv().await {
        match event.method.as_str() {
            "Page.frameNavigated" => {
                committed |= is_commit_of(&event.params, loader)
            }
            "Page.loadEventFired" if committed => return Ok(()),
            _ => {}
        }
    }
    Err(Error::Closed)
}

/// Whether a `Page.frameNavigated` is the main frame committing `loader`'s document.
fn is_commit_of(params: &Value, loader: &str) -> bool {
    let frame = &params["frame"];
    frame.get("parentId").is_none() && frame["loaderId"].as_str() == Some(loader)
}

/// The JavaScript promise `wait_for` evaluates: it checks `condition` now and
/// after each DOM mutation, and rejects with [`WAIT_TIMED_OUT`] after `timeout`.
pub(crate) fn wait_script(condition: &str, timeout: Duration) -> String {
    // A JSON string is a JavaScript string literal.
    let marker = Value::from(WAIT_TIMED_OUT);
    let millis = timeout.as_millis();
    format!(
        r#"new Promise((resolve, reject) => {{
  let thrown = "";
  const met = () => {{
    try {{
      return Boolean((
{condition}
      ));
    }} catch (error) {{
      thrown = String(error);
      return false;
    }}
  }};
  if (met()) {{
    resolve(true);
    return;
  }}
  const observer = new MutationObserver(() => {{
    if (met()) {{
      observer.disconnect();
      clearTimeout(timer);
      resolve(true);
    }}
  }});
  const timer = setTimeout(() => {{
    observer.disconnect();
    reject({marker} + thrown);
  }}, {millis});
  observer.observe(document, {{
    subtree: true,
    childList: true,
    characterData: true,
    attributes: true,
  }});
}})"#
    )
}

/// What the condition last threw, if `error` is a `wait_for` running out of time
/// (in the page, or on this side).
fn timed_out(error: &Error) -> Option<&str> {
    match error {
        Error::Timeout { .. } => Some(""),
        Error::Exception { description, .. } => {
            description.strip_prefix(WAIT_TIMED_OUT)
        }
        _ => None,
    }
}

/// The JSON value of a `RemoteObject` returned by value.
fn value_of(object: &Value) -> Value {
    if let Some(value) = object.get("value") {
        return value.clone();
    }
    match object.get("unserializableValue") {
        Some(Value::String(text)) => Value::String(text.clone()),
        _ => Value::Null,
    }
}

/// The text (e.g. `Uncaught`) and description (e.g. `Error: …` with its stack)
/// of an `ExceptionDetails`.
fn exception_parts(details: &Value) -> (String, String) {
    let text = details["text"].as_str().unwrap_or_default().to_owned();
    let exception = &details["exception"];
    let description = match exception.get("description") {
        Some(Value::String(description)) => description.clone(),
        _ => shown(exception),
    };
    (text, description)
}

/// A `RemoteObject` as a person would read it: a string as itself, else its
/// value or description.
fn shown(object: &Value) -> String {
    match (object.get("value"), object.get("description")) {
        (Some(Value::String(text)), _) => text.clone(),
        (Some(value), _) => value.to_string(),
        (None, Some(Value::String(description))) => description.clone(),
        _ => object["type"].as_str().unwrap_or_default().to_owned(),
    }
}

/// The line to keep for a console event, if it is an error, a warning or an
/// uncaught exception.
pub(crate) fn console_line(event: &Event) -> Option<String> {
    let params = &event.params;
    match event.method.as_str() {
        "Runtime.consoleAPICalled" => {
            let kind = params["type"].as_str()?;
            let args = params["args"].as_array()?;
            let args: Vec<String> = args.iter().map(shown).collect();
            matches!(kind, "error" | "warning")
                .then(|| format!("{kind}: {}", args.join(" ")))
        }
        "Runtime.exceptionThrown" => {
            let (text, description) = exception_parts(&params["exceptionDetails"]);
            Some(format!("{text} {description}").trim().to_owned())
        }
        _ => None,
    }
}

/// Keeps `session`'s console errors in `log` for as long as the page lives.
fn console_subscriber(
    session: String,
    log: Weak<StdMutex<Vec<String>>>,
) -> crate::connection::Subscriber {
    Box::new(move |event| {
        let Some(log) = log.upgrade() else {
            return false;
        };
        if event.session.as_deref() == Some(session.as_str()) {
            lock(&log).extend(console_line(event));
        }
        true
    })
}
