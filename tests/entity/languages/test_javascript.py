"""JavaScript, TypeScript and TSX extraction, React components included."""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from planning_memory.entity.facts import FileFacts, FunctionFact
from planning_memory.entity.languages import javascript
from planning_memory.entity.sideeffects import classify

EXPRESS = b"""// Orders API: routes for creating and listing orders.
'use strict'

const express = require('express')
const { Pool } = require('pg')
const logger = require('./logger')

const pool = new Pool()
const router = express.Router()

/**
 * Lists the orders of one customer, newest first.
 * @param {string} customerId
 */
async function listOrders(customerId, limit = 20) {
  const { rows } = await pool.query('SELECT * FROM orders WHERE customer = $1', [customerId])
  return rows.slice(0, limit)
}

const createOrder = async (req, res) => {
  if (!req.body || !req.body.items) {
    return res.status(400).json({ error: 'items required' })
  }
  try {
    await pool.query('INSERT INTO orders (items) VALUES ($1)', [req.body.items])
    logger.info('order created')
    res.status(201).end()
  } catch (err) {
    console.error(err)
    res.status(500).end()
  }
}

router.get('/:customerId', async (req, res) => res.json(await listOrders(req.params.customerId)))
router.post('/', createOrder)

module.exports = { router, listOrders }
"""

SERVICE_TS = b"""import type { User } from './types'
import { http } from '../lib/http'
export { formatName } from './format'

export interface Paged<T> {
  items: T[]
  next?: string
}

/** Talks to the users endpoint. */
export class UserClient {
  private cache = new Map<string, User>()

  constructor(private readonly base: string) {}

  /** Fetches one user, cached. */
  async get(id: string): Promise<User> {
    const hit = this.cache.get(id)
    if (hit) return hit
    const user = await http.get<User>(`${this.base}/users/${id}`)
    this.cache.set(id, user)
    return user
  }

  private reset(): void {
    this.cache.clear()
  }
}

export const byName = (a: User, b: User): number => a.name.localeCompare(b.name)

export default function createClient(base = '/api'): UserClient {
  return new UserClient(base)
}
"""

DASHBOARD_TSX = b"""import { useEffect, useMemo, useState, type ReactNode } from 'react'
import { useRouter } from 'next/navigation'
import { Card, Chart } from '@/components/ui'

type Props = {
  title: string
  children?: ReactNode
}

function Header({ title }: { title: string }) {
  return <h1 className="title">{title}</h1>
}

export default function Dashboard(props: Props) {
  const router = useRouter()
  const [range, setRange] = useState('7d')
  const [data, dispatch] = useReducer(reducer, [])
  const total = useMemo(() => data.reduce((a, b) => a + b, 0), [data])
  useEffect(() => {
    fetch(`/api/stats?range=${range}`).then((r) => r.json()).then((d) => dispatch({ d }))
  }, [range])
  return (
    <Card>
      <Header title={props.title} />
      {total > 0 ? <Chart.Line data={data} /> : <p>No data</p>}
      <button onClick={() => router.push('/settings')}>Settings</button>
      {props.children}
    </Card>
  )
}

export class Legacy extends React.PureComponent<Props> {
  state = { open: false, count: 0 }

  toggle = () => this.setState({ open: !this.state.open })

  render() {
    const { title } = this.props
    return <Card onClick={this.toggle}>{title}</Card>
  }
}
"""


def _fn(facts: FileFacts, qualified: str) -> FunctionFact:
    return next(f for f in facts["functions"] if f["qualified_name"] == qualified)


def test_commonjs_module() -> None:
    facts = javascript.extract(EXPRESS, "javascript")
    assert facts["purpose"] == "Orders API: routes for creating and listing orders."
    assert {i["module"] for i in facts["imports"]} == {"express", "pg", "./logger"}
    assert facts["exports"] == ["router", "listOrders"]
    names = {f["qualified_name"] for f in facts["functions"]}
    assert names == {"listOrders", "createOrder"}  # the route callback is anonymous
    listing = _fn(facts, "listOrders")
    assert listing["purpose"] == "Lists the orders of one customer, newest first."
    assert listing["signature"] == "(customerId, limit = 20)"
    assert listing["exported"] is True
    assert classify(listing["calls"]) == ["database-read"]
    create = _fn(facts, "createOrder")
    assert create["exported"] is False
    assert create["complexity"] == 4  # if, ||, catch
    assert classify(create["calls"]) == ["database-read", "logging"]
    assert facts["components"] == []


