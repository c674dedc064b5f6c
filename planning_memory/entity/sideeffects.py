"""Side effects of a function, guessed from the calls it makes. Heuristic and documented.

Each call is matched (first rule wins) against the table below, by the name it calls and the
name of what it is called on (the receiver: everything before the last ``.``/``::``). The
categories, in the seed's spelling:

| category          | examples of calls that count                                          |
| ----------------- | --------------------------------------------------------------------- |
| database-read     | ``prisma.user.findUnique``, ``db.query``, ``repo.findByEmail``,        |
|                   | ``cursor.fetchall``, ``session.scalars``, Go ``db.QueryRow``           |
| database-write    | ``prisma.user.create``, ``session.commit``, ``repo.save``,             |
|                   | ``cursor.execute`` (cannot tell a read from a write), Go ``db.Exec``   |
| network           | ``fetch``, ``axios.post``, ``requests.get``, ``httpx.*``, ``urlopen``, |
|                   | Go ``http.Get``/``client.Do``, ``reqwest::get``, ``new WebSocket``     |
| filesystem        | ``open``, ``os.remove``, ``shutil.*``, ``path.write_text``, ``fs.*``,  |
|                   | ``readFileSync``, Go ``os.ReadFile``, Rust ``fs::*``, Java ``Files.*`` |
| process           | ``subprocess.*``, ``os.system``, ``child_process.*``, ``exec.Command``,|
|                   | ``Command::new``, ``ProcessBuilder``, ``sys.exit``, ``process.exit``   |
| logging           | ``print``, ``logging.*``, ``logger.*``, ``console.*``, ``fmt.Print*``, |
|                   | ``println!``, ``log::info!``, ``System.out.println``                   |
| environment       | ``os.getenv``, ``os.environ.get``, ``env::var``, ``System.getenv``     |
| browser-storage   | ``localStorage.*``, ``sessionStorage.*``, ``indexedDB.*``              |
| cache             | ``redis.*``, ``cache.get``/``cache.set``, ``memcache.*``               |
| navigation        | ``router.push``, ``redirect``, ``window.location.assign``              |

A database receiver is a name containing ``prisma``, ``db``, ``database``, ``repo``,
``repository``, ``dao``, ``cursor``, ``conn``, ``pool``, ``knex``, ``sequelize``, ``mongoose``,
``collection``, ``objects`` (Django), ``entityManager``, ``jdbc``, ``tx`` or ``session``
(SQLAlchemy; a ``session.get`` is left unclassified). Pure functions, no I/O.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from functools import lru_cache

_DB_RECEIVER = re.compile(
    r"prisma|\bdb\b|_db\b|\bdb_|database|repo(s|sitory)?\b|dao\b|cursor|\bconn|connection|\bpool\b|knex|"
    r"sequelize|mongoose|collection|objects|entitymanager|jdbc|\btx\b|session|\bsql\b|\bstmt\b",
    re.IGNORECASE,
)
_DB_READ = re.compile(
    r"^(find\w*|get\w*|select\w*|fetch\w*|count\w*|exists|aggregate|query\w*|read\w*|all|first|"
    r"filter|load\w*|scan|search|scalars?|one|one_or_none|groupBy|QueryRow\w*|Query)$"
)
_DB_WRITE = re.compile(
    r"^(create\w*|insert\w*|update\w*|upsert\w*|delete\w*|remove\w*|save\w*|add|add_all|commit|"
    r"rollback|execute\w*|exec\w*|Exec\w*|bulk\w*|put|set|destroy|increment|decrement|merge|"
    r"persist|flush|drop\w*|truncate|write\w*|\$transaction|transaction)$"
)
_NETWORK_RECEIVER = re.compile(
    r"^(axios|requests|httpx|aiohttp|urllib\.request|http|https|got|ky|superagent|"
    r"restTemplate|webClient|httpClient|HttpClient|reqwest|client|api|socket|grpc|\$)$"
)
_NETWORK_METHOD = re.compile(
    r"^(get|post|put|patch|delete|head|options|request|send|sendAsync|Do|Get|Post|Head|"
    r"PostForm|NewRequest|urlopen|fetch|exchange|getForObject|postForObject|connect|ajax)$"
)
_NETWORK_CALLS = frozenset(
    {
        "fetch",
        "axios",
        "got",
        "ky",
        "urlopen",
        "new XMLHttpRequest",
        "new WebSocket",
        "new EventSource",
        "reqwest::get",
        "http.Get",
        "http.Post",
        "http.NewRequest",
        "urllib.request.urlopen",
        "socket.socket",
        "socket.create_connection",
    }
)
_FS_RECEIVER = re.compile(
    r"^(fs|fsPromises|fs\.promises|fse|shutil|tempfile|ioutil|Files|fs::\w*|std::fs|glob)$"
)
_FS_ANY = re.compile(
    r"^(read_text|write_text|read_bytes|write_bytes|mkdir|rmdir|unlink|touch|iterdir|rglob|"
    r"readFile\w*|writeFile\w*|appendFile\w*|readdir\w*|createReadStream|createWriteStream|"
    r"ReadFile|WriteFile|MkdirAll|RemoveAll|ReadDir|OpenFile|rmtree|copytree|copyfile)$"
)
_FS_OS = re.compile(
    r"^(remove|rename|replace|mkdir|makedirs|rmdir|unlink|listdir|scandir|walk|chmod|chown|"
    r"symlink|stat|Open|Create|ReadFile|WriteFile|Remove|RemoveAll|Mkdir|MkdirAll|Rename|"
    r"ReadDir|OpenFile|Stat|Chmod)$"
)
_FS_CALLS = frozenset(
    {
        "open",
        "io.open",
        "os.open",
        "os.Open",
        "os.Create",
        "File::open",
        "File::create",
        "new File",
        "new FileReader",
        "new FileWriter",
        "new FileInputStream",
        "new FileOutputStream",
        "readFile",
        "writeFile",
        "readFileSync",
        "writeFileSync",
        "OpenOptions::new",
        "Path.open",
    }
)
_PROCESS = re.compile(
    r"^(subprocess\.\w+|os\.(system|popen|exec\w*|spawn\w*|fork|kill|_exit)|sys\.exit|exit|"
    r"child_process\.\w+|execSync|spawnSync|execFile\w*|process\.(exit|kill)|exec\.Command\w*|"
    r"os\.Exit|syscall\.Exec|Command::new|std::process::\w+|process::exit|"
    r"Runtime\.getRuntime\(\)\.exec|new ProcessBuilder|System\.exit)$"
)
_LOGGING = re.compile(
    r"^(print|pprint|console\.\w+|logging\.\w+|log\.\w+|logger\.\w+|LOG\.\w+|LOGGER\.\w+|"
    r"log|self\.log\w*\.\w+|this\.log\w*\.\w+|fmt\.(Print\w*|Fprint\w*)|"
    r"(e?print(ln)?|dbg|info|warn|error|debug|trace)!|(log|tracing)::\w+!|"
    r"System\.(out|err)\.print\w*|Log\.\w)$"
)
_ENVIRONMENT = re.compile(
    r"^(os\.getenv|os\.environ\.get|os\.Getenv|os\.LookupEnv|env::var\w*|std::env::var\w*|"
    r"System\.getenv|load_dotenv|dotenv\.config)$"
)
_STORAGE = re.compile(r"^(window\.)?(localStorage|sessionStorage|indexedDB)\.\w+$")
_CACHE = re.compile(r"^(redis|cache|memcache\w*|client\.redis)\.\w+$", re.IGNORECASE)
_NAVIGATION = re.compile(
    r"^(router\.(push|replace|back)|redirect|permanentRedirect|navigate|"
    r"window\.location\.(assign|replace)|history\.push)$"
)


def classify(calls: Iterable[str]) -> list[str]:
    """The sorted side-effect categories of a function that makes ``calls``."""
    found = set()
    for call in calls:
        category = category_of(call)
        if category is not None:
            found.add(category)
    return sorted(found)


@lru_cache(maxsize=65536)
def category_of(call: str) -> str | None:
    """The side-effect category of one callee expression, or None (memoised: the same
    callees recur across a codebase)."""
    call = call.removeprefix("await ")
    receiver, method = _split(call)
    for check in _CHECKS:
        found = check(call, receiver, method)
        if found:
            return found
    return None


def _split(call: str) -> tuple[str, str]:
    for sep in ("::", "."):
        if sep in call:
            head, tail = call.rsplit(sep, 1)
            return head, tail
    return "", call


def _database(call: str, receiver: str, method: str) -> str | None:
    if not receiver or not _DB_RECEIVER.search(receiver):
        return None
    if receiver.lower().endswith("session") and method in ("get", "post", "put", "patch"):
        return None
    if _DB_WRITE.match(method):
        return "database-write"
    if _DB_READ.match(method):
        return "database-read"
    return None


def _network(call: str, receiver: str, method: str) -> str | None:
    if call in _NETWORK_CALLS:
        return "network"
    if (
        receiver
        and _NETWORK_RECEIVER.match(receiver.split(".")[0])
        and _NETWORK_METHOD.match(method)
    ):
        return "network"
    if receiver.startswith(("axios", "requests", "httpx", "aiohttp")):
        return "network"
    return None


def _filesystem(call: str, receiver: str, method: str) -> str | None:
    if call in _FS_CALLS or (receiver and _FS_RECEIVER.match(receiver)):
        return "filesystem"
    if receiver == "os" and _FS_OS.match(method):
        return "filesystem"
    if receiver and _FS_ANY.match(method):
        return "filesystem"
    return None


_Check = Callable[[str, str, str], "str | None"]


def _pattern(regex: re.Pattern[str], category: str) -> _Check:
    def check(call: str, receiver: str, method: str) -> str | None:
        return category if regex.match(call) else None

    return check


_CHECKS: tuple[_Check, ...] = (
    _pattern(_PROCESS, "process"),
    _pattern(_ENVIRONMENT, "environment"),
    _pattern(_STORAGE, "browser-storage"),
    _pattern(_NAVIGATION, "navigation"),
    _database,
    _network,
    _filesystem,
    _pattern(_CACHE, "cache"),
    _pattern(_LOGGING, "logging"),
)
