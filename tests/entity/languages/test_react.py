"""React component facts: which functions and classes are components, their props, state,
hooks and rendered children, read from the syntax tree."""

from __future__ import annotations

from planning_memory.entity.facts import ComponentFact
from planning_memory.entity.languages import javascript


def _components(
    source: bytes, dialect: str = "tsx", path: str | None = None
) -> dict[str, ComponentFact]:
    facts = javascript.extract(source, dialect, path)
    return {c["name"]: c for c in facts["components"]}


# -- which classes are components ----------------------------------------------------------
def test_class_component_extending_a_local_base() -> None:
    source = b"""import React from 'react'
class BaseView<P> extends React.Component<P> {
  renderBody() { return null }
  render() { return <section>{this.renderBody()}</section> }
}
class Panel extends BaseView<PanelProps> {
  renderBody() { return <Title text={this.props.heading} /> }
}
class Sheet extends Panel {}
class Shape extends Geometry {}
class Widget { render() { return <Frame /> } }
class Boundary extends Component { render() { return this.props.children } }
"""
    components = _components(source)
    assert set(components) == {"BaseView", "Panel", "Sheet", "Widget", "Boundary"}
    assert components["Panel"]["kind"] == "class"
    assert components["Panel"]["props"] == ["heading"]
    assert components["Panel"]["children"] == ["Title"]
    assert components["Widget"]["children"] == ["Frame"]
    assert components["Boundary"]["props"] == ["children"]


def test_abstract_and_never_rendering_base_classes_are_not_components() -> None:
    """A TS ``abstract`` class, and a class of the file that another extends and that
    renders nowhere along its chain, is a base for components, not one; what extends it and
    renders is, and so is a class no other extends (a ``<Column>`` its parent reads)."""
    source = b"""import * as React from 'react'
export abstract class AbstractPureComponent<P, S = {}> extends React.PureComponent<P, S> {
  protected validateProps(props: P) {}
}
export abstract class AbstractView<P> extends React.Component<P> {
  render() { return <div>{this.renderBody()}</div> }
  protected abstract renderBody(): React.ReactNode
}
class Lifecycle extends React.Component { componentDidMount() { this.ready = true } }
export class Tooltip extends AbstractPureComponent<{ content: string }> {
  render() { return <span>{this.props.content}</span> }
}
export class Card extends AbstractView<{ title: string }> {
  renderBody() { return this.props.title }
}
export class Timer extends Lifecycle { render() { return null } }
export class Arrow extends React.Component { render = () => <i /> }
export class Column extends React.PureComponent<{ id: string }> { static displayName = 'C' }
"""
    components = _components(source)
    assert set(components) == {"Tooltip", "Card", "Timer", "Arrow", "Column"}
    assert components["Card"]["props"] == ["title"]


# -- props from the syntax tree ------------------------------------------------------------
def test_props_destructured_in_the_body_with_defaults_nesting_and_comments() -> None:
    source = b"""export function Profile(props) {
  const {
    user, // the signed-in user
    options = { compact: true, labels: { a: 1 } },
    /* legacy } = props */ theme: { color },
    size: avatarSize = 32,
    ...rest
  } = props
  const onClick = () => props.onSelect(props.user.id)
  return <Avatar user={user} size={avatarSize} color={color} {...rest} />
}
export const Row = ({ id, label: text = 'x', style: { width } = {}, ...other }) => (
  <tr id={id}>{text}{width}</tr>
)
"""
    components = _components(source, "javascript")
    assert components["Profile"]["props"] == ["user", "options", "theme", "size", "onSelect"]
    assert components["Row"]["props"] == ["id", "label", "style"]


def test_class_props_from_the_tree() -> None:
    source = b"""class Card extends React.PureComponent {
  render() {
    const { title, footer = null, ...rest } = this.props // { ignored }
    return <div title={title}>{this.props.body}{footer}</div>
  }
}
"""
    assert _components(source, "javascript")["Card"]["props"] == ["title", "footer", "body"]


# -- props types ---------------------------------------------------------------------------
TYPED_TSX = b"""import type { ButtonProps } from './Button'
interface BaseProps { id: string; hidden?: boolean }
interface CardProps extends BaseProps { title: string }
type Tone = { tone: 'dark' | 'light' }
type PanelProps = CardProps & Tone & { collapsed?: boolean }

export const Panel: React.FC<PanelProps> = ({ title, children }) => (
  <section>{title}{children}</section>
)
export const Box: FC<Tone> = (props) => <div className={props.tone} />
export const Field: FunctionComponent<Readonly<BaseProps>> = () => <input />
export const Input = forwardRef<HTMLInputElement, CardProps>((props, ref) => <input ref={ref} />)
export const Area = React.forwardRef((props: Tone, ref) => <textarea ref={ref} />)
export const Item = memo(function Item(props: PanelProps) { return <li>{props.title}</li> })
export const Tag = React.memo<Omit<CardProps, 'hidden'>>((props) => <b />)
export function Fancy(props: ButtonProps) { return <button>{props.label}</button> }
"""


