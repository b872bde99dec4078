//! A sweep's one tidy table: one row per flow per run, with the run's index, the swept keys and
//! the seed as columns beside the flow's `flows.csv` figures and the run's summary figures;
//! written as Parquet (and CSV on request) with the per-run metadata beside it.
//!
//! The table is a function of the sweep and its [`RunRecord`]s alone (sorted by run, columns
//! typed from the values), so two executors that produce the same records write the same bytes.

use crate::sweep::{RunRecord, Sweep};
use concord_sim::scenario::OverrideValue;
use parquet::basic::{LogicalType, Repetition, Type as PhysicalType};
use parquet::data_type::{BoolType, ByteArray, ByteArrayType, DoubleType, Int64Type};
use parquet::file::properties::WriterProperties;
use parquet::file::writer::SerializedFileWriter;
use parquet::schema::types::Type;
use std::fmt::Write as _;
use std::path::Path;
use std::sync::Arc;

/// A column's values; `None` is a missing value (an empty CSV field).
#[derive(Clone, Debug, PartialEq)]
pub enum ColumnData {
    /// 64-bit integers.
    Int(Vec<Option<i64>>),
    /// Doubles.
    Float(Vec<Option<f64>>),
    /// Booleans.
    Bool(Vec<Option<bool>>),
    /// UTF-8 strings.
    Str(Vec<Option<String>>),
}

impl ColumnData {
    fn len(&self) -> usize {
        match self {
            ColumnData::Int(v) => v.len(),
            ColumnData::Float(v) => v.len(),
            ColumnData::Bool(v) => v.len(),
            ColumnData::Str(v) => v.len(),
        }
    }

    /// Row `i` as CSV text (empty when missing).
    fn csv(&self, i: usize) -> String {
        match self {
            ColumnData::Int(v) => v[i].map(|x| x.to_string()).unwrap_or_default(),
            ColumnData::Float(v) => v[i].map(|x| x.to_string()).unwrap_or_default(),
            ColumnData::Bool(v) => v[i].map(|x| x.to_string()).unwrap_or_default(),
            ColumnData::Str(v) => v[i].as_deref().map(csv_field).unwrap_or_default(),
        }
    }
}

/// A named column.
#[derive(Clone, Debug, PartialEq)]
pub struct Column {
    /// The name (a swept key's dotted path, or a `flows.csv` / `summary.json` name).
    pub name: String,
    /// The values.
    pub data: ColumnData,
}

/// The tidy table of a sweep.
#[derive(Clone, Debug, PartialEq)]
pub struct TidyTable {
    /// The columns, all of the same length.
    pub columns: Vec<Column>,
}

/// The run-level figures of `summary.json` repeated on each of the run's rows.
const RUN_FIGURES: [&str; 8] = [
    "scenario",
    "total_goodput_bps",
    "jain_index",
    "bottleneck",
    "bottleneck_utilisation",
    "bottleneck_drops",
    "bottleneck_marks",
    "events",
];

impl TidyTable {
    /// Rows.
    pub fn rows(&self) -> usize {
        self.columns.first().map_or(0, |c| c.data.len())
    }

