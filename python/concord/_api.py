"""Scenarios and runs: the extension's objects with pandas tables on top."""

from __future__ import annotations

import gc
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


def _import_pandas() -> None:
    """Imports pandas (and numpy and pyarrow with it) when no one has yet, with the cyclic
    garbage collector paused meanwhile, then restores the collector as it was (also when the
    import fails).

    The import makes some 60,000 objects that live as long as the process and next to no
    garbage, yet the collector runs about 140 times over the growing heap meanwhile; paused,
    it runs once after the import, over all it made, and finds the same garbage. Measured
    with `gc.callbacks` on pandas 3.1 and Python 3.11: about 50 ms of the collector's CPU
    time in the import became about 33 ms (a load of about 15 on 2 cores). (The collector's
    switch is the process's: a thread that turns it off while pandas is imported here finds
    it on again.)"""
    if "pandas" in sys.modules:
        return
    enabled = gc.isenabled()
    gc.disable()
    try:
        import pandas  # noqa: F401
    finally:
        if enabled:
            gc.enable()


_STRING_DTYPE = None
_STRINGS = None  # how a table's strings (None for gaps) become columns of that dtype
_LAYOUTS: Dict[str, "_Layout"] = {}  # tables' column layouts, by `RawRun.blocks`' layout text


def _string_dtype():
    """The dtype pandas gives a column of strings (`str` in pandas 3, object before)."""
    global _STRING_DTYPE
    if _STRING_DTYPE is None:
        import pandas as pd

        _STRING_DTYPE = pd.Series(["x"]).dtype
    return _STRING_DTYPE


def _strings():
    """A function from a table's string columns, as one list of values column after column (str,
    None for gaps) with `rows` values a column, to pandas columns of the string dtype. When the
    dtype is Arrow-backed (pandas 3 with pyarrow), the values become one Arrow array, cut into
    the columns (slices that share its buffers) and wrapped, which skips pandas' per-value
    checks and its per-column conversions; the wrap is pandas' own constructor from an Arrow
    result when it has one, else the public one. Any other pandas: pandas' own constructor,
    column by column."""
    global _STRINGS
    if _STRINGS is None:
        import pandas as pd

        dtype = _string_dtype()

        def generic(values, rows, count):
            return [pd.array(values[i * rows:(i + 1) * rows], dtype=dtype) for i in range(count)]

        _STRINGS = generic
        if getattr(dtype, "storage", None) == "pyarrow":
            try:
                import pyarrow as pa

                cls = dtype.construct_array_type()
                large_string = pa.large_string()
                chunked = pa.chunked_array

                def public(array):
                    return cls(array, dtype=dtype)

                from_result = getattr(pd.array(["x"], dtype=dtype), "_from_pyarrow_array", None)
                for wrap in ((from_result, public) if from_result is not None else (public,)):

                    # The last table's strings and their Arrow columns: a loop over seeds
                    # gets the same names (flows, algorithms, nodes) run after run, and Arrow
                    # arrays are immutable, so equal values reuse the columns (each frame
                    # still wraps its own pandas arrays, which pandas may replace).
                    last: List[Any] = [None]

                    def arrow(values, rows, count, wrap=wrap, last=last):
                        seen = last[0]
                        if seen is not None and seen[0] == rows and seen[1] == values:
                            columns = seen[2]
                        else:
                            whole = pa.array(values, type=large_string)
                            columns = [chunked([whole.slice(i * rows, rows)])
                                       for i in range(count)]
                            last[0] = (rows, values, columns)
                        return [wrap(c) for c in columns]

                    probe = (["x", None, "y", "zz", None, ""], 2, 3)
                    if all(made.equals(want) and made.dtype == dtype and type(made) is cls
                           for made, want in zip(arrow(*probe), generic(*probe))):
                        _STRINGS = arrow
                        break
            except Exception:  # any pandas/pyarrow that does not take it: the generic path
                pass
    return _STRINGS