def test_typescript_classes_exports_and_reexports() -> None:
    facts = javascript.extract(SERVICE_TS, "typescript")
    modules = {(i["module"], bool(i.get("reexport"))) for i in facts["imports"]}
    assert modules == {("./types", False), ("../lib/http", False), ("./format", True)}
    assert set(facts["exports"]) == {"Paged", "UserClient", "byName", "createClient", "formatName"}
    assert facts["classes"] == ["UserClient"]
    get = _fn(facts, "UserClient.get")
    assert get["kind"] == "method"
    assert get["signature"] == "(id: string) => Promise<User>"
    assert get["purpose"] == "Fetches one user, cached."
    assert get["exported"] is True
    assert "http.get" in get["calls"] and "this.cache.set" in get["calls"]
    assert _fn(facts, "UserClient.reset")["exported"] is False
    assert _fn(facts, "UserClient.constructor")["kind"] == "constructor"
    assert _fn(facts, "byName")["signature"] == "(a: User, b: User) => number"
    assert _fn(facts, "createClient")["calls"] == ["new UserClient"]


def test_tsx_function_and_class_components() -> None:
    facts = javascript.extract(DASHBOARD_TSX, "tsx")
    components = {c["name"]: c for c in facts["components"]}
    assert set(components) == {"Header", "Dashboard", "Legacy"}
    header = components["Header"]
    assert header["props"] == ["title"] and header["exported"] is False
    dash = components["Dashboard"]
    assert dash["kind"] == "function"
    assert dash["props"] == ["title", "children"]  # from the Props type, then props.x uses
    assert dash["state"] == ["range", "data"]
    assert dash["hooks"] == ["useRouter", "useMemo", "useEffect"]
    assert dash["children"] == ["Card", "Header", "Chart.Line"]
    assert dash["exported"] is True
    legacy = components["Legacy"]
    assert legacy["kind"] == "class"
    assert legacy["state"] == ["open", "count"]
    assert legacy["props"] == ["title", "children"]
    assert legacy["children"] == ["Card"]
    assert classify(_fn(facts, "Dashboard")["calls"]) == ["navigation", "network"]


def test_forward_ref_and_memo_get_the_variable_name() -> None:
    source = b"""
export const Input = forwardRef<HTMLInputElement, Props>(({ label, ...rest }, ref) => (
  <label>{label}<input ref={ref} {...rest} /></label>
))
export const Row = React.memo(function Row({ id }: { id: string }) { return <tr id={id} /> })
"""
    facts = javascript.extract(source, "tsx")
    assert {c["name"]: c["props"] for c in facts["components"]} == {
        "Input": ["label"],
        "Row": ["id"],
    }


def test_syntax_error_is_flagged_with_partial_results() -> None:
    facts = javascript.extract(b"function ok() { return 1 }\nfunction bad( {\n", "javascript")
    assert facts["parse_errors"] is True
    assert "ok" in {f["name"] for f in facts["functions"]}


PREFIX_LETTERS_TSX = b"""interface CardProps {
  fill: boolean; rounded?: boolean; title: string; b?: number
}
export function Card(props: CardProps) { return <div>{props.title}</div>; }
export const api = { fetchUser: async (id: string) => fetch(`/u/${id}`) };
export function Label({ fontSize: size, bold }: { fontSize: number; bold?: boolean }) {
  return <span style={{ fontSize: size }}>{bold}</span>;
}
"""


def test_identifiers_keep_leading_r_b_u_f_letters() -> None:
    facts = javascript.extract(PREFIX_LETTERS_TSX, "tsx")
    components = {c["name"]: c["props"] for c in facts["components"]}
    assert components == {"Card": ["fill", "rounded", "title", "b"], "Label": ["fontSize", "bold"]}
    assert _fn(facts, "api.fetchUser")["exported"] is True
    commonjs = b"module.exports = { fetchUser, 'ready': 1, build() {}, update: () => 1 }\n"
    assert javascript.extract(commonjs, "javascript")["exports"] == [
        "fetchUser",
        "ready",
        "build",
        "update",
    ]


def test_destructured_exports_are_the_bound_names() -> None:
    source = b"export const { raw, bytes: body, fill = 1, ...others } = load(), [first] = xs\n"
    facts = javascript.extract(source, "javascript")
    assert facts["exports"] == ["raw", "body", "fill", "others", "first"]