    /// The table of `sweep` from its `records`, which must hold every run once.
    pub fn build(sweep: &Sweep, records: &[RunRecord]) -> Result<TidyTable, String> {
        let mut sorted: Vec<&RunRecord> = records.iter().collect();
        sorted.sort_by_key(|r| r.run);
        for (i, r) in sorted.iter().enumerate() {
            if r.run != i {
                return Err(format!(
                    "run {i} of the sweep has {} records",
                    if r.run > i { "no" } else { "two" }
                ));
            }
        }
        if sorted.len() != sweep.len() {
            return Err(format!(
                "the sweep has {} runs but {} records",
                sweep.len(),
                sorted.len()
            ));
        }
        let seeds = sweep.seeds.len().max(1);
        // Every flow row of every run, with its run.
        let mut header: Vec<String> = Vec::new();
        let mut rows: Vec<(usize, Vec<String>)> = Vec::new();
        let mut summaries = Vec::with_capacity(sorted.len());
        for r in &sorted {
            let mut lines = parse_csv(&r.flows_csv).into_iter();
            let h = lines.next().unwrap_or_default();
            if header.is_empty() {
                header = h;
            } else if h != header {
                return Err(format!("run {} has other flows.csv columns", r.run));
            }
            rows.extend(lines.map(|l| (r.run, l)));
            let summary: serde_json::Value = serde_json::from_str(&r.summary_json)
                .map_err(|e| format!("run {}: summary.json: {e}", r.run))?;
            summaries.push(summary);
        }
        let mut columns = vec![Column {
            name: "run".into(),
            data: ColumnData::Int(rows.iter().map(|(run, _)| Some(*run as i64)).collect()),
        }];
        for (k, v) in sweep.vary.iter().enumerate() {
            let values: Vec<&OverrideValue> = rows
                .iter()
                .map(|(run, _)| sweep.point(run / seeds)[k])
                .collect();
            columns.push(Column {
                name: v.key.clone(),
                data: typed_values(&values),
            });
        }
        columns.push(Column {
            name: "seed".into(),
            data: ColumnData::Int(
                rows.iter()
                    .map(|(run, _)| Some(sorted[*run].seed as i64))
                    .collect(),
            ),
        });
        for (c, name) in header.iter().enumerate() {
            let cells: Vec<&str> = rows
                .iter()
                .map(|(_, l)| l.get(c).map_or("", String::as_str))
                .collect();
            columns.push(Column {
                name: name.clone(),
                data: typed_cells(&cells),
            });
        }
        for name in RUN_FIGURES {
            let cells: Vec<String> = rows
                .iter()
                .map(|(run, _)| match &summaries[*run][name] {
                    serde_json::Value::String(s) => s.clone(),
                    serde_json::Value::Null => String::new(),
                    other => other.to_string(),
                })
                .collect();
            let cells: Vec<&str> = cells.iter().map(String::as_str).collect();
            columns.push(Column {
                name: name.into(),
                data: typed_cells(&cells),
            });
        }
        Ok(TidyTable { columns })
    }

    /// The table as CSV text.
    pub fn to_csv(&self) -> String {
        let mut s = self
            .columns
            .iter()
            .map(|c| csv_field(&c.name))
            .collect::<Vec<_>>()
            .join(",");
        s.push('\n');
        for i in 0..self.rows() {
            let row: Vec<String> = self.columns.iter().map(|c| c.data.csv(i)).collect();
            let _ = writeln!(s, "{}", row.join(","));
        }
        s
    }

    /// Writes the table as one Parquet file (one row group, every column optional).
    pub fn write_parquet(&self, path: &Path) -> Result<(), String> {
        let fields = self
            .columns
            .iter()
            .map(|c| {
                let (physical, logical) = match c.data {
                    ColumnData::Int(_) => (PhysicalType::INT64, None),
                    ColumnData::Float(_) => (PhysicalType::DOUBLE, None),
                    ColumnData::Bool(_) => (PhysicalType::BOOLEAN, None),
                    ColumnData::Str(_) => (PhysicalType::BYTE_ARRAY, Some(LogicalType::String)),
                };
                Type::primitive_type_builder(&c.name, physical)
                    .with_repetition(Repetition::OPTIONAL)
                    .with_logical_type(logical)
                    .build()
                    .map(Arc::new)
            })
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| e.to_string())?;
        let schema = Type::group_type_builder("sweep")
            .with_fields(fields)
            .build()
            .map_err(|e| e.to_string())?;
        let file = std::fs::File::create(path).map_err(|e| e.to_string())?;
        let props = Arc::new(WriterProperties::builder().build());
        let mut writer =
            SerializedFileWriter::new(file, Arc::new(schema), props).map_err(|e| e.to_string())?;
        let mut group = writer.next_row_group().map_err(|e| e.to_string())?;
        let mut columns = self.columns.iter();
        while let Some(mut w) = group.next_column().map_err(|e| e.to_string())? {
            let Some(c) = columns.next() else { break };
            let result = match &c.data {
                ColumnData::Int(v) => {
                    let (values, levels) = present(v, |x| *x);
                    w.typed::<Int64Type>()
                        .write_batch(&values, Some(&levels), None)
                }
                ColumnData::Float(v) => {
                    let (values, levels) = present(v, |x| *x);
                    w.typed::<DoubleType>()
                        .write_batch(&values, Some(&levels), None)
                }
                ColumnData::Bool(v) => {
                    let (values, levels) = present(v, |x| *x);
                    w.typed::<BoolType>()
                        .write_batch(&values, Some(&levels), None)
                }
                ColumnData::Str(v) => {
                    let (values, levels) = present(v, |x: &String| ByteArray::from(x.as_str()));
                    w.typed::<ByteArrayType>()
                        .write_batch(&values, Some(&levels), None)
                }
            };
            result.map_err(|e| e.to_string())?;
            w.close().map_err(|e| e.to_string())?;
        }
        group.close().map_err(|e| e.to_string())?;
        writer.close().map_err(|e| e.to_string())?;
        Ok(())
    }
}

