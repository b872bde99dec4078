//! Reading the `[[cp]]` sections: one per C-to-C application of CP (Ott, Sparks, Mayer-Patel),
//! naming the aggregation points at the edges of its two clusters (slides, Fig. 2), the rate
//! control they run on the aggregate and its flowshares.

use super::error::{ErrorKind, ScenarioError};
use super::model::{CpSpec, NodeKind};
use super::network::Network;
use super::suggest;
use super::table::Table;
use super::value::Field;
use concord_cc::cp::{AggregateControl, Flowshares};
use std::collections::HashMap;

/// The keys of a `[[cp]]` section.
const CP_KEYS: [&str; 6] = ["app", "local", "remote", "control", "flowshares", "m"];
/// The largest m a scenario may ask for.
const MAX_SHARES: i64 = 1 << 16;

/// The applications of the `cp` array in `field` (none if absent).
pub(crate) fn read_cp(
    field: Option<&Field<'_>>,
    net: &Network,
) -> Result<Vec<CpSpec>, ScenarioError> {
    let Some(field) = field else {
        return Ok(Vec::new());
    };
    let mut apps: Vec<CpSpec> = Vec::new();
    let mut lines: HashMap<u32, usize> = HashMap::new();
    for table in Table::array_of(field)? {
        let table = table.allow(&CP_KEYS)?;
        let app_field = table.require("app", "1")?;
        let app = u32::try_from(app_field.integer(0, i64::from(u32::MAX))?).unwrap_or(0);
        if let Some(first) = lines.get(&app) {
            return Err(app_field.error(
                ErrorKind::Duplicate,
                format!("two [[cp]] sections are for application {app}"),
                format!("the other is at line {first}; give this one a different `app`"),
            ));
        }
        lines.insert(app, app_field.line());
        let mut ends = [0usize; 2];
        for (slot, key) in ends.iter_mut().zip(["local", "remote"]) {
            let f = table.require(key, "\"r1\"")?;
            let node = net.resolve(f.name()?, &f)?;
            if net.kind(node) != NodeKind::Router {
                let routers = net
                    .nodes
                    .iter()
                    .filter(|n| n.kind == NodeKind::Router)
                    .map(|n| n.name.as_str());
                return Err(f.error(
                    ErrorKind::Inconsistent,
                    format!("`{key}` = `{}` is a host", net.name(node)),
                    format!(
                        "aggregation points are routers at a cluster's edge; routers are: {}",
                        suggest::list(routers)
                    ),
                ));
            }
            *slot = node;
        }
        if ends[0] == ends[1] {
            return Err(table.get("remote").unwrap_or(app_field).error(
                ErrorKind::Inconsistent,
                "`local` and `remote` are the same router",
                "name the aggregation points of the two clusters",
            ));
        }
        let control = match table.get("control") {
            Some(f) => match f.str()? {
                "tfrc" => AggregateControl::Tfrc,
                "rap" => AggregateControl::Rap,
                other => {
                    return Err(f.error(
                        ErrorKind::BadValue,
                        format!("unknown control `{other}`"),
                        suggest::did_you_mean(other, ["tfrc", "rap"], "write \"tfrc\" or \"rap\""),
                    ))
                }
            },
            None => AggregateControl::Tfrc,
        };
        let m = match table.get("m") {
            Some(f) => Some(u32::try_from(f.integer(1, MAX_SHARES)?).unwrap_or(1)),
            None => None,
        };
        let kind = match table.get("flowshares") {
            Some(f) => {
                let k = f.str()?;
                if !["single", "naive", "bfld"].contains(&k) {
                    return Err(f.error(
                        ErrorKind::BadValue,
                        format!("unknown flowshares `{k}`"),
                        suggest::did_you_mean(
                            k,
                            ["single", "naive", "bfld"],
                            "write \"single\", \"naive\" or \"bfld\"",
                        ),
                    ));
                }
                k
            }
            None => "single",
        };
        if kind == "single" {
            if let Some(f) = table.get("m") {
                return Err(f.error(
                    ErrorKind::Inconsistent,
                    "`m` is given with a single flowshare",
                    "remove `m`, or write flowshares = \"naive\" or \"bfld\"",
                ));
            }
        }
        // m = 0 stands for "as many as the application has flows", fixed when the simulator
        // is built.
        let flowshares = match kind {
            "naive" => Flowshares::Naive { m: m.unwrap_or(0) },
            "bfld" => Flowshares::Bfld { m: m.unwrap_or(0) },
            _ => Flowshares::Single,
        };
        apps.push(CpSpec {
            app,
            local: ends[0],
            remote: ends[1],
            control,
            flowshares,
        });
    }
    Ok(apps)
}
