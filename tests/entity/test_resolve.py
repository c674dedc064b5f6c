"""Import resolution to repository paths (or package names) for every language family."""

from __future__ import annotations

import json

import pytest

from planning_memory.entity.resolve import build_context, resolve

FILES = [
    # Python: a src layout package plus a top-level script
    "src/shop/__init__.py",
    "src/shop/models.py",
    "src/shop/billing/__init__.py",
    "src/shop/billing/invoice.py",
    "src/shop/billing/tax.py",
    "manage.py",
    # TypeScript with an alias and index files
    "web/tsconfig.json",
    "web/src/lib/auth/index.ts",
    "web/src/lib/auth/validators.ts",
    "web/src/components/Button.tsx",
    "web/src/app/page.tsx",
    "web/src/util.js",
    # Go module
    "svc/go.mod",
    "svc/internal/store/users.go",
    "svc/cmd/api/main.go",
    # Java
    "java/src/main/java/com/acme/orders/OrderService.java",
    "java/src/main/java/com/acme/orders/model/Order.java",
    # Rust crate
    "crate/Cargo.toml",
    "crate/src/lib.rs",
    "crate/src/config.rs",
    "crate/src/config/defaults.rs",
    "crate/src/net/mod.rs",
    "crate/src/net/http.rs",
]
CONFIGS = {
    "web/tsconfig.json": b"""{
  // comments and trailing commas are allowed here
  "compilerOptions": {"baseUrl": ".", "paths": {"@/*": ["./src/*"],},},
}""",
    "svc/go.mod": b"module example.com/svc\n\ngo 1.22\n",
}


@pytest.fixture(scope="module")
def ctx():  # type: ignore[no-untyped-def]
    return build_context(FILES, CONFIGS.get)


@pytest.mark.parametrize(
    ("module", "importer", "language", "expected"),
    [
        (".tax", "src/shop/billing/invoice.py", "python", ("src/shop/billing/tax.py", None)),
        ("..models", "src/shop/billing/invoice.py", "python", ("src/shop/models.py", None)),
        (".", "src/shop/billing/invoice.py", "python", ("src/shop/billing/__init__.py", None)),
        ("shop.billing.invoice", "manage.py", "python", ("src/shop/billing/invoice.py", None)),
        (
            "shop.billing.invoice.Invoice",
            "manage.py",
            "python",
            ("src/shop/billing/invoice.py", None),
        ),
        ("shop.billing", "manage.py", "python", ("src/shop/billing/__init__.py", None)),
        ("requests.adapters", "manage.py", "python", (None, "requests")),
        (
            "./validators",
            "web/src/lib/auth/index.ts",
            "typescript",
            ("web/src/lib/auth/validators.ts", None),
        ),
        ("../lib/auth", "web/src/app/page.tsx", "tsx", ("web/src/lib/auth/index.ts", None)),
        ("@/lib/auth", "web/src/app/page.tsx", "tsx", ("web/src/lib/auth/index.ts", None)),
        (
            "@/components/Button",
            "web/src/app/page.tsx",
            "tsx",
            ("web/src/components/Button.tsx", None),
        ),
        ("../util.js", "web/src/app/page.tsx", "tsx", ("web/src/util.js", None)),
        ("@/missing", "web/src/app/page.tsx", "tsx", (None, None)),
        ("react-dom/client", "web/src/app/page.tsx", "tsx", (None, "react-dom")),
        ("@tanstack/react-query", "web/src/app/page.tsx", "tsx", (None, "@tanstack/react-query")),
        (
            "example.com/svc/internal/store",
            "svc/cmd/api/main.go",
            "go",
            ("svc/internal/store", None),
        ),
        ("net/http", "svc/cmd/api/main.go", "go", (None, "net/http")),
        (
            "com.acme.orders.model.Order",
            "java/src/main/java/com/acme/orders/OrderService.java",
            "java",
            ("java/src/main/java/com/acme/orders/model/Order.java", None),
        ),
        (
            "com.acme.orders.model.*",
            "java/src/main/java/com/acme/orders/OrderService.java",
            "java",
            ("java/src/main/java/com/acme/orders/model", None),
        ),
        (
            "java.util.List",
            "java/src/main/java/com/acme/orders/OrderService.java",
            "java",
            (None, "java.util"),
        ),
        (
            "crate::config::defaults::PORT",
            "crate/src/net/http.rs",
            "rust",
            ("crate/src/config/defaults.rs", None),
        ),
        ("self::http", "crate/src/net/mod.rs", "rust", ("crate/src/net/http.rs", None)),
        ("self::config", "crate/src/lib.rs", "rust", ("crate/src/config.rs", None)),
        (
            "super::super::config::load",
            "crate/src/net/http.rs",
            "rust",
            ("crate/src/config.rs", None),
        ),
        ("super::Client", "crate/src/net/http.rs", "rust", ("crate/src/net/mod.rs", None)),
        ("self::defaults", "crate/src/config.rs", "rust", ("crate/src/config/defaults.rs", None)),
        ("serde::Deserialize", "crate/src/lib.rs", "rust", (None, "serde")),
    ],
)
def test_resolve(ctx, module: str, importer: str, language: str, expected: tuple) -> None:  # type: ignore[no-untyped-def,type-arg]
    assert resolve(module, importer, language, ctx) == expected


def test_tsconfig_extends_is_followed() -> None:
    configs = {
        "tsconfig.base.json": json.dumps(
            {"compilerOptions": {"paths": {"~/*": ["lib/*"]}}}
        ).encode(),
        "tsconfig.json": json.dumps({"extends": "./tsconfig.base.json"}).encode(),
    }
    ctx = build_context(["lib/date.ts", "app/main.ts"], configs.get)
    assert resolve("~/date", "app/main.ts", "typescript", ctx) == ("lib/date.ts", None)
