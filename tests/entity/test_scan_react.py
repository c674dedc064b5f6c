"""React components across a real scan: what needs the file's path or the other files of the
repository (anonymous default exports named after their file, props types imported from
another file)."""

from __future__ import annotations

import json
from pathlib import Path

from planning_memory.core import schema
from planning_memory.core.layout import Layout
from planning_memory.entity import get_component, get_file, scan
from planning_memory.store import Store

Entity = dict  # type: ignore[type-arg]


def run(root: Path, files: dict[str, str], parsed: int | None = None) -> Layout:
    """Write ``files`` under ``root`` and scan it (``parsed`` files parsed, when given); the
    shards must be valid."""
    for rel, content in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(content)
    layout = Layout.for_repo(root)
    report = scan(layout, Store(layout), {"memory": {"entity": {"scanWorkers": 1}}})
    assert report.errors == 0, report.error_paths
    assert parsed is None or (report.parsed, report.unchanged) == (parsed, 2 - parsed)
    for path in (layout.entity / "files").rglob("_shard*.json"):
        errors = schema.validator("entity-files").iter_errors(json.loads(path.read_text()))
        assert not list(errors), path
    return layout


def component(layout: Layout, name: str) -> Entity:
    (found,) = get_component(layout, Store(layout), name)
    return found


# -- anonymous default exports -------------------------------------------------------------
def test_an_anonymous_default_export_is_named_after_its_file_in_a_scan(tmp_path: Path) -> None:
    layout = run(
        tmp_path,
        {
            "src/Header.tsx": "export default function () { return <header /> }\n",
            "src/site-footer.jsx": "export default () => <footer><Logo /></footer>\n",
            "src/NavBar/index.tsx": "export default memo(() => <nav />)\n",
        },
    )
    assert component(layout, "Header")["file"] == "src/Header.tsx"
    assert component(layout, "SiteFooter")["children"] == ["Logo"]
    assert component(layout, "NavBar")["file"] == "src/NavBar/index.tsx"
    assert get_component(layout, Store(layout), "default") == []
    header = get_file(layout, Store(layout), "src/Header.tsx")
    assert header is not None and header["components"] == ["Header"]


# -- props types imported from another file ------------------------------------------------
TYPES = (
    "import type { Theme } from './theme'\n"
    "export type InputLabelProps = { label: string; error?: boolean }\n"
    "export interface RippleProps { onPress?: () => void; borderless?: boolean }\n"
    "export type Themed = Theme & { dark: boolean }\n"
)
LABEL = (
    "import type { InputLabelProps } from './types'\n"
    "import * as T from './types'\n\n"
    "export const InputLabel = (props: InputLabelProps & { wrapped?: boolean }) => (\n"
    "  <p>{props.label}{props.extra}</p>\n)\n\n"
    "export function Ripple({ style }: T.RippleProps & { style?: object }) {\n"
    "  return <b style={style} />\n}\n\n"
    "export function Plain({ dark }: T.Themed) { return <i>{dark}</i> }\n"
)


def test_an_imported_props_type_gives_its_members(tmp_path: Path) -> None:
    layout = run(tmp_path, {"src/types.ts": TYPES, "src/InputLabel.tsx": LABEL})
    label = component(layout, "InputLabel")
    assert label["props_type"] == "import('./types').InputLabelProps"
    assert label["props"] == ["label", "error", "wrapped", "extra"]
    assert component(layout, "Ripple")["props"] == ["onPress", "borderless", "style"]
    assert component(layout, "Plain")["props"] == ["dark"]  # one file deep: not Theme's
    types = get_file(layout, Store(layout), "src/types.ts")
    assert types is not None and types["types"]["RippleProps"] == ["onPress", "borderless"]


