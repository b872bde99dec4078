//! The `concord._concord` extension module: scenarios with overrides, runs with the GIL
//! released, and errors as Python exceptions. The Python package `concord` wraps it (tables
//! as DataFrames, sweeps, Dask).
// PyO3's `#[pymodule]`, `#[pyclass]` and `#[pyfunction]` expand to the extension's FFI glue.
#![allow(unsafe_code)]

use crate::columns::csv_blocks;
use crate::lazy::LazyRun;
use crate::local::run_local;
use crate::run::RunError as RustRunError;
use crate::sweep::{RunRecord, Sweep};
use crate::tidy::write_sweep_dir;
use concord_sim::scenario::{OverrideValue, ScenarioSource};
use pyo3::create_exception;
use pyo3::exceptions::{PyRuntimeError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyByteArray, PyBytes, PyFloat, PyInt, PyList, PyString, PyTuple};
use std::path::PathBuf;

create_exception!(
    _concord,
    ScenarioError,
    PyValueError,
    "A scenario file or an override is invalid. The message is one line: the file and line (or \
     the override) of the mistake, what is wrong, and the fix."
);
create_exception!(
    _concord,
    RunError,
    PyRuntimeError,
    "A run could not complete (the simulator could not be built, or a trace not written)."
);

fn scenario_error(e: concord_sim::scenario::ScenarioError) -> PyErr {
    ScenarioError::new_err(e.to_string())
}

fn run_error(e: RustRunError) -> PyErr {
    match e {
        RustRunError::Scenario(e) => scenario_error(e),
        RustRunError::Runtime(m) => RunError::new_err(m),
    }
}

/// A Python value as an override value: bool, int, float, str, or a list/tuple of them.
fn override_value(v: &Bound<'_, PyAny>) -> PyResult<OverrideValue> {
    if v.is_instance_of::<PyBool>() {
        return Ok(OverrideValue::Bool(v.extract()?));
    }
    if v.is_instance_of::<PyInt>() {
        return v.extract::<i64>().map(OverrideValue::Integer).map_err(|_| {
            PyValueError::new_err(format!(
                "{v} does not fit a 64-bit integer; give a smaller one"
            ))
        });
    }
    if v.is_instance_of::<PyFloat>() {
        return Ok(OverrideValue::Float(v.extract()?));
    }
    if v.is_instance_of::<PyString>() {
        return Ok(OverrideValue::String(v.extract()?));
    }
    if v.is_instance_of::<PyList>() || v.is_instance_of::<PyTuple>() {
        let mut items = Vec::new();
        for item in v.try_iter()? {
            items.push(override_value(&item?)?);
        }
        return Ok(OverrideValue::Array(items));
    }
    // numpy scalars and the like: their int or float value, when they have one.
    if let Ok(i) = v.call_method0("__index__").and_then(|i| i.extract::<i64>()) {
        return Ok(OverrideValue::Integer(i));
    }
    if let Ok(f) = v.call_method0("__float__").and_then(|f| f.extract::<f64>()) {
        return Ok(OverrideValue::Float(f));
    }
    let type_name = v
        .get_type()
        .name()
        .map(|n| n.to_string())
        .unwrap_or_else(|_| "?".into());
    Err(PyTypeError::new_err(format!(
        "an override value must be a bool, int, float, str or a list of them, not {type_name}; \
         write quantities with units as strings, e.g. \"20Mbps\""
    )))
}

/// A scenario: a file's text plus overrides, checked on every change.
#[pyclass(name = "Scenario", module = "concord._concord", from_py_object)]
#[derive(Clone)]
pub struct PyScenario {
    source: ScenarioSource,
}

#[pymethods]
impl PyScenario {
    /// Sets `key` (a dotted path: `topology.bottleneck.rate`, `flow[0].count`) to `value`
    /// (bool, int, float, str or list). The scenario is checked at once; an invalid value
    /// raises ScenarioError and leaves the scenario unchanged.
    fn set(&mut self, key: &str, value: &Bound<'_, PyAny>) -> PyResult<()> {
        let value = override_value(value)?;
        let mut next = self.source.clone();
        next.set(key, value).map_err(scenario_error)?;
        next.build().map_err(scenario_error)?;
        self.source = next;
        Ok(())
    }

    /// A copy, to vary without changing this one.
    fn copy(&self) -> PyScenario {
        self.clone()
    }

    /// The scenario's name.
    #[getter]
    fn name(&self) -> PyResult<String> {
        Ok(self.source.build().map_err(scenario_error)?.name)
    }

    /// The seed the run will use.
    #[getter]
    fn seed(&self) -> PyResult<u64> {
        Ok(self.source.build().map_err(scenario_error)?.seed)
    }

    /// Simulated time, in seconds.
    #[getter]
    fn duration_s(&self) -> PyResult<f64> {
        Ok(self
            .source
            .build()
            .map_err(scenario_error)?
            .duration
            .as_secs_f64())
    }

    /// The file the scenario was loaded from, if any.
    #[getter]
    fn path(&self) -> Option<String> {
        self.source.path().map(|p| p.display().to_string())
    }