class _Layout:
    """What every table of one column layout (`RawRun.blocks`' names and kinds) shares: the
    column Index, and where the integer, double and string columns go (pandas' block
    placements)."""

    def __init__(self, layout: str):
        import numpy as np
        import pandas as pd

        columns = [c.rsplit("=", 1) for c in layout.split("\x1f")] if layout else []
        self.names = [name for name, _ in columns]
        self.kinds = [kind for _, kind in columns]
        self.columns = pd.Index(self.names)
        self.int_at = np.array([i for i, k in enumerate(self.kinds) if k == "i8"], dtype=np.intp)
        self.float_at = np.array([i for i, k in enumerate(self.kinds) if k == "f8"],
                                 dtype=np.intp)
        self.str_at = [np.array([i], dtype=np.intp) for i, k in enumerate(self.kinds)
                       if k == "str"]
        self.placed: Optional[List[Any]] = None  # the blocks' classes and placements (_direct)


_MAKE: Any = ()  # _from_blocks()'s answer, once known
_DIRECT: Any = ()  # _direct()'s answer, once known


def _from_blocks():
    """pandas' constructor from ready blocks (`pandas.api.internals`, pandas 3), when the string
    columns are one-dimensional extension arrays it takes as blocks; else None."""
    global _MAKE
    if _MAKE == ():
        import pandas as pd

        _MAKE = None
        if isinstance(_string_dtype(), pd.api.extensions.ExtensionDtype):
            try:
                from pandas.api.internals import create_dataframe_from_blocks as _MAKE
            except ImportError:
                pass
    return _MAKE


def _direct():
    """A function from a layout and its blocks' arrays to the frame `_from_blocks()` makes of
    them, built as that constructor builds it but without its per-block checks, which cost
    more than a run's whole flows table: each block made by its class straight from the array
    and a placement the layout keeps, the block manager made unverified, the row index by
    pandas' own default. None when this pandas has no such internals or when a probe table
    made both ways differs in any value, dtype, block or axis (then `_from_blocks()` makes
    every frame).

    A frame's blocks share their placements (immutable: pandas replaces a placement, never
    changes one, and itself shares them between a frame and its copies) with every frame of
    the layout; their arrays are the frame's own."""
    global _DIRECT
    if _DIRECT == ():
        _DIRECT = None
        make = _from_blocks()
        if make is None:
            return None
        try:
            import numpy as np
            import pandas as pd
            from pandas._libs.internals import BlockPlacement
            from pandas.core.indexes.api import default_index
            from pandas.core.internals.blocks import get_block_type
            from pandas.core.internals.managers import BlockManager

            from_mgr = pd.DataFrame._from_mgr
            classes: Dict[Any, Any] = {}

            def placed(layout):
                """The layout's blocks: (block class, placement), in `values` order."""
                if layout.placed is None:
                    kinds = [(np.dtype("<i8"), layout.int_at), (np.dtype("<f8"), layout.float_at)]
                    kinds += [(_string_dtype(), at) for at in layout.str_at]
                    for dtype, _ in kinds:
                        if dtype not in classes:
                            classes[dtype] = get_block_type(dtype)
                    layout.placed = [(classes[dtype], BlockPlacement(at.copy()))
                                     for dtype, at in kinds if len(at)]
                return layout.placed

            def direct(layout, rows, values):
                blocks = [cls(v, ndim=2, placement=at)
                          for (cls, at), v in zip(placed(layout), values)]
                manager = BlockManager(blocks, [layout.columns.view(), default_index(rows)],
                                       verify_integrity=False)
                return from_mgr(manager, manager.axes)

            probe = _Layout("\x1f".join(["a=str", "b=i8", "c=f8", "d=i8", "e=str", "f=f8"]))
            texts = _strings()(["x", None, "", "yy"], 2, 2)

            def arrays():
                ints = np.array([[1, -2], [3, 4]], dtype="<i8")
                floats = np.array([[0.5, np.nan], [2.0, -1e300]], dtype="<f8")
                return [ints, floats] + [t.copy() for t in texts]

            def layout_of(frame):
                return [(type(b), b.dtype, list(b.mgr_locs.as_array), b.values.shape)
                        for b in frame._mgr.blocks]

            got = direct(probe, 2, arrays())
            want = make(list(zip(arrays(), [probe.int_at, probe.float_at] + probe.str_at)),
                        index=pd.RangeIndex(2), columns=probe.columns.view())
            # (DataFrame.equals: the same values, NaN where NaN, column by column of one dtype.)
            if (got.equals(want) and layout_of(got) == layout_of(want)
                    and list(got.dtypes) == list(want.dtypes)
                    and type(got.index) is type(want.index) and got.index.equals(want.index)
                    and type(got.columns) is type(want.columns)
                    and got.columns.equals(want.columns)
                    and got._mgr.is_consolidated() == want._mgr.is_consolidated()):
                _DIRECT = direct
        except Exception:  # any pandas whose internals differ: the public constructor from blocks
            pass
    return _DIRECT