def test_props_types_from_fc_forward_ref_memo_and_local_types() -> None:
    props = {name: c["props"] for name, c in _components(TYPED_TSX).items()}
    assert props == {
        "Panel": ["title", "id", "hidden", "tone", "collapsed", "children"],
        "Box": ["tone"],
        "Field": ["id", "hidden"],
        "Input": ["title", "id", "hidden"],
        "Area": ["tone"],
        "Item": ["title", "id", "hidden", "tone", "collapsed"],
        "Tag": ["title", "id"],
        "Fancy": ["label"],  # ButtonProps is imported: only what the component reads
    }


# -- state ---------------------------------------------------------------------------------
def test_class_state_typed_field_constructor_and_functional_set_state() -> None:
    source = b"""interface State { open: boolean; count: number }
export class Counter extends React.Component<Props, State> {
  state: State = { open: false, count: 0 }
  bump = () => this.setState((prev) => ({ count: prev.count + 1, bumped: true }))
  reset() { this.setState(function () { return { resetAt: Date.now() } }) }
  render() { return <Dialog state={this.state} open={this.state.open} /> }
}
export class Legacy extends Component {
  constructor(props) { super(props); this.state = { ready: false } }
  render() { return <Spinner state="idle" /> }
}
"""
    components = _components(source)
    assert components["Counter"]["state"] == ["open", "count", "bumped", "resetAt"]
    assert components["Legacy"]["state"] == ["ready"]


def test_use_state_with_patterns_reports_the_state_not_the_setter() -> None:
    source = b"""export function Form() {
  const [{ email, password }, setForm] = useState({ email: '', password: '' })
  const [, forceRender] = useReducer((x) => x + 1, 0)
  const [open = false, setOpen] = React.useState<boolean>()
  const pair = useState(0)
  return <form data-open={open}>{email}{password}{pair}</form>
}
"""
    assert _components(source)["Form"]["state"] == ["email", "password", "open", "pair"]


# -- names: anonymous defaults and wrappers ------------------------------------------------
def test_anonymous_default_exports_are_named_after_the_file() -> None:
    function = b"export default function () { return <header /> }\n"
    arrow = b"export default () => <footer><Logo /></footer>\n"
    wrapped = b"export default memo(() => <nav />)\n"
    assert _components(function, "tsx", "src/Header.tsx")["Header"]["exported"] is True
    assert _components(arrow, "javascript", "src/site-footer.jsx")["SiteFooter"]["children"] == [
        "Logo"
    ]
    assert set(_components(wrapped, "tsx", "src/components/NavBar/index.tsx")) == {"NavBar"}
    assert set(_components(function, "tsx")) == {"default"}  # no path: the export's name


def test_an_anonymous_default_export_never_takes_a_declared_components_name() -> None:
    """The file's own ``Card`` keeps its name, whatever the order; the anonymous default
    export is then ``default``, the name it is exported under (never ``Card#2``)."""
    after = b"function Card() { return <div /> }\nexport default () => <Card />\n"
    before = b"export default function () { return <Card /> }\nconst Card = () => <div />\n"
    klass = b"export default class extends Component { render() { return <Card /> } }\n"
    for source in (after, before, klass + b"function Card() { return <p /> }\n"):
        found = javascript.extract(source, "tsx", "src/Card.tsx")["components"]
        assert sorted(c["name"] for c in found) == ["Card", "default"]
        assert next(c for c in found if c["name"] == "Card")["children"] == []
    assert [c["name"] for c in javascript.extract(klass, "tsx", "src/Card.tsx")["components"]] == [
        "Card"
    ]


def test_hoc_wrapped_components() -> None:
    styled = b"""function Button({ label }) { return <button>{label}</button> }
export default withStyles(styles)(Button)
"""
    connected = b"""const Comp = ({ items }) => <ul>{items}</ul>
export default connect(mapState, mapDispatch)(Comp)
"""
    memoized = b"""const Toolbar = memo(function Toolbar({ tools }) { return <div>{tools}</div> })
export { Toolbar }
"""
    assert _components(styled, "javascript")["Button"]["exported"] is True
    assert javascript.extract(styled, "javascript")["exports"] == ["Button"]
    assert _components(connected, "javascript")["Comp"]["exported"] is True
    assert _components(memoized, "javascript")["Toolbar"]["props"] == ["tools"]


