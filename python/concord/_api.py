"""Scenarios and runs: the extension's objects with pandas tables on top."""

from __future__ import annotations

import io
import json
import os
import sys
from functools import cached_property
from typing import Any, Dict, List, Optional, Union

from . import _concord
from ._concord import RunError, Scenario, ScenarioError

__version__ = _concord.__version__

PathLike = Union[str, "os.PathLike[str]"]


def load(path: PathLike) -> Scenario:
    """Loads and checks the scenario file at `path`; raises ScenarioError (file:line: what; fix)."""
    return _concord.load(os.fspath(path))


def parse(text: str) -> Scenario:
    """Reads and checks scenario text."""
    return _concord.parse(text)


_STRING_DTYPE = None
_STRINGS = None  # how a list of str (None for gaps) becomes a column of that dtype
_COLUMNS: Dict[tuple, Any] = {}  # column Index objects by names, copied (cheaply) per frame


def _string_dtype():
    """The dtype pandas gives a column of strings (`str` in pandas 3, object before)."""
    global _STRING_DTYPE
    if _STRING_DTYPE is None:
        import pandas as pd

        _STRING_DTYPE = pd.Series(["x"]).dtype
    return _STRING_DTYPE


def _strings():
    """A function from a list of str (None for gaps) to a column of the string dtype. When the
    dtype is Arrow-backed (pandas 3 with pyarrow), the Arrow array is built at once and wrapped,
    which skips pandas' per-value checks (a third of a small table's construction)."""
    global _STRINGS
    if _STRINGS is None:
        import pandas as pd

        dtype = _string_dtype()

        def generic(values):
            return pd.array(values, dtype=dtype)

        _STRINGS = generic
        if getattr(dtype, "storage", None) == "pyarrow":
            try:
                import pyarrow as pa

                cls = dtype.construct_array_type()

                def arrow(values):
                    return cls(pa.array(values, type=pa.large_string()), dtype=dtype)

                probe = ["x", None]
                if arrow(probe).equals(generic(probe)) and arrow(probe).dtype == dtype:
                    _STRINGS = arrow
            except Exception:  # any pandas/pyarrow that does not take it: the generic path
                pass
    return _STRINGS


def _frame(columns):
    """A pandas DataFrame of the extension's typed columns (`RawRun.columns`): numeric columns
    are read by numpy straight from their bytes, with no CSV text parsed; the dtypes are those
    `pandas.read_csv` gives the same table (int64, float64 with NaN for gaps, str)."""
    import numpy as np
    import pandas as pd

    strings = _strings()
    names, arrays = [], []
    for name, kind, values in columns:
        names.append(name)
        if kind in ("i8", "f8"):
            arrays.append(np.frombuffer(values, dtype="<" + kind))
        else:
            arrays.append(strings(values))
    rows = len(arrays[0]) if arrays else 0
    key = tuple(names)
    index = _COLUMNS.get(key)
    if index is None:
        index = _COLUMNS[key] = pd.Index(names)
    index = index.copy()  # a new Index on the same values: `df.columns.name = ...` stays local
    # The columns are whole and distinct: skip the checks of the public constructor, which
    # cost as much as the one-second run itself. Any pandas without it gets the public one.
    from_arrays = getattr(pd.DataFrame, "_from_arrays", None)
    if from_arrays is not None:
        try:
            return from_arrays(arrays, columns=index, index=pd.RangeIndex(rows),
                               verify_integrity=False)
        except TypeError:
            pass
    return pd.DataFrame(dict(zip(names, arrays)), copy=False)


class Result:
    """A finished run: its tables as pandas DataFrames (read on first use), the summary and
    metadata as dicts, and the scenario as run.

    The tables are the files `concord run` writes, with the same columns and numbers: flows,
    channels, goodput, queues, delays (delay.csv: per-flow histogram buckets), cwnd and
    estimator (when the scenario traces them), and macroflows (runs with CM flows)."""

    def __init__(self, raw: "_concord.RawRun"):
        self._raw = raw

    @property
    def table_names(self) -> List[str]:
        """The names of the tables this run has."""
        return list(self._raw.table_names)

    def csv(self, name: str) -> str:
        """Table `name` as the CSV text `concord run` writes."""
        text = self._raw.table(name)
        if text is None:
            raise KeyError(f"this run has no {name!r} table; it has {self.table_names} "
                           "(cwnd and estimator need `record.cwnd` / `record.estimator`)")
        return text

    def table(self, name: str):
        """Table `name` as a pandas DataFrame, built from typed columns (no CSV parsing)."""
        columns = self._raw.columns(name)
        if columns is None:
            self.csv(name)  # raises the KeyError that names the tables there are
        return _frame(columns)

    def to_arrow(self, name: str):
        """Table `name` as a pyarrow Table."""
        import pyarrow as pa

        return pa.Table.from_pandas(self.table(name), preserve_index=False)

    def to_polars(self, name: str):
        """Table `name` as a polars DataFrame."""
        import polars as pl

        return pl.read_csv(io.StringIO(self.csv(name)))

    @cached_property
    def flows(self):
        return self.table("flows")

    @cached_property
    def channels(self):
        return self.table("channels")

    @cached_property
    def goodput(self):
        return self.table("goodput")

    @cached_property
    def queues(self):
        return self.table("queues")

    @cached_property
    def delays(self):
        return self.table("delay")

    @cached_property
    def cwnd(self):
        return self.table("cwnd")

    @cached_property
    def macroflows(self):
        """The CM's macroflows over time (runs with CM flows): rate, window, srtt, aging and
        the loss estimate at every queue sample."""
        return self.table("macroflows")

    @cached_property
    def summary(self) -> Dict[str, Any]:
        """summary.json as a dict."""
        return json.loads(self._raw.summary_json)

    @cached_property
    def meta(self) -> Dict[str, Any]:
        """meta.json as a dict: version, git revision, seed, overrides, command line."""
        return json.loads(self._raw.meta_json)

    @property
    def scenario_toml(self) -> str:
        """The scenario as run, as TOML."""
        return self._raw.scenario_toml

    def write(self, directory: PathLike) -> None:
        """Writes what `concord run` writes into `directory`."""
        self._raw.write(os.fspath(directory))

    def __repr__(self) -> str:
        s = self.summary
        return (f"<concord.Result {s['scenario']!r} seed {s['seed']}: "
                f"{len(s['flows'])} flows, total goodput {s['total_goodput_bps'] / 1e6:.3f} Mbit/s>")


def run(scenario: Union[Scenario, PathLike], *, seed: Optional[int] = None,
        capture_dir: Optional[PathLike] = None, **overrides: Any) -> Result:
    """Runs `scenario` (a Scenario, or a path to load) in-process, with the GIL released.

    `seed` and keyword overrides (`run(sc, seed=3)`; dotted keys need `sc.set`) apply to a copy.
    `capture_dir` receives the pcap traces the scenario records."""
    if not isinstance(scenario, Scenario):
        scenario = load(scenario)
    if seed is not None or overrides:
        scenario = scenario.copy()
        for key, value in overrides.items():
            scenario.set(key, value)
        if seed is not None:
            scenario.set("seed", seed)
    raw = _concord.run(scenario,
                       os.fspath(capture_dir) if capture_dir is not None else None,
                       ["python"] + sys.argv)
    return Result(raw)