    /// The overrides as (key, value as TOML) pairs, in the order first set.
    #[getter]
    fn overrides(&self) -> Vec<(String, String)> {
        self.source
            .overrides()
            .iter()
            .map(|o| (o.key.clone(), o.value.to_string()))
            .collect()
    }

    /// The scenario as run, as TOML text.
    fn to_toml(&self) -> PyResult<String> {
        self.source.render().map_err(scenario_error)
    }

    fn __repr__(&self) -> String {
        let name = self
            .source
            .path()
            .map_or_else(|| "<text>".to_string(), |p| p.display().to_string());
        let overrides: Vec<String> = self
            .source
            .overrides()
            .iter()
            .map(|o| format!("{}={}", o.key, o.value))
            .collect();
        format!("Scenario({name:?}, overrides=[{}])", overrides.join(", "))
    }
}

/// A finished run: the tables as CSV text and the JSON documents of `concord run`, each made
/// on first use.
#[pyclass(name = "RawRun", module = "concord._concord", frozen)]
pub struct RawRun {
    output: LazyRun,
}

#[pymethods]
impl RawRun {
    /// `summary.json`'s text.
    #[getter]
    fn summary_json(&self) -> String {
        self.output.summary_json()
    }

    /// `meta.json`'s text.
    #[getter]
    fn meta_json(&self) -> String {
        serde_json::to_string_pretty(&self.output.meta).unwrap_or_default()
    }

    /// The scenario as run, as TOML.
    #[getter]
    fn scenario_toml(&self) -> PyResult<String> {
        self.output
            .scenario_toml()
            .map(str::to_string)
            .map_err(|e| RunError::new_err(e.to_string()))
    }

    /// The names of the tables (`flows`, `channels`, `goodput`, ...).
    #[getter]
    fn table_names(&self) -> Vec<&'static str> {
        self.output.tables().iter().map(|(s, _)| *s).collect()
    }

    /// The table `name` as CSV text, or None.
    fn table(&self, name: &str) -> Option<String> {
        self.output.table(name).map(str::to_string)
    }

    /// The table `name` grouped as pandas stores it, or None: (layout, rows, integer columns,
    /// double columns, strings), where layout is the columns' `name=kind` (kind `i8`, `f8` or
    /// `str`) joined by U+001F, the integer and double columns are one bytearray each of
    /// little-endian 64-bit values, column after column (NaN where a double is missing), and the
    /// strings one list, column after column, of str or None.
    #[allow(clippy::type_complexity)]
    fn blocks<'py>(
        &self,
        py: Python<'py>,
        name: &str,
    ) -> PyResult<
        Option<(
            String,
            usize,
            Bound<'py, PyByteArray>,
            Bound<'py, PyByteArray>,
            Bound<'py, PyList>,
        )>,
    > {
        let Some(csv) = self.output.table(name) else {
            return Ok(None);
        };
        let b = csv_blocks(csv);
        Ok(Some((
            b.layout,
            b.rows,
            PyByteArray::new(py, &b.ints),
            PyByteArray::new(py, &b.floats),
            PyList::new(py, b.strings)?,
        )))
    }

    /// Writes what `concord run` writes into `dir`.
    fn write(&self, dir: PathBuf) -> PyResult<()> {
        let output = self.output.to_output().map_err(run_error)?;
        output.write_dir(&dir).map_err(|e| {
            RunError::new_err(format!(
                "cannot write results to {}: {e}; choose a writable directory",
                dir.display()
            ))
        })
    }
}

/// Loads and checks the scenario file at `path`.
#[pyfunction]
fn load(path: PathBuf) -> PyResult<PyScenario> {
    let source = ScenarioSource::from_file(&path).map_err(scenario_error)?;
    source.build().map_err(scenario_error)?;
    Ok(PyScenario { source })
}

/// Reads and checks scenario `text`.
#[pyfunction]
fn parse(text: &str) -> PyResult<PyScenario> {
    let source = ScenarioSource::from_text(text, None);
    source.build().map_err(scenario_error)?;
    Ok(PyScenario { source })
}

/// Runs `scenario` to the end with the GIL released. `capture_dir` receives the pcap traces the
/// scenario records; `command_line` is recorded in the metadata. `seed`, when given, is set on
/// a copy of the scenario (as `copy()` then `set("seed", seed)` would, checked by the run's own
/// build), which spares a run over many seeds a copy and a check per seed in Python.
#[pyfunction]
#[pyo3(signature = (scenario, capture_dir=None, command_line=Vec::new(), seed=None))]
fn run(
    py: Python<'_>,
    scenario: &PyScenario,
    capture_dir: Option<PathBuf>,
    command_line: Vec<String>,
    seed: Option<&Bound<'_, PyAny>>,
) -> PyResult<RawRun> {
    let mut source = scenario.source.clone();
    if let Some(seed) = seed {
        source
            .set("seed", override_value(seed)?)
            .map_err(scenario_error)?;
    }
    let output = py
        .detach(move || LazyRun::run(&source, capture_dir.as_deref(), command_line))
        .map_err(run_error)?;
    Ok(RawRun { output })
}

