"""Go call edges: a method's receiver calls its own type's methods; a value made by a
function has the type the function declares it returns; calls on values of an unknown type
are not guessed by name; a package is called by the name its import gives."""

from __future__ import annotations

from pathlib import Path

from planning_memory.memory import Memory

FILES = {
    "go.mod": "module example.com/kit/v2\n\ngo 1.22\n",
    "mux.go": """package kit

import "sync"

type Mux struct{ pool *sync.Pool }

func (mx *Mux) Get(p string) {
	mx.handle(p)
	mx.pool.Get()
}

func (mx *Mux) handle(p string) {}

type logEntry struct{}

func (l *logEntry) Write(b []byte) {}

func NewRouter() *Mux { return &Mux{} }

func testRequest() {}
""",
    "middleware/strip.go": """package middleware

import (
	"bytes"

	"example.com/kit/v2"
)

func testRequest() {}

func Strip() {
	testRequest()
	var buf bytes.Buffer
	buf.Write(nil)
	r := kit.NewRouter()
	r.Get("/")
}
""",
}


def test_go_call_edges(tmp_path: Path) -> None:
    for path, text in FILES.items():
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / path).write_text(text)
    mem = Memory.init(tmp_path)
    mem.scan()
    (handle,) = mem.code.functions("Mux.handle")
    assert handle["called_by"] == ["mux.go::Mux.Get"]  # the receiver's own method
    (get,) = mem.code.functions("Mux.Get")
    # `r := kit.NewRouter()`: NewRouter declares it returns a *Mux
    assert get["called_by"] == ["middleware/strip.go::Strip"]
    (write,) = mem.code.functions("logEntry.Write")
    assert write["called_by"] == []  # `buf.Write` is bytes.Buffer's, not ours
    (new,) = mem.code.functions("NewRouter")
    assert new["called_by"] == ["middleware/strip.go::Strip"]  # `kit.` names the package
    # a bare name in Go is its own package's, never an imported package's
    ours = {f["file"]: f["called_by"] for f in mem.code.functions("testRequest")}
    assert ours == {"mux.go": [], "middleware/strip.go": ["middleware/strip.go::Strip"]}
