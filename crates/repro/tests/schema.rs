//! `results.json` validates against `docs/results.schema.json`, with a small validator of the
//! JSON Schema keywords the schema uses: type, enum, required, properties,
//! additionalProperties (false), items, minItems, maxItems, minLength, minimum, and `$ref` to
//! `#/$defs/...`. A keyword it does not know is an error, so the schema cannot silently say
//! more than is checked.

use concord_repro::claim::{Check, Claim, Paper};
use concord_repro::{registry, run_experiments, Ctx, Report};
use serde_json::Value;

const SCHEMA: &str = include_str!("../../../docs/results.schema.json");

/// Keywords that only annotate.
const ANNOTATIONS: [&str; 5] = ["$schema", "$id", "title", "description", "$defs"];

/// Every way `value` at `path` breaks `schema` (resolved against `root`).
fn validate(root: &Value, schema: &Value, value: &Value, path: &str, errors: &mut Vec<String>) {
    let Some(obj) = schema.as_object() else {
        errors.push(format!("{path}: schema is not an object"));
        return;
    };
    for (key, rule) in obj {
        match key.as_str() {
            k if ANNOTATIONS.contains(&k) => {}
            "$ref" => {
                let target = rule
                    .as_str()
                    .and_then(|r| r.strip_prefix("#/$defs/"))
                    .and_then(|name| root["$defs"].get(name));
                match target {
                    Some(t) => validate(root, t, value, path, errors),
                    None => errors.push(format!("{path}: unresolved $ref {rule}")),
                }
            }
            "type" => {
                let types: Vec<&str> = match rule {
                    Value::String(t) => vec![t.as_str()],
                    Value::Array(ts) => ts.iter().filter_map(Value::as_str).collect(),
                    _ => vec![],
                };
                let ok = types.iter().any(|t| match *t {
                    "object" => value.is_object(),
                    "array" => value.is_array(),
                    "string" => value.is_string(),
                    "number" => value.is_number(),
                    "integer" => value.is_u64() || value.is_i64(),
                    "boolean" => value.is_boolean(),
                    "null" => value.is_null(),
                    _ => false,
                });
                if !ok {
                    errors.push(format!("{path}: {value} is not of type {rule}"));
                }
            }
            "enum" => {
                if !rule.as_array().is_some_and(|opts| opts.contains(value)) {
                    errors.push(format!("{path}: {value} is not one of {rule}"));
                }
            }
            "required" => {
                for name in rule.as_array().into_iter().flatten() {
                    let name = name.as_str().unwrap_or("");
                    if value.is_object() && value.get(name).is_none() {
                        errors.push(format!("{path}: `{name}` is missing"));
                    }
                }
            }
            "properties" => {
                if let (Some(props), Some(fields)) = (rule.as_object(), value.as_object()) {
                    for (name, sub) in props {
                        if let Some(v) = fields.get(name) {
                            validate(root, sub, v, &format!("{path}.{name}"), errors);
                        }
                    }
                }
            }
            "additionalProperties" => {
                let known = obj.get("properties").and_then(Value::as_object);
                if rule == &Value::Bool(false) {
                    for name in value.as_object().into_iter().flat_map(|o| o.keys()) {
                        if !known.is_some_and(|k| k.contains_key(name)) {
                            errors.push(format!("{path}: unexpected `{name}`"));
                        }
                    }
                } else {
                    errors.push(format!("{path}: additionalProperties must be false"));
                }
            }
            "items" => {
                for (i, v) in value.as_array().into_iter().flatten().enumerate() {
                    validate(root, rule, v, &format!("{path}[{i}]"), errors);
                }
            }
            "minItems" | "maxItems" => {
                if let (Some(n), Some(items)) = (rule.as_u64(), value.as_array()) {
                    let len = items.len() as u64;
                    if (key == "minItems" && len < n) || (key == "maxItems" && len > n) {
                        errors.push(format!("{path}: {len} items breaks {key} {n}"));
                    }
                }
            }
            "minLength" => {
                if let (Some(n), Some(s)) = (rule.as_u64(), value.as_str()) {
                    if (s.chars().count() as u64) < n {
                        errors.push(format!("{path}: shorter than {n}"));
                    }
                }
            }
            "minimum" => {
                if let (Some(min), Some(x)) = (rule.as_f64(), value.as_f64()) {
                    if x < min {
                        errors.push(format!("{path}: {x} < {min}"));
                    }
                }
            }
            other => errors.push(format!("{path}: the validator does not know `{other}`")),
        }
    }
}