def test_imported_props_follow_the_type_file_when_only_it_changes(tmp_path: Path) -> None:
    files = {"src/types.ts": TYPES, "src/InputLabel.tsx": LABEL}
    layout = run(tmp_path, files)
    changed = TYPES.replace("error?: boolean", "error?: boolean; hint?: string")
    run(tmp_path, {"src/types.ts": changed}, parsed=2)  # the component's file again
    wider = ["label", "error", "hint", "wrapped", "extra"]
    assert component(layout, "InputLabel")["props"] == wider
    (tmp_path / "src/types.ts").unlink()
    run(tmp_path, {})
    assert component(layout, "InputLabel")["props"] == ["wrapped", "label", "extra"]
    run(tmp_path, {"src/types.ts": TYPES})
    assert component(layout, "InputLabel")["props"] == ["label", "error", "wrapped", "extra"]
    before = {p: p.read_bytes() for p in (layout.entity / "files").rglob("_shard*.json")}
    run(tmp_path, {})  # nothing changed: nothing written
    assert {p: p.read_bytes() for p in (layout.entity / "files").rglob("_shard*.json")} == before


SURFACE = (
    "import * as React from 'react'\n\n"
    "export type Props = { elevation?: number; mode?: 'flat' | 'elevated'; children: any }\n\n"
    "const Surface = ({ elevation, mode, children }: Props) => <div>{children}</div>\n\n"
    "export default Surface\n"
)
BUTTON = (
    "import * as React from 'react'\n"
    "import type { $Omit } from './types'\n"
    "import Surface from './Surface'\n\n"
    "export type Props = $Omit<React.ComponentProps<typeof Surface>, 'mode'> & {\n"
    "  label: string\n}\n\n"
    "export const Button = ({ label, ...rest }: Props) => <Surface {...rest}>{label}</Surface>\n\n"
    "type Wide = React.ComponentProps<typeof Surface> & { extra?: boolean }\n"
    "export function Wider(props: Wide) { return <Surface {...props} /> }\n\n"
    "type Diffed = $Diff<{ a: number; b: number; c: number }, { b: number }>\n"
    "export function Diff(props: Diffed) { return <i>{props.a}</i> }\n"
)


def test_props_of_a_component_type_and_flow_style_helpers(tmp_path: Path) -> None:
    """``ComponentProps<typeof Surface>`` gives Surface's props (from its own file), less
    what ``$Omit`` leaves out; ``$Diff<A, B>`` is A's members without B's."""
    types = "export type $Omit<T, K> = Pick<T, Exclude<keyof T, K>>\n"
    files = {"src/types.ts": types, "src/Surface.tsx": SURFACE, "src/Button.tsx": BUTTON}
    layout = run(tmp_path, files)
    button = component(layout, "Button")
    assert button["props_type"] == "Omit<typeof import('./Surface').Surface, 'mode'>"
    assert button["props"] == ["elevation", "children", "label"]
    assert component(layout, "Wider")["props"] == ["elevation", "mode", "children", "extra"]
    assert component(layout, "Diff")["props"] == ["a", "c"]
    changed = SURFACE.replace("children: any }", "children: any; tint?: string }")
    run(tmp_path, {"src/Surface.tsx": changed})  # the component's props follow
    assert component(layout, "Button")["props"] == ["elevation", "children", "tint", "label"]


