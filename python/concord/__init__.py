"""concord from Python.

The packet simulator runs in-process (a Rust extension, no subprocess):

    import concord
    sc = concord.load("scenarios/basic/dumbbell-4-red.toml")
    sc.set("topology.bottleneck.rate", "20Mbps")
    r = concord.run(sc)
    r.flows          # pandas DataFrame, the rows of flows.csv
    r.summary        # dict, summary.json

`concord.sweep(...)` runs a grid of overrides times seeds into one tidy table, locally or on a
Dask cluster. `concord.cm` is the client of concordd, the Congestion Manager daemon.
"""

from importlib import import_module as _import_module

__all__ = ["Result", "RunError", "Scenario", "ScenarioError", "load", "parse", "run", "sweep",
           "cm", "__version__"]

# The simulator's names come from the compiled extension; they are imported on first use so
# that `concord.cm` (pure Python) works from a source tree where the extension is not built.
_LAZY = {
    "Result": ("concord._api", "Result"),
    "RunError": ("concord._api", "RunError"),
    "Scenario": ("concord._api", "Scenario"),
    "ScenarioError": ("concord._api", "ScenarioError"),
    "load": ("concord._api", "load"),
    "parse": ("concord._api", "parse"),
    "run": ("concord._api", "run"),
    "sweep": ("concord.sweep", "sweep"),
    "__version__": ("concord._api", "__version__"),
}


def __getattr__(name):
    if name == "cm":
        return _import_module("concord.cm")
    try:
        module, attr = _LAZY[name]
    except KeyError:
        raise AttributeError(f"module 'concord' has no attribute {name!r}") from None
    value = getattr(_import_module(module), attr)
    globals()[name] = value
    return value


def __dir__():
    return sorted(__all__)
