//! Server-side printing: mirrors kubernetes' `pkg/printers` (`tablegenerator.go`,
//! `GenerateTable`; `storage/storage.go`, the `TableConvertor` every built-in
//! registry has) and apiserver's `pkg/registry/rest/table.go`
//! (`DefaultTableConvertor`, for a kind without a printer).
//!
//! A `meta.k8s.io/v1` `Table` is what `kubectl get` prints: column definitions
//! (name, type, format, description, priority) and one row of cells per object.
//! The server always generates the wide form (`GenerateOptions{Wide: true}`):
//! every column, priority 1 included; kubectl hides the columns with a priority
//! above 0 unless `-o wide`. The per-kind printers are in [`internalversion`];
//! the ages are apimachinery's `HumanDuration`
//! ([`apimachinery::util::duration`]).
//!
//! | Go                                                    | Rust                           |
//! |-------------------------------------------------------|--------------------------------|
//! | `metav1.Table`, `TableColumnDefinition`, `TableRow`   | [`Table`], [`Column`], [`TableRow`], [`RowObject`] |
//! | `HumanReadableGenerator.GenerateTable`                | [`generate_table`]             |
//! | `TableGenerator.TableHandler` (one kind's columns and print function) | [`TableHandler`] |
//! | `internalversion.AddHandlers`' registrations          | [`internalversion::POD`], [`internalversion::DEPLOYMENT`], [`internalversion::SERVICE`], [`internalversion::STATEFUL_SET`], [`internalversion::CSI_NODE`], ... |
//! | `printPod`, `printNode`, `printDeployment`, `printService`, ... | `internalversion::print_pod`, `internalversion::print_service`, ... |
//! | `translateTimestampSince`                             | `internalversion::translate_timestamp_since` |
//! | `duration.HumanDuration` (apimachinery)               | [`apimachinery::util::duration::human_duration`] |

pub mod internalversion;

use k8s_openapi::jiff::Timestamp;
use serde::Serialize;
use serde_json::Value;
use stage5_storage::Object;

/// Mirrors `metav1.TableColumnDefinition`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Column {
    /// The human-readable name, e.g. `Name` (kubectl prints it upper-cased).
    pub name: &'static str,
    /// The OpenAPI type of the cells: `string`, `integer`, `date`, ...
    #[serde(rename = "type")]
    pub type_: &'static str,
    /// The OpenAPI format: `name` for the column that names the object.
    pub format: &'static str,
    /// What the column shows (mostly the field's API documentation).
    pub description: &'static str,
    /// 0 for the default columns, 1 for those only `-o wide` shows.
    pub priority: i32,
}

/// Mirrors `metav1.TableRowCondition` (`Completed` for a finished pod).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct RowCondition {
    /// `Completed`.
    #[serde(rename = "type")]
    pub type_: &'static str,
    /// `True`.
    pub status: &'static str,
    /// `Succeeded` or `Failed`.
    pub reason: &'static str,
    /// A sentence for humans.
    pub message: &'static str,
}

/// Mirrors `metav1.TableRow`: the cells, conditions, and the object (as the
/// request's `includeObject` asks: `null`, a `PartialObjectMetadata` or the
/// object).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct TableRow {
    /// One cell per column: a string or an integer.
    pub cells: Vec<Value>,
    /// Row conditions, left out when empty.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub conditions: Vec<RowCondition>,
    /// The object the row is about.
    pub object: RowObject,
}

/// A row's `object`: built as a JSON value, or JSON the cache already holds,
/// written out as it is.
#[derive(Clone, Debug, Serialize)]
#[serde(untagged)]
pub enum RowObject {
    /// A value (`null` until the caller fills it).
    Value(Value),
    /// Encoded JSON, copied into the answer without being decoded.
    Raw(Box<serde_json::value::RawValue>),
}

impl PartialEq for RowObject {
    fn eq(&self, other: &Self) -> bool {
        match (self, other) {
            (RowObject::Value(a), RowObject::Value(b)) => a == b,
            (RowObject::Raw(a), RowObject::Raw(b)) => a.get() == b.get(),
            _ => false,
        }
    }
}

/// `metav1.ListMeta` as a Table, or any list this server writes, carries it.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct TableMeta {
    /// The list's (or the one object's) resourceVersion.
    #[serde(rename = "resourceVersion", skip_serializing_if = "String::is_empty")]
    pub resource_version: String,
    /// The continue token of a paged list.
    #[serde(rename = "continue", skip_serializing_if = "String::is_empty")]
    pub continue_token: String,
    /// How many more items a paged list has, when known.
    #[serde(rename = "remainingItemCount", skip_serializing_if = "Option::is_none")]
    pub remaining_item_count: Option<i64>,
}