# -- props inherited through imported bases, more than one file deep -----------------------
DEEP = {
    "src/common/props.ts": (
        "export interface Props { className?: string }\n"
        "export interface IntentProps { intent?: 'primary' | 'danger' }\n"
    ),
    "src/common/index.ts": "export * from './props'\n",
    "src/base.ts": (
        "import type { Props } from './common'\n"
        "import type { Loop } from './loop'\n"
        "export interface BaseProps<E> extends Props, Loop { elementRef?: E }\n"
    ),
    "src/loop.ts": (  # a cycle: base.ts <-> loop.ts
        "import type { BaseProps } from './base'\n"
        "export interface Loop extends BaseProps<Element> { looped?: boolean }\n"
    ),
    "src/popper.ts": (
        "import type { Props } from './common/props'\n"
        "import type { Modifier } from '@popperjs/core'\n"
        "export interface PopperProps extends Props, Modifier { x: number; placement?: string }\n"
    ),
    "src/Tooltip.tsx": (
        "import * as React from 'react'\n"
        "import type { BaseProps } from './base'\n"
        "import type { PopperProps } from './popper'\n"
        "import { IntentProps } from './common'\n\n"
        "interface TooltipProps\n"
        "  extends BaseProps<HTMLDivElement>, Omit<PopperProps, 'x'>, IntentProps {\n"
        "  content: string\n}\n\n"
        "export const Tooltip = React.forwardRef<HTMLDivElement, TooltipProps>(\n"
        "  ({ content }, ref) => <div ref={ref}>{content}</div>\n)\n"
    ),
    "src/deeper.ts": "export interface Deeper { d: boolean }\n",
    "src/base2.ts": "import { Deeper } from './deeper'\nexport type Base = { b: number } & Deeper",
    "src/types.ts": "import type { Base } from './base2'\nexport type Props = Base & { a: string }",
    "src/Field.tsx": (
        "import * as React from 'react'\nimport type { Props } from './types'\n\n"
        "export const Field: React.FC<Props> = ({ a }) => <p>{a}</p>\n"
        "export function Plain({ a, extra }: Props & { extra?: number }) { return <i>{a}</i> }\n"
    ),
    "src/IconButton.tsx": (
        "type P = { icon: string; onPress(): void }\n"
        "export default function IconButton({ icon, onPress }: P) {\n"
        "  return <button onClick={onPress}>{icon}</button>\n}\n"
    ),
    "src/Action.tsx": (
        "import * as React from 'react'\nimport IconButton from './IconButton'\n"
        "type Props = React.ComponentProps<typeof IconButton> & { color?: string }\n"
        "export const Action = ({ color, ...rest }: Props) => <IconButton {...rest} />\n"
    ),
    "src/Back.tsx": (
        "import * as React from 'react'\nimport { Action } from './Action'\n"
        "type P = React.ComponentProps<typeof Action>\n"
        "export const Back = (props: P) => <Action {...props} />\n"
    ),
}


def test_props_inherited_through_imported_bases_across_files(tmp_path: Path) -> None:
    """``extends`` and ``&`` are followed through imports into other files of the map, also
    through a generic base (its own declared members), a barrel's ``export *`` and a cycle;
    library types stay out."""
    layout = run(tmp_path, DEEP)
    tooltip = component(layout, "Tooltip")
    assert tooltip["props_type"] == (
        "import('./base').BaseProps & Omit<import('./popper').PopperProps, 'x'>"
        " & import('./common').IntentProps"
    )
    assert tooltip["props"] == [
        "elementRef", "className", "looped", "placement", "intent", "content"
    ]  # fmt: skip
    assert component(layout, "Field")["props"] == ["a", "b", "d"]
    assert component(layout, "Plain")["props"] == ["a", "b", "d", "extra"]
    assert component(layout, "Back")["props"] == ["icon", "onPress", "color"]  # two files away
    base = get_file(layout, Store(layout), "src/base.ts")
    assert base is not None and base["types"] == {"BaseProps": ["elementRef"]}  # its own


def test_a_change_two_files_away_reaches_the_component(tmp_path: Path) -> None:
    layout = run(tmp_path, DEEP)
    run(tmp_path, {"src/deeper.ts": "export interface Deeper { d: boolean; e?: string }\n"})
    assert component(layout, "Field")["props"] == ["a", "b", "d", "e"]
    run(tmp_path, {"src/common/props.ts": "export interface Props { id?: string }\n"})
    wider = ["elementRef", "id", "looped", "placement", "content"]  # IntentProps gone
    assert component(layout, "Tooltip")["props"] == wider
    (tmp_path / "src/common/index.ts").unlink()
    run(tmp_path, {})
    no_barrel = ["elementRef", "looped", "placement", "id", "content"]  # './common' unresolved
    assert component(layout, "Tooltip")["props"] == no_barrel
