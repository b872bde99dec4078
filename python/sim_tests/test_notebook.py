"""examples/padhye-sweep.ipynb executes, and its figure's numbers are the report's.

The notebook recreates the report's figure `baseline-padhye` from a sweep. Executed here (as CI
executes it), its table is compared with the report a local `concord reproduce --quick --paper
baseline` writes: at each loss rate the report checks, the notebook's goodput over the Padhye
model equals the report's claim value within 1e-5 relative. The runs and the seed are the same;
the difference is the precision of the table the notebook reads: flows.csv (and so the sweep's
table) gives mean_rtt_s and mean_rto_s to 1 us, which on an RTT of at least 0.1 s and an RTO of
at least 0.2 s moves the model by at most 5e-6 + 2.5e-6 relative, where the report computes
from the unrounded doubles."""

from __future__ import annotations

import json
import math

import pytest

# The notebook's last cell is followed by this one, which hands its table to the test.
DUMP = """import json as _json
print("CONCORD-TABLE " + _json.dumps({"p": [float(x) for x in by_p.index],
                                      "ratio": [float(x) for x in by_p]}))"""

# Relative tolerance between the notebook's ratio and the report's (see the module's doc).
REL = 1e-5


def test_the_notebook_recreates_the_report_figures_numbers(root, local_report):
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    nb = nbformat.read(root / "examples/padhye-sweep.ipynb", as_version=4)
    nb.cells.append(nbformat.v4.new_code_cell(DUMP))
    png = root / "examples/baseline-padhye.png"
    try:
        nbclient.NotebookClient(nb, timeout=600, kernel_name="python3",
                                resources={"metadata": {"path": str(root / "examples")}}).execute()
        assert png.is_file(), "the notebook drew no figure"
    finally:
        png.unlink(missing_ok=True)
    out = "".join(o.get("text", "") for o in nb.cells[-1].outputs)
    table = json.loads(out.split("CONCORD-TABLE ", 1)[1])
    notebook = dict(zip(table["p"], table["ratio"]))
    report = json.loads((local_report / "results.json").read_text())
    claims = [c for c in report["claims"] if c["experiment"] == "baseline/padhye"]
    assert len(claims) == 3, [c["id"] for c in claims]
    for c in claims:
        # "NewReno, 10 Mbps, 100 ms RTT, random loss p = 0.5%"
        p = float(c["figure"].rsplit("p = ", 1)[1].rstrip("%")) / 100
        assert math.isclose(notebook[p], c["ours"], rel_tol=REL), (p, notebook[p], c["ours"])