# -- children ------------------------------------------------------------------------------
def test_fragments_providers_and_consumers_are_not_children() -> None:
    source = b"""export function App() {
  return (
    <ThemeContext.Provider value="dark">
      <React.Fragment><Header /></React.Fragment>
      <Fragment key="x"><Main /></Fragment>
      <>{null}</>
      <Auth.Consumer>{(auth) => <Footer auth={auth} />}</Auth.Consumer>
    </ThemeContext.Provider>
  )
}
"""
    assert _components(source)["App"]["children"] == ["Header", "Main", "Footer"]


# -- props types imported from another file ------------------------------------------------
IMPORTED_PROPS = b"""import type { InputLabelProps } from '../types'
import { Props as RippleProps } from '../TouchableRipple/TouchableRipple'
import type { PressableProps } from './Pressable'
import type * as T from './types'
import type { Base } from './base'

type Props = PressableProps & { borderless?: boolean }
interface CardProps extends Base { title: string }

export const InputLabel = (props: InputLabelProps) => <p>{props.label}</p>
export function Tab({ route }: RippleProps) { return <i>{route}</i> }
export function Ripple({ onPress }: Props) { return <b onClick={onPress} /> }
export const Named: React.FC<T.Props> = ({ size }) => <s>{size}</s>
export function Card({ title }: CardProps) { return <h1>{title}</h1> }
export function Local({ a }: { a: string }) { return <u>{a}</u> }
export function Narrowed({ x }: Omit<InputLabelProps, 'y'>) { return <q>{x}</q> }
export class Old extends React.Component<InputLabelProps & Props> { render() { return <p /> } }
"""


def test_an_imported_props_type_is_recorded_by_module_and_name() -> None:
    components = _components(IMPORTED_PROPS)
    types = {name: c.get("props_type") for name, c in components.items()}
    assert types == {
        "InputLabel": "import('../types').InputLabelProps",
        "Tab": "import('../TouchableRipple/TouchableRipple').Props",  # the name it imports
        "Ripple": "import('./Pressable').PressableProps",  # through the file's own alias
        "Named": "import('./types').Props",  # a namespace
        "Card": "import('./base').Base",  # an interface's imported base
        "Local": None,
        "Narrowed": "Omit<import('../types').InputLabelProps, 'y'>",  # less what it omits
        "Old": "import('../types').InputLabelProps & import('./Pressable').PressableProps",
    }
    assert components["InputLabel"]["props"] == ["label"]
    assert components["Ripple"]["props"] == ["borderless", "onPress"]
    assert components["Card"]["props"] == ["title"]


def test_exported_types_record_their_members() -> None:
    source = b"""import type { Theme } from './theme'
export interface A { a: string; b?: () => void }
export type B = A & { c: number }
interface Hidden { h: string }
type Local = { l: string }
export type { Local }
export type Mode = 'x' | 'y'
export type Themed = Theme & { t: string }
export default interface D { d: string }
"""
    facts = javascript.extract(source, "typescript")
    assert facts.get("types") == {
        "A": ["a", "b"],
        "B": ["a", "b", "c"],
        "Local": ["l"],
        "Themed": ["t"],
        "D": ["d"],
    }
    assert "types" not in javascript.extract(b"interface P { p: string }\n", "typescript")


def test_an_imported_generic_type_counts_by_its_own_members() -> None:
    """``ListProps<Row>`` is ``ListProps`` (its declared members; nothing substituted), also
    as an interface's base; ``ComponentPropsWithRef<typeof View>`` of a component the file
    does not import gives nothing."""
    source = b"""import * as React from 'react'
import type { ListProps } from './list'
import type { $Omit } from './types'
import type { BaseProps } from './base'
type Props = React.ComponentPropsWithRef<typeof View> & { size?: number }
export function Spinner({ size }: Props) { return <i>{size}</i> }
export function Rows({ rows }: $Omit<ListProps<Row>, 'x'> & { rows: Row[] }) { return <ul /> }
interface TipProps extends BaseProps<HTMLDivElement>, Omit<ListProps<Row>, 'y'> { tip: string }
export function Tip(props: TipProps) { return <b>{props.tip}</b> }
"""
    components = _components(source)
    assert "props_type" not in components["Spinner"]
    assert components["Spinner"]["props"] == ["size"]
    assert components["Rows"]["props_type"] == "Omit<import('./list').ListProps, 'x'>"
    assert components["Tip"]["props_type"] == (
        "import('./base').BaseProps & Omit<import('./list').ListProps, 'y'>"
    )


def test_a_generated_union_of_thousands_of_literals() -> None:
    """The grammar nests ``'a' | 'b' | ...`` one level per ``|``: read without recursing."""
    tokens = " | ".join(f"'t{i}'" for i in range(5000))
    source = (
        f"export type Token = {tokens}\n"
        f"export function Tag(props: Omit<{{ t1: string; u: string }}, {tokens}>) {{\n"
        "  return <i />\n}\n"
    ).encode()
    facts = javascript.extract(source, "tsx")
    assert facts["components"][0]["props"] == ["u"]
