"""Go extraction: functions, methods on (pointer) receivers, types, imports, doc comments."""

from __future__ import annotations

from planning_memory.entity.facts import FunctionFact
from planning_memory.entity.languages import go
from planning_memory.entity.sideeffects import classify

SOURCE = b"""// Package store keeps users in PostgreSQL.
package store

import (
	"context"
	"database/sql"
	"fmt"
	"log"
	"net/http"

	"example.com/shop/internal/model"
)

// ErrNotFound is returned when no row matches.
var ErrNotFound = fmt.Errorf("not found")

// UserStore reads and writes users.
type UserStore struct {
	db *sql.DB
}

type cache[K comparable, V any] struct{ items map[K]V }

// NewUserStore opens the store.
func NewUserStore(db *sql.DB) *UserStore {
	return &UserStore{db: db}
}

// Find loads one user by id.
func (s *UserStore) Find(ctx context.Context, id int64) (*model.User, error) {
	row := s.db.QueryRowContext(ctx, "SELECT id, email FROM users WHERE id = $1", id)
	var u model.User
	if err := row.Scan(&u.ID, &u.Email); err != nil {
		if err == sql.ErrNoRows {
			return nil, ErrNotFound
		}
		return nil, err
	}
	return &u, nil
}

func (s *UserStore) save(ctx context.Context, u *model.User) error {
	_, err := s.db.ExecContext(ctx, "UPDATE users SET email = $1 WHERE id = $2", u.Email, u.ID)
	log.Printf("saved %d", u.ID)
	return err
}

func (c *cache[K, V]) Get(k K) (V, bool) {
	v, ok := c.items[k]
	return v, ok
}

func ping(url string) bool {
	resp, err := http.Get(url)
	return err == nil && resp.StatusCode == 200
}
"""


def _fn(facts: dict, qualified: str) -> FunctionFact:  # type: ignore[type-arg]
    return next(f for f in facts["functions"] if f["qualified_name"] == qualified)


def test_go_facts() -> None:
    facts = go.extract(SOURCE)
    assert facts["purpose"] == "Package store keeps users in PostgreSQL."
    assert [i["module"] for i in facts["imports"]] == [
        "context",
        "database/sql",
        "fmt",
        "log",
        "net/http",
        "example.com/shop/internal/model",
    ]
    assert facts["classes"] == ["UserStore", "cache"]
    assert set(facts["exports"]) == {"NewUserStore", "UserStore.Find", "UserStore"}
    got = {(f["qualified_name"], f["kind"]) for f in facts["functions"]}
    assert got == {
        ("NewUserStore", "function"),
        ("UserStore.Find", "method"),
        ("UserStore.save", "method"),
        ("cache.Get", "method"),
        ("ping", "function"),
    }


def test_go_methods_signatures_docs_and_effects() -> None:
    facts = go.extract(SOURCE)
    find = _fn(facts, "UserStore.Find")
    assert find["signature"] == "(ctx context.Context, id int64) (*model.User, error)"
    assert find["purpose"] == "Find loads one user by id."
    assert find["exported"] is True
    assert find["complexity"] == 3
    assert classify(find["calls"]) == ["database-read"]
    save = _fn(facts, "UserStore.save")
    assert save["exported"] is False
    assert classify(save["calls"]) == ["database-write", "logging"]
    assert classify(_fn(facts, "ping")["calls"]) == ["network"]
    assert _fn(facts, "cache.Get")["exported"] is False  # method on an unexported type


def test_go_interface_methods_are_functions() -> None:
    facts = go.extract(
        b"""package chi

// Router consists of the core routing methods used by chi's Mux.
type Router interface {
	http.Handler
	Routes

	// Use appends one or more middlewares onto the Router stack.
	Use(middlewares ...func(http.Handler) http.Handler)

	Route(pattern string, fn func(r Router)) Router
}

type walker interface{ walk() error }

func Serve(h interface{ ServeHTTP() }) {}
"""
    )
    use = _fn(facts, "Router.Use")
    assert use["kind"] == "method"
    assert use["signature"] == "(middlewares ...func(http.Handler) http.Handler)"
    assert use["purpose"] == "Use appends one or more middlewares onto the Router stack."
    assert use["exported"] is True and use["calls"] == []
    assert _fn(facts, "Router.Route")["signature"] == "(pattern string, fn func(r Router)) Router"
    assert _fn(facts, "walker.walk")["exported"] is False
    names = {f["qualified_name"] for f in facts["functions"]}
    assert names == {"Router.Use", "Router.Route", "walker.walk", "Serve"}
    assert {"Router.Use", "Router.Route"} <= set(facts["exports"])
