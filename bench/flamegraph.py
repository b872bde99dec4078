#!/usr/bin/env python3
"""A flame graph (SVG) from `perf script` output, with no tool beyond Python's standard library.

    perf record -F 999 -g -o perf.data -- target/release/concord bench --flows 10000 ...
    perf script -i perf.data | python3 bench/flamegraph.py "title" > out.svg

Each sample's stack is collapsed to `root;...;leaf` (Rust hashes and generics trimmed), stacks
are summed, and every frame is drawn as a box whose width is its share of the samples
(Brendan Gregg's layout: the root at the bottom, callees above, siblings in name order).
"""

import html
import re
import sys
from collections import defaultdict

WIDTH = 1800  # px
ROW = 16  # px per stack level
MIN_PX = 0.3  # boxes narrower than this are left out


def short(name):
    """`concord_sim::simulator::Simulator::run_until::h0123...` -> `Simulator::run_until`."""
    name = re.sub(r"::h[0-9a-f]{16}$", "", name)
    name = re.sub(r"<[^<>]*>", "<>", name)
    name = re.sub(r"<[^<>]*>", "<>", name)
    parts = name.split("::")
    return "::".join(parts[-2:]) if len(parts) > 2 else name


def collapse(lines):
    """`perf script` text -> {stack tuple, root first: samples}."""
    stacks = defaultdict(int)
    frames = []
    for line in lines:
        line = line.rstrip("\n")
        if not line.strip():
            if frames:
                stacks[tuple(reversed(frames))] += 1
            frames = []
            continue
        if line[0] in " \t":
            # "\t    55d0c1 symbol+0x12 (dso)"
            fields = line.strip().split(None, 1)
            if len(fields) < 2:
                continue
            sym = re.sub(r"\+0x[0-9a-f]+ \(.*\)$", "", fields[1])
            sym = re.sub(r" \(.*\)$", "", sym)
            frames.append(short(sym))
    if frames:
        stacks[tuple(reversed(frames))] += 1
    return stacks


def tree(stacks):
    root = {"n": 0, "c": {}}
    for st, n in stacks.items():
        node = root
        node["n"] += n
        for f in st:
            node = node["c"].setdefault(f, {"n": 0, "c": {}})
            node["n"] += n
    return root


def colour(name):
    h = sum(ord(c) for c in name)
    if "concord_cc" in name or "tcp" in name.lower():
        return f"rgb(230,{120 + h % 80},60)"
    return f"rgb({200 + h % 55},{80 + h % 90},50)"


def main():
    title = sys.argv[1] if len(sys.argv) > 1 else "flame graph"
    root = tree(collapse(sys.stdin))
    total = root["n"] or 1
    depth = [0]
    boxes = []

    def walk(node, x, level):
        depth[0] = max(depth[0], level)
        for name in sorted(node["c"]):
            child = node["c"][name]
            w = child["n"] / total * WIDTH
            if w >= MIN_PX:
                boxes.append((x, level, w, name, child["n"]))
                walk(child, x, level + 1)
            x += w

    walk(root, 0.0, 0)
    height = (depth[0] + 3) * ROW
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{height}" '
        f'font-family="monospace" font-size="11">',
        f'<text x="4" y="13">{html.escape(title)} ({total} samples)</text>',
    ]
    for x, level, w, name, n in boxes:
        y = height - (level + 1) * ROW
        pct = 100.0 * n / total
        label = html.escape(name)
        out.append(
            f'<g><title>{label} ({n} samples, {pct:.2f}%)</title>'
            f'<rect x="{x:.2f}" y="{y}" width="{w:.2f}" height="{ROW - 1}" '
            f'fill="{colour(name)}"/>'
        )
        chars = int(w / 7)
        if chars >= 4:
            text = name if len(name) <= chars else name[: chars - 2] + ".."
            out.append(f'<text x="{x + 2:.2f}" y="{y + 11}">{html.escape(text)}</text>')
        out.append("</g>")
    out.append("</svg>")
    print("\n".join(out))


if __name__ == "__main__":
    main()