fn errors_of(value: &Value) -> Vec<String> {
    let schema: Value = serde_json::from_str(SCHEMA).expect("the schema is JSON");
    let mut errors = Vec::new();
    validate(&schema, &schema, value, "$", &mut errors);
    errors
}

/// A report with a paper claim of every kind of row beside the baselines' checks.
fn report() -> Report {
    let exps: Vec<_> = registry()
        .into_iter()
        .filter(|e| e.paper == Paper::Baseline)
        .collect();
    let ctx = Ctx {
        quick: true,
        seed_base: 7,
        replicate: true,
    };
    let outcomes = run_experiments(&exps, &ctx, 2, &|_, _| {});
    let mut r = Report::new(true, &exps, &outcomes);
    r.seed_base = 7;
    let paper = |values: &[f64]| {
        Claim::mean_over_seeds(
            Paper::Mccp,
            "Fig. 3",
            "goodput (Mbit/s)",
            "30.3",
            Check::Relative {
                target: 30.3,
                rel: 0.35,
            },
            &[8, 9, 10, 11, 12],
            values,
            "scenarios/mccp/slow-start-loss.toml",
            true,
        )
        .paper("Simulation results", "The throughputs ... are 30.3 Mb s^-1")
        .target(30.3)
    };
    for (i, c) in [
        paper(&[30.0; 5]),
        paper(&[3.8; 5]).inconsistent("the loss point and 30.3 disagree"),
        paper(&[3.8, f64::NAN, 3.8, 3.8, 3.8]),
        paper(&[30.0; 5]).deviation("loss at 16 Mbit/s"),
        paper(&[30.0; 5]).pooled_with(&paper(&[3.8; 5])),
    ]
    .into_iter()
    .enumerate()
    {
        let mut c = c;
        c.experiment = "mccp/slow-start-loss".into();
        c.id = format!("mccp/slow-start-loss/row-{i}");
        r.claims.push(c);
    }
    r
}

#[test]
fn results_json_validates_against_its_schema() {
    let r = report();
    let json: Value =
        serde_json::from_str(&serde_json::to_string_pretty(&r).expect("serialise")).expect("parse");
    let errors = errors_of(&json);
    assert!(errors.is_empty(), "{errors:#?}");
    assert!(json["claims"]
        .as_array()
        .is_some_and(|c| c.iter().any(|c| c["ours"].is_null())));
    assert!(
        json["claims"].as_array().is_some_and(|c| c
            .iter()
            .any(|c| c["blocks"][1]["verdict"] == "not_reproduced")),
        "a claim pooled over two seed blocks is in the report"
    );
    let claims = json["claims"].as_array().expect("claims");
    assert!(
        claims
            .iter()
            .any(|c| c["margin"]["half_widths"].is_number() && c["margin"]["edge"].is_number()),
        "a claim's margin to its tolerance is in the report"
    );
    assert!(
        claims
            .iter()
            .any(|c| c["ours"].is_null() && c["margin"].is_null()),
        "a failed measurement has no margin"
    );
}

#[test]
fn the_validator_finds_what_breaks_the_schema() {
    let r = report();
    let mut json: Value = serde_json::to_value(&r).expect("to value");
    json["claims"][0]
        .as_object_mut()
        .expect("claim")
        .remove("verdict");
    json["claims"][1]["verdict"] = Value::String("pass".into());
    json["claims"][2]["seeds"] = Value::Array(vec![]);
    json["experiments"][0]["surprise"] = Value::Bool(true);
    json["seed_base"] = Value::from(-1);
    let last = json["claims"].as_array().map_or(0, Vec::len) - 1;
    json["claims"][last]["blocks"][1]["verdict"] = Value::String("pass".into());
    let errors = errors_of(&json);
    let replicate = format!("$.claims[{last}].blocks[1].verdict: \"pass\" is not one of");
    assert!(
        errors.iter().any(|e| e.starts_with(&replicate)),
        "{replicate} not found in {errors:#?}"
    );
    for expected in [
        "$.claims[0]: `verdict` is missing",
        "$.claims[1].verdict: \"pass\" is not one of",
        "$.claims[2].seeds: 0 items breaks minItems 1",
        "$.experiments[0]: unexpected `surprise`",
        "$.seed_base: -1 < 0",
    ] {
        assert!(
            errors.iter().any(|e| e.starts_with(expected)),
            "{expected} not found in {errors:#?}"
        );
    }
}