/// The present values of an optional column and its definition levels (1 present, 0 missing).
fn present<T, U>(v: &[Option<T>], f: impl Fn(&T) -> U) -> (Vec<U>, Vec<i16>) {
    let values = v.iter().flatten().map(f).collect();
    let levels = v.iter().map(|x| i16::from(x.is_some())).collect();
    (values, levels)
}

/// A swept key's values as a column: integers, floats (integers among floats widen), booleans,
/// or else strings (a string value as itself, anything else as TOML).
fn typed_values(values: &[&OverrideValue]) -> ColumnData {
    use OverrideValue as V;
    if values.iter().all(|v| matches!(v, V::Integer(_))) {
        return ColumnData::Int(
            values
                .iter()
                .map(|v| match v {
                    V::Integer(i) => Some(*i),
                    _ => None,
                })
                .collect(),
        );
    }
    if values
        .iter()
        .all(|v| matches!(v, V::Integer(_) | V::Float(_)))
    {
        return ColumnData::Float(
            values
                .iter()
                .map(|v| match v {
                    V::Integer(i) => Some(*i as f64),
                    V::Float(f) => Some(*f),
                    _ => None,
                })
                .collect(),
        );
    }
    if values.iter().all(|v| matches!(v, V::Bool(_))) {
        return ColumnData::Bool(
            values
                .iter()
                .map(|v| match v {
                    V::Bool(b) => Some(*b),
                    _ => None,
                })
                .collect(),
        );
    }
    ColumnData::Str(
        values
            .iter()
            .map(|v| match v {
                V::String(s) => Some(s.clone()),
                other => Some(other.to_string()),
            })
            .collect(),
    )
}

/// CSV cells as a column: integers if every non-empty cell is one, else floats if every one is
/// a number, else strings; empty cells are missing.
pub(crate) fn typed_cells(cells: &[&str]) -> ColumnData {
    let filled = || cells.iter().filter(|c| !c.is_empty());
    if filled().all(|c| c.parse::<i64>().is_ok()) && filled().next().is_some() {
        return ColumnData::Int(cells.iter().map(|c| c.parse().ok()).collect());
    }
    if filled().all(|c| c.parse::<f64>().is_ok()) && filled().next().is_some() {
        return ColumnData::Float(cells.iter().map(|c| c.parse().ok()).collect());
    }
    ColumnData::Str(
        cells
            .iter()
            .map(|c| (!c.is_empty()).then(|| c.to_string()))
            .collect(),
    )
}

/// Quotes a CSV field if it needs it (RFC 4180).
fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\n']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

/// Splits CSV text (RFC 4180: quoted fields, `""` for a quote) into lines of fields.
pub fn parse_csv(text: &str) -> Vec<Vec<String>> {
    let mut lines = Vec::new();
    let mut line = Vec::new();
    let mut field = String::new();
    let mut quoted = false;
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match (quoted, c) {
            (true, '"') if chars.peek() == Some(&'"') => {
                field.push('"');
                chars.next();
            }
            (true, '"') => quoted = false,
            (true, c) => field.push(c),
            (false, '"') => quoted = true,
            (false, ',') => line.push(std::mem::take(&mut field)),
            (false, '\n') => {
                line.push(std::mem::take(&mut field));
                lines.push(std::mem::take(&mut line));
            }
            (false, '\r') => {}
            (false, c) => field.push(c),
        }
    }
    if !field.is_empty() || !line.is_empty() {
        line.push(field);
        lines.push(line);
    }
    lines
}

