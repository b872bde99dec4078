//! A run's table as typed columns, for data frames built without reading CSV text again: each
//! column is 64-bit integers, doubles or strings, typed as the sweep's tidy table types them
//! ([`crate::tidy::typed_cells`]), and a numeric column is handed over as its little-endian
//! bytes, which numpy reads without a copy per value.

use crate::tidy::{parse_csv, typed_cells, ColumnData};

/// One column of a run's table, ready for numpy.
#[derive(Clone, Debug, PartialEq)]
pub enum Values {
    /// 64-bit integers, none missing: little-endian bytes, 8 per row (numpy `<i8`).
    Int(Vec<u8>),
    /// Doubles, NaN where missing (as pandas reads an empty CSV field, also in an integer
    /// column with gaps, and in a column with no value at all): little-endian bytes, 8 per
    /// row (numpy `<f8`).
    Float(Vec<u8>),
    /// Strings, `None` where missing.
    Str(Vec<Option<String>>),
}

/// The columns of `csv` (a header line, then one line per row), by name, in order.
pub fn csv_columns(csv: &str) -> Vec<(String, Values)> {
    let mut lines = parse_csv(csv).into_iter();
    let header = lines.next().unwrap_or_default();
    let rows: Vec<Vec<String>> = lines.collect();
    header
        .into_iter()
        .enumerate()
        .map(|(c, name)| {
            let cells: Vec<&str> = rows
                .iter()
                .map(|r| r.get(c).map_or("", String::as_str))
                .collect();
            (name, values(typed_cells(&cells)))
        })
        .collect()
}

/// A run's table grouped as pandas stores it: the integer columns as one block, the doubles as
/// another, the strings one after another, for a data frame made in one step.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Blocks {
    /// The columns' names and kinds (`i8`, `f8`, `str`), in order, as one text: `name=kind`
    /// joined by U+001F (which no column name holds), the same for every table of one layout.
    pub layout: String,
    /// Rows.
    pub rows: usize,
    /// The integer columns' little-endian bytes, column after column (8 bytes a row).
    pub ints: Vec<u8>,
    /// The double columns' little-endian bytes, column after column (8 bytes a row).
    pub floats: Vec<u8>,
    /// The string columns' values, column after column (`rows` each), `None` where missing.
    pub strings: Vec<Option<String>>,
}

/// The columns of `csv` grouped into [`Blocks`].
pub fn csv_blocks(csv: &str) -> Blocks {
    let mut b = Blocks::default();
    let mut layout = Vec::new();
    for (name, values) in csv_columns(csv) {
        let (kind, rows) = match values {
            Values::Int(v) => {
                b.ints.extend_from_slice(&v);
                ("i8", v.len() / 8)
            }
            Values::Float(v) => {
                b.floats.extend_from_slice(&v);
                ("f8", v.len() / 8)
            }
            Values::Str(v) => {
                let rows = v.len();
                b.strings.extend(v);
                ("str", rows)
            }
        };
        b.rows = rows;
        layout.push(format!("{name}={kind}"));
    }
    b.layout = layout.join("\u{1f}");
    b
}

fn floats(values: impl Iterator<Item = f64>) -> Values {
    Values::Float(values.flat_map(f64::to_le_bytes).collect())
}

fn values(data: ColumnData) -> Values {
    match data {
        ColumnData::Int(v) if v.iter().all(Option::is_some) => {
            Values::Int(v.into_iter().flatten().flat_map(i64::to_le_bytes).collect())
        }
        ColumnData::Int(v) => floats(v.into_iter().map(|x| x.map_or(f64::NAN, |x| x as f64))),
        ColumnData::Float(v) => floats(v.into_iter().map(|x| x.unwrap_or(f64::NAN))),
        ColumnData::Bool(v) => Values::Int(
            v.into_iter()
                .flat_map(|b| i64::from(b.unwrap_or(false)).to_le_bytes())
                .collect(),
        ),
        ColumnData::Str(v) if v.iter().all(Option::is_none) => {
            floats(v.into_iter().map(|_| f64::NAN))
        }
        ColumnData::Str(v) => Values::Str(v),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn le(v: &[i64]) -> Vec<u8> {
        v.iter().flat_map(|x| x.to_le_bytes()).collect()
    }

    fn lef(v: &[f64]) -> Vec<u8> {
        v.iter().flat_map(|x| x.to_le_bytes()).collect()
    }

    #[test]
    fn columns_are_typed_as_pandas_reads_the_csv() {
        let csv = "flow,n,x,gap,none,q\nf1,3,0.5,1,,\"a,b\"\nf2,-4,2,,,\n";
        let cols = csv_columns(csv);
        let names: Vec<&str> = cols.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(names, ["flow", "n", "x", "gap", "none", "q"]);
        assert_eq!(
            cols[0].1,
            Values::Str(vec![Some("f1".into()), Some("f2".into())])
        );
        assert_eq!(cols[1].1, Values::Int(le(&[3, -4])));
        assert_eq!(cols[2].1, Values::Float(lef(&[0.5, 2.0])));
        // An integer column with a gap, and an empty column, are doubles with NaN.
        let Values::Float(gap) = &cols[3].1 else {
            panic!("{:?}", cols[3].1)
        };
        assert_eq!(gap[..8], 1f64.to_le_bytes());
        assert!(f64::from_le_bytes(gap[8..].try_into().expect("8 bytes")).is_nan());
        let Values::Float(none) = &cols[4].1 else {
            panic!("{:?}", cols[4].1)
        };
        assert_eq!(none.len(), 16);
        assert_eq!(cols[5].1, Values::Str(vec![Some("a,b".into()), None]));
    }

    #[test]
    fn blocks_group_the_columns_by_kind_in_order() {
        let csv = "flow,n,x,m,q\nf1,3,0.5,7,a\nf2,-4,2,8,\n";
        let b = csv_blocks(csv);
        assert_eq!(
            b.layout,
            "flow=str\u{1f}n=i8\u{1f}x=f8\u{1f}m=i8\u{1f}q=str"
        );
        assert_eq!(b.rows, 2);
        assert_eq!(b.ints, le(&[3, -4, 7, 8]));
        assert_eq!(b.floats, lef(&[0.5, 2.0]));
        assert_eq!(
            b.strings,
            [Some("f1".into()), Some("f2".into()), Some("a".into()), None]
        );
        assert_eq!(csv_blocks("a,b\n").rows, 0);
    }

    #[test]
    fn a_table_with_no_rows_has_its_columns_empty() {
        let cols = csv_columns("a,b\n");
        assert_eq!(cols.len(), 2);
        assert_eq!(cols[0].1, Values::Float(Vec::new()));
    }
}