VARIED_SNIPPETS = [
    PREFIX_LETTERS_TSX,
    DASHBOARD_TSX,
    EXPRESS,
    SERVICE_TS,
    b"""const routes = { users: () => 1, feeds: function () {}, 'rss-feed': () => 2, bye() {} }
class Uploader { render() { return null } format = () => 1; static build() {} }
export const { raw, bytes: body, ...others } = load()
module.exports.fill = function fill() {}
""",
    b"""type BaseProps = { filled?: boolean; rows: number }
interface FancyProps extends BaseProps { ribbon: string }
type UnionProps = FancyProps & { underline: boolean }
export const Fancy: React.FC<UnionProps> = ({ ribbon, ...rest }) => <b>{ribbon}</b>
export const Boxed = forwardRef<HTMLDivElement, { radius: number }>((props, ref) => (
  <div ref={ref}>{props.radius}</div>
))
export default class Uploader extends React.Component<FancyProps> {
  state: { uploading: boolean } = { uploading: false }
  render() { const { ribbon, filled = true } = this.props; return <i>{ribbon}{filled}</i> }
}
""",
]


def _reported_names(facts: FileFacts) -> list[str]:
    names = list(facts["exports"]) + list(facts["classes"])
    for function in facts["functions"]:
        names.append(function["name"])
        names.extend(function["qualified_name"].split("."))
    for component in facts["components"]:
        names.append(component["name"])
        for key in ("props", "state", "hooks", "children"):
            names.extend(str(name) for name in component[key])  # type: ignore[literal-required]
    return names


def test_reported_names_occur_verbatim_in_the_source() -> None:
    for source in VARIED_SNIPPETS:
        for dialect in ("typescript", "tsx") if b"<" in source else ("javascript", "typescript"):
            facts = javascript.extract(source, dialect)
            names = [n for n in _reported_names(facts) if n != "default"]
            assert names
            for name in names:
                whole = rb"(?<![\w$])" + re.escape(name.encode()) + rb"(?![\w$])"
                assert re.search(whole, source), (name, dialect)


_RESERVED = frozenset({"break", "return", "for", "from", "function", "finally", "false"})
_NAMES: st.SearchStrategy[str] = st.from_regex(r"[rbufRBUF][a-zA-Z0-9_]{0,6}", fullmatch=True)


@settings(max_examples=40, deadline=None)
@given(st.lists(_NAMES.filter(lambda n: n not in _RESERVED), min_size=1, max_size=4, unique=True))
def test_keys_and_members_are_reported_as_written(keys: list[str]) -> None:
    members = "; ".join(f"{key}?: number" for key in keys)
    pairs = ", ".join(f"{key}: () => 1" for key in keys)
    source = (
        f"interface Props {{ {members} }}\n"
        f"export function View(props: Props) {{ return <p /> }}\n"
        f"export const handlers = {{ {pairs} }}\n"
        f"module.exports = {{ {', '.join(keys)} }}\n"
    ).encode()
    facts = javascript.extract(source, "tsx")
    assert facts["components"][0]["props"] == keys
    assert [f["name"] for f in facts["functions"][1:]] == keys
    assert facts["exports"] == ["View", "handlers", *keys]


# -- calls through import bindings ---------------------------------------------------------
BINDINGS = b"""import fetchJson from './http'
import * as client from '../lib/http-client'
import { helper as h, other } from './x'
import axios from 'axios'
import * as fs from 'fs'
import { readFile as rf } from 'node:fs/promises'
import util, { default as tool } from '.'
import { useQuery as useQ } from 'react-query'

export async function load() {
  h()
  h.cache.clear()
  other()
  client.getJson('/u')
  client()
  fetchJson('/x')
  fetchJson.cache()
  axios('/y')
  fs.readFileSync('a')
  rf('b')
  util()
  tool()
}

export function Panel() {
  const data = useQ('k')
  return <p>{data}</p>
}
"""