/// Writes a sweep's outputs into `dir`: `results.parquet` (the tidy table), `results.csv` when
/// `csv`, `runs.json` (each run's index, seed, swept values and `meta.json`), and the sweep file
/// and base scenario as read (`sweep.toml`, `scenario.toml`). Returns the table.
pub fn write_sweep_dir(
    sweep: &Sweep,
    records: &[RunRecord],
    dir: &Path,
    csv: bool,
) -> Result<TidyTable, String> {
    let table = TidyTable::build(sweep, records)?;
    let io = |e: std::io::Error| format!("cannot write into {}: {e}", dir.display());
    std::fs::create_dir_all(dir).map_err(io)?;
    table.write_parquet(&dir.join("results.parquet"))?;
    if csv {
        std::fs::write(dir.join("results.csv"), table.to_csv()).map_err(io)?;
    }
    let mut sorted: Vec<&RunRecord> = records.iter().collect();
    sorted.sort_by_key(|r| r.run);
    let seeds = sweep.seeds.len().max(1);
    let runs: Vec<serde_json::Value> = sorted
        .iter()
        .map(|r| {
            let values: serde_json::Map<String, serde_json::Value> = sweep
                .vary
                .iter()
                .zip(sweep.point(r.run / seeds))
                .map(|(v, value)| (v.key.clone(), serde_json::Value::String(value.to_string())))
                .collect();
            serde_json::json!({
                "run": r.run,
                "seed": r.seed,
                "values": values,
                "meta": serde_json::from_str::<serde_json::Value>(&r.meta_json)
                    .unwrap_or(serde_json::Value::Null),
            })
        })
        .collect();
    let json = serde_json::to_string_pretty(&runs).map_err(|e| e.to_string())?;
    std::fs::write(dir.join("runs.json"), json + "\n").map_err(io)?;
    std::fs::write(dir.join("sweep.toml"), &sweep.text).map_err(io)?;
    std::fs::write(dir.join("scenario.toml"), &sweep.scenario_text).map_err(io)?;
    Ok(table)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn csv_lines_split_on_commas_outside_quotes() {
        assert_eq!(
            parse_csv("a,b\n\"x,1\",\"say \"\"hi\"\"\"\n3,\n"),
            [
                vec!["a".to_string(), "b".into()],
                vec!["x,1".into(), "say \"hi\"".into()],
                vec!["3".into(), String::new()],
            ]
        );
    }

    #[test]
    fn cells_are_typed_by_what_all_of_them_read_as() {
        assert_eq!(
            typed_cells(&["1", "", "3"]),
            ColumnData::Int(vec![Some(1), None, Some(3)])
        );
        assert_eq!(
            typed_cells(&["1", "2.5"]),
            ColumnData::Float(vec![Some(1.0), Some(2.5)])
        );
        assert_eq!(
            typed_cells(&["newreno", "1"]),
            ColumnData::Str(vec![Some("newreno".into()), Some("1".into())])
        );
        assert_eq!(typed_cells(&["", ""]), ColumnData::Str(vec![None, None]));
    }

    #[test]
    fn swept_values_keep_their_type() {
        let (a, b) = (OverrideValue::Integer(1), OverrideValue::Float(0.5));
        assert_eq!(
            typed_values(&[&a, &a]),
            ColumnData::Int(vec![Some(1), Some(1)])
        );
        assert_eq!(
            typed_values(&[&a, &b]),
            ColumnData::Float(vec![Some(1.0), Some(0.5)])
        );
        let s = OverrideValue::String("5Mbps".into());
        assert_eq!(
            typed_values(&[&s, &a]),
            ColumnData::Str(vec![Some("5Mbps".into()), Some("1".into())])
        );
    }
}