/// Mirrors `metav1.Table`.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Table {
    /// `Table`.
    pub kind: &'static str,
    /// `meta.k8s.io/v1` (or `meta.k8s.io/v1beta1`).
    #[serde(rename = "apiVersion")]
    pub api_version: &'static str,
    /// resourceVersion, continue, remainingItemCount.
    pub metadata: TableMeta,
    /// The columns; `null` when the request asked for no headers (every watch
    /// event after the first).
    #[serde(rename = "columnDefinitions")]
    pub column_definitions: Option<&'static [Column]>,
    /// One row per object.
    pub rows: Vec<TableRow>,
}

/// Mirrors `printers.GenerateOptions` with `Wide: true`, as the server's
/// `TableConvertor` always asks.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct GenerateOptions {
    /// Leave the column definitions out (`TableOptions.NoHeaders`).
    pub no_headers: bool,
}

// ANCHOR: cell
/// One printed cell. Most are a value; an age is a time, rendered as the time
/// since it when the table is answered (`translateTimestampSince`), so a row
/// printed once stays right as the clock moves.
#[derive(Clone, Debug, PartialEq)]
pub enum Cell {
    /// A string or an integer.
    Value(Value),
    /// `prefix`, the time since `time` (`<unknown>` without one), `suffix`:
    /// `5m`, or `3 (5m ago)` for a pod's restarts.
    Since {
        /// Before the duration.
        prefix: String,
        /// The time the duration runs from.
        time: Option<Timestamp>,
        /// After the duration.
        suffix: &'static str,
    },
}
// ANCHOR_END: cell

impl Cell {
    /// The time since `time`, alone.
    pub fn since(time: Option<Timestamp>) -> Cell {
        Cell::Since {
            prefix: String::new(),
            time,
            suffix: "",
        }
    }

    /// The cell's value as of `now`.
    pub fn render(&self, now: Timestamp) -> Value {
        match self {
            Cell::Value(value) => value.clone(),
            Cell::Since {
                prefix,
                time,
                suffix,
            } => Value::from(format!(
                "{prefix}{}{suffix}",
                internalversion::translate_timestamp_since(*time, now)
            )),
        }
    }
}

impl From<Value> for Cell {
    fn from(value: Value) -> Self {
        Cell::Value(value)
    }
}

/// A print function: one object's cells, and its row conditions. The clock
/// is read only when the cells are rendered.
pub type PrintFunc = fn(&Object) -> (Vec<Cell>, Vec<RowCondition>);

/// What `internalversion.AddHandlers` registers for one kind
/// (`TableGenerator.TableHandler(columnDefinitions, printFunc)`): its columns and
/// the function that prints one object's cells (and, for a pod, its row
/// conditions). A kind's registry strategy names its handler.
#[derive(Clone, Copy, Debug)]
pub struct TableHandler {
    /// The column definitions (`AddHandlers`' `...ColumnDefinitions`).
    pub columns: &'static [Column],
    /// The print function (`printPod`, ...): the cells, ages still to render.
    pub print: PrintFunc,
}

impl TableHandler {
    /// One row for `obj` as of `now`, its `object` left `null` (the caller fills
    /// it as `includeObject` asks).
    pub fn row(&self, obj: &Object, now: Timestamp) -> TableRow {
        let (cells, conditions) = (self.print)(obj);
        TableRow {
            cells: cells.iter().map(|cell| cell.render(now)).collect(),
            conditions,
            object: RowObject::Value(Value::Null),
        }
    }
}

/// Mirrors `HumanReadableGenerator.GenerateTable` for a list or one object of
/// one kind, printed by its `handler`: the kind's columns (none with
/// `no_headers`) and one row per object, printed as of `now`. Each row's
/// `object` is left `null`; the caller fills it as `includeObject` asks
/// (`asTable`).
pub fn generate_table(
    handler: &TableHandler,
    objects: &[&Object],
    metadata: TableMeta,
    options: GenerateOptions,
    now: Timestamp,
) -> Table {
    let rows = objects.iter().map(|obj| handler.row(obj, now)).collect();
    Table {
        kind: "Table",
        api_version: "meta.k8s.io/v1",
        metadata,
        column_definitions: (!options.no_headers).then_some(handler.columns),
        rows,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_printed_cell_renders_its_age_as_of_each_answer() {
        let created: Timestamp = "2026-01-01T00:00:00Z".parse().unwrap();
        let restarts = Cell::Since {
            prefix: "3 (".into(),
            time: Some(created),
            suffix: " ago)",
        };
        let at = |rfc3339: &str| rfc3339.parse::<Timestamp>().unwrap();
        assert_eq!(restarts.render(at("2026-01-01T00:05:00Z")), "3 (5m ago)");
        assert_eq!(restarts.render(at("2026-01-01T02:00:00Z")), "3 (120m ago)");
        assert_eq!(
            Cell::since(None).render(at("2026-01-01T00:00:00Z")),
            "<unknown>"
        );
        let plain = Cell::from(Value::from("Running"));
        assert_eq!(plain.render(at("2030-01-01T00:00:00Z")), "Running");
    }
}