def test_calls_through_import_bindings_are_recorded_by_what_they_import() -> None:
    facts = javascript.extract(BINDINGS, "tsx", "src/lib/app.tsx")
    assert _fn(facts, "load")["calls"] == [
        "helper",  # an aliased name: the name it imports
        "helper.cache.clear",
        "other",  # a name imported as itself keeps its text
        "httpClient.getJson",  # a namespace: the module's name, as the call graph knows it
        "client",
        "http.fetchJson",  # a default import of a project module: module.name
        "fetchJson.cache",  # something looked up on it: as written
        "axios",  # packages: only aliases are followed
        "fs.readFileSync",
        "readFile",
        "lib.util",  # '.' is the importer's folder
        "lib.tool",
    ]
    panel = _fn(facts, "Panel")
    assert panel["calls"] == ["useQuery"]
    assert facts["components"][0]["hooks"] == ["useQ"]  # component facts stay as written


def test_a_binding_the_module_shadows_is_not_followed() -> None:
    source = (
        b"import { helper as h } from './x'\nimport { a as b } from './y'\n\n"
        b"function helper() { return 1 }\n"
        b"export function go() {\n  function b() { return 2 }\n  h()\n  b()\n}\n"
    )
    facts = javascript.extract(source, "typescript", "src/go.ts")
    # ``helper`` alone would be this file's own helper: the module names the imported one
    assert _fn(facts, "go")["calls"] == ["x.helper", "b"]


def test_import_bindings_without_a_path() -> None:
    source = b"import a from '.'\nimport b from './b/index'\nexport function f() { a(); b() }\n"
    assert _fn(javascript.extract(source, "typescript"), "f")["calls"] == ["a", "b.b"]


# -- interface methods ---------------------------------------------------------------------
def test_interface_method_signatures_are_methods_of_the_interface() -> None:
    """As Java's interface methods and Rust's trait declarations: ``X.m`` of kind
    ``method``, exported with the interface; a property typed as a function counts."""
    source = b"""export interface Store<T> {
  /** Loads one item. */
  get(id: string): Promise<T>
  put?(item: T): void
  onChange?: (item: T) => void
  readonly size: number
  'quoted-key'(): string
}
interface Hidden { run(): void }
type Shape = { area(): number }
export function use(store: Store<number>) { return store.get('a') }
"""
    facts = javascript.extract(source, "typescript")
    get = _fn(facts, "Store.get")
    assert (get["kind"], get["exported"], get["lines"]) == ("method", True, [3, 3])
    assert get["signature"] == "(id: string) => Promise<T>"
    assert get["purpose"] == "Loads one item."
    assert get["calls"] == [] and get["complexity"] == 1
    assert _fn(facts, "Store.put")["signature"] == "(item: T) => void"
    assert _fn(facts, "Store.onChange")["signature"] == "(item: T) => void"
    assert _fn(facts, "Hidden.run")["exported"] is False
    names = [f["qualified_name"] for f in facts["functions"]]
    assert names == [
        "Store.get", "Store.put", "Store.onChange", "Store.quoted-key", "Hidden.run", "use"
    ]  # fmt: skip
    assert facts["classes"] == []  # interfaces are types, not classes


# -- functions bound with hooks ------------------------------------------------------------
def test_functions_bound_with_use_callback_or_use_memo_are_functions_of_the_component() -> None:
    source = b"""export function Search({ onSearch }: Props) {
  const [query, setQuery] = useState('')
  const submit = useCallback((event: FormEvent) => {
    event.preventDefault()
    onSearch(query)
  }, [query])
  const reset = React.useCallback(function () { setQuery('') }, [])
  const debounced = useMemo(() => debounce(submit, 300), [submit])
  const format = useMemo(() => (value: string) => value.trim(), [])
  const parse = useMemo(() => function parse(raw: string) { return JSON.parse(raw) }, [])
  const total = useMemo(() => query.length, [query])
  useEffect(() => { submit() }, [submit])
  return <form onSubmit={submit} onReset={useCallback(() => reset(), [])} />
}
"""
    facts = javascript.extract(source, "tsx")
    names = [f["qualified_name"] for f in facts["functions"]]
    assert names == ["Search", "Search.submit", "Search.reset", "Search.format", "Search.parse"]
    submit = _fn(facts, "Search.submit")
    assert submit["signature"] == "(event: FormEvent)"
    assert submit["calls"] == ["event.preventDefault", "onSearch"]
    assert _fn(facts, "Search.format")["calls"] == ["value.trim"]
    assert "debounce" in _fn(facts, "Search")["calls"]  # the memo factory stays transparent
    assert facts["components"][0]["hooks"] == ["useCallback", "useMemo", "useEffect"]