def _frame(blocks):
    """A pandas DataFrame of a table as the extension groups it (`RawRun.blocks`): numeric
    columns are read by numpy straight from their bytes, with no CSV text parsed; the dtypes are
    those `pandas.read_csv` gives the same table (int64, float64 with NaN for gaps, str).

    The integer columns are one 2-D int64 block and the doubles one float64 block, each string
    column a block of its own: the frame pandas would consolidate the columns into, made from
    those blocks (`_direct()`, else pandas' constructor from blocks) without the public
    constructor's per-column checks and copies, which cost as much as the one-second run
    itself. A pandas without either gets the same frame by another constructor."""
    _import_pandas()
    import numpy as np
    import pandas as pd

    layout_key, rows, ints, floats, texts = blocks
    layout = _LAYOUTS.get(layout_key)
    if layout is None:
        layout = _LAYOUTS[layout_key] = _Layout(layout_key)
    # numpy reads the bytearrays in place (writable, owned by this frame alone).
    int_block = np.frombuffer(ints, dtype="<i8").reshape(len(layout.int_at), rows)
    float_block = np.frombuffer(floats, dtype="<f8").reshape(len(layout.float_at), rows)
    texts = _strings()(texts, rows, len(layout.str_at))
    direct = _direct()
    if direct is not None:
        values = [int_block] if len(layout.int_at) else []
        if len(layout.float_at):
            values.append(float_block)
        return direct(layout, rows, values + texts)
    index = layout.columns.view()  # a new Index on the same values: `df.columns.name` stays local
    make = _from_blocks()
    if make is not None:
        # Each frame its own placements: none shares what pandas may change.
        parts = [(int_block, layout.int_at.copy()), (float_block, layout.float_at.copy())]
        parts += [(text, at.copy()) for text, at in zip(texts, layout.str_at)]
        return make([p for p in parts if len(p[1])], index=pd.RangeIndex(rows), columns=index)
    by_kind = {"i8": iter(int_block), "f8": iter(float_block), "str": iter(texts)}
    arrays = [next(by_kind[kind]) for kind in layout.kinds]
    # The columns are whole and distinct: skip the checks of the public constructor when
    # pandas has its private one.
    from_arrays = getattr(pd.DataFrame, "_from_arrays", None)
    if from_arrays is not None:
        try:
            return from_arrays(arrays, columns=index, index=pd.RangeIndex(rows),
                               verify_integrity=False)
        except TypeError:
            pass
    return pd.DataFrame(dict(zip(layout.names, arrays)), copy=False)


class Result:
    """A finished run: its tables as pandas DataFrames (read on first use), the summary and
    metadata as dicts, and the scenario as run. The extension makes each output when first
    asked for: flows from the summary figures, the series tables (channels, goodput, queues,
    delay, ...) from the finished simulator, kept until one of them is read.

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
        blocks = self._raw.blocks(name)
        if blocks is None:
            self.csv(name)  # raises the KeyError that names the tables there are
        return _frame(blocks)

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
    if overrides:
        scenario = scenario.copy()
        for key, value in overrides.items():
            scenario.set(key, value)
    # The seed is set by the extension on its own copy: a loop over seeds pays no copy here.
    raw = _concord.run(scenario,
                       os.fspath(capture_dir) if capture_dir is not None else None,
                       ["python"] + sys.argv, seed)
    return Result(raw)