/// A sweep file read: the base scenario, fixed overrides, the varied keys and the seeds.
#[pyclass(name = "Sweep", module = "concord._concord", frozen)]
pub struct PySweep {
    sweep: Sweep,
}

#[pymethods]
impl PySweep {
    /// Reads the sweep file at `path` and the scenario it names.
    #[staticmethod]
    fn load(path: PathBuf) -> PyResult<PySweep> {
        let sweep = Sweep::load(&path).map_err(|e| ScenarioError::new_err(e.to_string()))?;
        Ok(PySweep { sweep })
    }

    /// Rebuilds a sweep from [`PySweep::parts`] (on a worker).
    #[staticmethod]
    fn from_parts(text: &str, path: PathBuf, scenario_text: &str) -> PyResult<PySweep> {
        let sweep = Sweep::parse(text, &path, Some(scenario_text))
            .map_err(|e| ScenarioError::new_err(e.to_string()))?;
        Ok(PySweep { sweep })
    }

    /// (sweep text, sweep path, scenario text): all a worker needs to rebuild the sweep.
    fn parts(&self) -> (String, String, String) {
        (
            self.sweep.text.clone(),
            self.sweep.path.display().to_string(),
            self.sweep.scenario_text.clone(),
        )
    }

    /// Runs (groups times seeds).
    fn __len__(&self) -> usize {
        self.sweep.len()
    }

    /// Run groups (grid points).
    #[getter]
    fn groups(&self) -> usize {
        self.sweep.groups()
    }

    /// The seeds of every group.
    #[getter]
    fn seeds(&self) -> Vec<u64> {
        self.sweep.seeds.clone()
    }

    /// The varied keys, in order.
    #[getter]
    fn keys(&self) -> Vec<String> {
        self.sweep.vary.iter().map(|v| v.key.clone()).collect()
    }

    /// Runs run `run` with the GIL released; returns its record (JSON text).
    fn run(&self, py: Python<'_>, run: usize) -> PyResult<String> {
        if run >= self.sweep.len() {
            return Err(PyValueError::new_err(format!(
                "run {run} is past the sweep's {} runs",
                self.sweep.len()
            )));
        }
        let record = py.detach(|| self.sweep.run(run)).map_err(run_error)?;
        serde_json::to_string(&record).map_err(|e| RunError::new_err(e.to_string()))
    }

    /// Runs every run on `jobs` local threads with the GIL released; returns the records.
    fn run_local(&self, py: Python<'_>, jobs: usize, retries: usize) -> PyResult<Vec<String>> {
        let records = py
            .detach(|| run_local(&self.sweep, jobs, retries, &|_, _| {}))
            .map_err(|e| RunError::new_err(e.to_string()))?;
        records
            .iter()
            .map(|r| serde_json::to_string(r).map_err(|e| RunError::new_err(e.to_string())))
            .collect()
    }

    /// Writes the tidy table of `records` (JSON texts, any order) and the metadata into `out`;
    /// returns the number of rows.
    #[pyo3(signature = (records, out, csv=false))]
    fn write(
        &self,
        py: Python<'_>,
        records: Vec<String>,
        out: PathBuf,
        csv: bool,
    ) -> PyResult<usize> {
        let records = records
            .iter()
            .map(|r| serde_json::from_str::<RunRecord>(r))
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| PyValueError::new_err(format!("a run record is not valid: {e}")))?;
        let table = py
            .detach(|| write_sweep_dir(&self.sweep, &records, &out, csv))
            .map_err(RunError::new_err)?;
        Ok(table.rows())
    }
}

/// Runs one experiment of the reproduction (a unit encoded by `concord reproduce --dask`)
/// with the GIL released; returns its outcome as bytes for the command to decode.
#[pyfunction]
fn run_repro_unit<'py>(py: Python<'py>, unit: &[u8]) -> PyResult<Bound<'py, PyBytes>> {
    let unit = unit.to_vec();
    let outcome = py
        .detach(move || concord_repro::unit::run_unit(&unit))
        .map_err(|e| PyValueError::new_err(e.to_string()))?;
    Ok(PyBytes::new(py, &outcome))
}

#[pymodule]
fn _concord(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyScenario>()?;
    m.add_class::<RawRun>()?;
    m.add_class::<PySweep>()?;
    m.add_function(wrap_pyfunction!(load, m)?)?;
    m.add_function(wrap_pyfunction!(parse, m)?)?;
    m.add_function(wrap_pyfunction!(run, m)?)?;
    m.add_function(wrap_pyfunction!(run_repro_unit, m)?)?;
    m.add("ScenarioError", m.py().get_type::<ScenarioError>())?;
    m.add("RunError", m.py().get_type::<RunError>())?;
    m.add("__version__", crate::VERSION)?;
    m.add("GIT_REVISION", crate::GIT_REVISION)?;
    Ok(())
}
