"""Inline SVG pictures: a growth line, horizontal bars and a dependency graph.

Pure: values in, ``Html`` out; colours come from the style sheet (classes, no inline style,
which the page's Content-Security-Policy refuses). Every label goes through ``tag``, so
it is escaped.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from planning_memory.viewer.html import Html, tag

WIDTH, HEIGHT, PAD = 640, 180, 32
TICK_CHAR_W = 7  # the widest digit of an 11 px tick label, with room to spare


def _svg(width: int, height: int, label: str, *children: object) -> Html:
    return tag(
        "svg",
        tag("title", label),
        *children,
        viewBox=f"0 0 {width} {height}",
        width=width,
        height=height,
        role="img",
        aria_label=label,
        class_="chart",
    )


def growth(points: Sequence[tuple[str, int]], bars: Sequence[tuple[str, int]], label: str) -> Html:
    """A cumulative line over dated counts (``points``: day, how many that day), with the
    dated ``bars`` (commits per day) under it; the axis is the days with activity, in order
    (evenly spaced, so a quiet year does not squeeze the rest into a corner)."""
    days = sorted({d for d, _ in points} | {d for d, _ in bars})
    if not days:
        return tag("p", "no dated records yet", class_="empty")
    total = sum(count for _, count in points)
    left = max(PAD, 10 + TICK_CHAR_W * len(str(total)))  # room for the y-axis label
    span = WIDTH - left - PAD
    x_of = {d: left + span * (i / max(1, len(days) - 1)) for i, d in enumerate(days)}
    total, line = 0, []
    for day, count in sorted(points):
        total += count
        line.append((x_of[day], total))
    if line and line[-1][0] < x_of[days[-1]]:
        line.append((x_of[days[-1]], total))  # flat to the last day with activity
    top = max(1, total)

    def y(value: float) -> float:
        return HEIGHT - PAD - (HEIGHT - 2 * PAD) * value / top

    path = " ".join(f"{'M' if i == 0 else 'L'}{x:.1f},{y(v):.1f}" for i, (x, v) in enumerate(line))
    most = max((c for _, c in bars), default=1) or 1
    columns = [
        tag(
            "rect",
            tag("title", f"{day}: {count} commits"),
            x=f"{x_of[day] - 2:.1f}",
            y=f"{HEIGHT - PAD - 40 * count / most:.1f}",
            width=4,
            height=f"{40 * count / most:.1f}",
            class_="bar-git",
        )
        for day, count in bars
    ]
    axis = [
        tag("line", x1=left, y1=HEIGHT - PAD, x2=WIDTH - PAD, y2=HEIGHT - PAD, class_="axis"),
        tag("text", days[0], x=left, y=HEIGHT - 10, class_="tick"),
        tag("text", days[-1], x=WIDTH - PAD, y=HEIGHT - 10, class_="tick end"),
        tag("text", str(total), x=left - 4, y=f"{y(total) + 4:.1f}", class_="tick end axis-label"),
    ]
    return _svg(WIDTH, HEIGHT, label, *axis, *columns, tag("path", d=path, class_="line"))


def hbars(pairs: Sequence[tuple[str, float]], label: str, unit: str = "") -> Html:
    """One horizontal bar per (name, value), longest first as given."""
    if not pairs:
        return tag("p", "nothing to chart", class_="empty")
    most = max(v for _, v in pairs) or 1
    row, name_w = 20, 180
    rows = []
    for i, (name, value) in enumerate(pairs):
        top = 6 + i * row
        width = (WIDTH - name_w - 80) * value / most
        rows += [
            tag("text", name[:28], x=name_w - 6, y=top + 13, class_="tick end"),
            tag(
                "rect",
                tag("title", f"{name}: {value:g}{unit}"),
                x=name_w,
                y=top + 2,
                width=f"{width:.1f}",
                height=row - 6,
                class_="bar",
            ),
            tag(
                "text", f"{value:g}{unit}", x=f"{name_w + width + 4:.1f}", y=top + 13, class_="tick"
            ),
        ]
    return _svg(WIDTH, 12 + row * len(pairs), label, *rows)


def graph(nodes: Sequence[str], edges: Sequence[tuple[str, str]], label: str) -> Html:
    """Nodes on a circle, labelled outside it, and an arrow for each edge (from the node that
    depends to the one it depends on); edges to unknown nodes are dropped."""
    if not nodes:
        return tag("p", "nothing to draw", class_="empty")
    radius = 110 + 6 * min(len(nodes), 40)
    width, height = 2 * radius + 420, 2 * radius + 60
    cx, cy = width / 2, height / 2
    turn = [2 * math.pi * i / len(nodes) - math.pi / 2 for i in range(len(nodes))]
    at = {
        n: (cx + radius * math.cos(t), cy + radius * math.sin(t))
        for n, t in zip(nodes, turn, strict=False)
    }
    arrows = [
        tag(
            "line",
            tag("title", f"{a} → {b}"),
            x1=f"{at[a][0]:.1f}",
            y1=f"{at[a][1]:.1f}",
            x2=f"{_short(at[a], at[b])[0]:.1f}",
            y2=f"{_short(at[a], at[b])[1]:.1f}",
            class_="edge",
            marker_end="url(#arrow)",
        )
        for a, b in edges
        if a in at and b in at and a != b
    ]
    marker = tag(
        "defs",
        tag(
            "marker",
            tag("path", d="M0,0 L8,4 L0,8 z", class_="arrowhead"),
            id="arrow",
            viewBox="0 0 8 8",
            refX=8,
            refY=4,
            markerWidth=8,
            markerHeight=8,
            orient="auto",
        ),
    )
    dots = []
    for (name, (x, y)), t in zip(at.items(), turn, strict=False):
        lx, ly = cx + (radius + 12) * math.cos(t), cy + (radius + 12) * math.sin(t) + 4
        side = "middle" if abs(math.cos(t)) < 0.2 else ("start" if math.cos(t) > 0 else "end")
        text = name if len(name) <= 40 else "…" + name[-39:]
        dots.append(
            tag(
                "g",
                tag("title", name),
                tag("circle", cx=f"{x:.1f}", cy=f"{y:.1f}", r=6, class_="node"),
                tag("text", text, x=f"{lx:.1f}", y=f"{ly:.1f}", class_=f"tick {side}"),
            )
        )
    return _svg(int(width), int(height), label, marker, *arrows, *dots)


def _short(a: tuple[float, float], b: tuple[float, float], gap: float = 8) -> tuple[float, float]:
    """The point ``gap`` before ``b`` on the way from ``a`` (an arrow stops at the dot)."""
    dx, dy = b[0] - a[0], b[1] - a[1]
    dist = math.hypot(dx, dy) or 1
    return b[0] - dx * gap / dist, b[1] - dy * gap / dist
