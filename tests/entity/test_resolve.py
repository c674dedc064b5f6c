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


# -- Rust crates with a Cargo.toml: the crate root, targets, external crates ----------------
RUST_FILES = [
    "app/build.rs",
    "app/src/lib.rs",
    "app/src/main.rs",
    "app/src/config.rs",
    "app/src/config/defaults.rs",
    "app/src/log.rs",
    "app/src/net/mod.rs",
    "app/src/net/http.rs",
    "app/src/bin/tool.rs",
    "app/tests/api.rs",
    "app/tests/common/mod.rs",
    "app/examples/demo.rs",
    "ws/core/src/lib.rs",
    "ws/core/src/model.rs",
    "ws/cli/src/main.rs",
    # ripgrep's layout: the binary's root named by [[bin]] path, crates as path dependencies
    "rg/crates/core/main.rs",
    "rg/crates/core/search.rs",
    "rg/crates/core/flags/mod.rs",
    "rg/crates/core/flags/defs.rs",
    "rg/crates/grep/lib.rs",
    "rg/crates/grep/matcher.rs",
    # a library root named by [lib] path inside src/, beside the binary's main.rs
    "lp/build.rs",
    "lp/src/core.rs",
    "lp/src/main.rs",
    "lp/src/util.rs",
]
RUST_CONFIGS = {
    "app/Cargo.toml": b"""[package]
name = "my-app"
version = "0.1.0"

[dependencies]
anyhow = "1"
tokio-util = { version = "0.7", features = ["codec"] }
log = "0.4"
json = { package = "serde_json", version = "1" }

[dev-dependencies]
tempfile = "3"

[target.'cfg(unix)'.dependencies]
nix = "0.29"
""",
    "ws/Cargo.toml": b"""[workspace]
members = ["core", "cli"]

[workspace.dependencies]
ws-core = { path = "core" }
clap = "4"
""",
    "ws/core/Cargo.toml": b'[package]\nname = "ws-core"\n',
    "rg/Cargo.toml": b"""[package]
name = "ripgrep"

[[bin]]
name = "rg"
path = "crates/core/main.rs"

[dependencies]
grep = { version = "0.3", path = "crates/grep" }
""",
    "lp/Cargo.toml": b'[package]\nname = "lp"\n\n[lib]\npath = "src/core.rs"\n',
    "rg/crates/grep/Cargo.toml": b'[package]\nname = "grep"\n\n[lib]\npath = "lib.rs"\n',
    "ws/cli/Cargo.toml": b"""[package]
name = "ws-cli"

[dependencies]
ws-core.workspace = true
clap = { workspace = true }
""",
}


@pytest.fixture(scope="module")
def rust_ctx():  # type: ignore[no-untyped-def]
    return build_context(RUST_FILES, RUST_CONFIGS.get)


@pytest.mark.parametrize(
    ("module", "importer", "expected"),
    [
        # external crates are packages, never the importing file
        ("std::path::Path", "app/src/config.rs", (None, "std")),
        ("anyhow::Result", "app/src/config.rs", (None, "anyhow")),
        ("std::env", "app/build.rs", (None, "std")),
        ("core::fmt", "app/src/net/http.rs", (None, "core")),
        ("anyhow::Result", "app/tests/common/mod.rs", (None, "anyhow")),
        ("tokio_util::codec::Framed", "app/src/lib.rs", (None, "tokio-util")),
        ("json::Value", "app/src/lib.rs", (None, "serde_json")),
        ("tempfile::tempdir", "app/tests/api.rs", (None, "tempfile")),
        ("nix::unistd", "app/src/lib.rs", (None, "nix")),
        ("::log::info", "app/src/net/http.rs", (None, "log")),
        ("log::info", "app/src/net/http.rs", (None, "log")),  # the crate, not src/log.rs
        # crate:: is the crate root and its module tree
        ("crate::Item", "app/src/net/http.rs", ("app/src/lib.rs", None)),
        (
            "crate::config::defaults::PORT",
            "app/src/net/http.rs",
            ("app/src/config/defaults.rs", None),
        ),
        ("crate::net", "app/src/config.rs", ("app/src/net/mod.rs", None)),
        ("crate::Item", "app/src/lib.rs", (None, None)),  # an item of the file itself
        # super:: is the parent module; from a top-level module that is the crate root
        ("super::Client", "app/src/net/http.rs", ("app/src/net/mod.rs", None)),
        ("super::helper", "app/src/config.rs", ("app/src/lib.rs", None)),
        ("super::net::http", "app/src/config.rs", ("app/src/net/http.rs", None)),
        ("super::x", "app/src/lib.rs", (None, None)),  # above the crate root
        ("self::Thing", "app/src/config.rs", (None, None)),
        ("self::defaults", "app/src/config.rs", ("app/src/config/defaults.rs", None)),
        ("defaults::PORT", "app/src/config.rs", ("app/src/config/defaults.rs", None)),
        ("config::Settings", "app/src/net/http.rs", ("app/src/config.rs", None)),  # 2015 style
        # the package's own library, from its binaries, tests and examples
        ("my_app::config::Settings", "app/src/main.rs", ("app/src/config.rs", None)),
        ("my_app::Client", "app/tests/api.rs", ("app/src/lib.rs", None)),
        ("my_app::net::http::get", "app/examples/demo.rs", ("app/src/net/http.rs", None)),
        ("my_app::run", "app/src/bin/tool.rs", ("app/src/lib.rs", None)),
        # integration tests and examples are crate roots of their own
        ("self::common", "app/tests/api.rs", ("app/tests/common/mod.rs", None)),
        ("crate::common::setup", "app/tests/api.rs", ("app/tests/common/mod.rs", None)),
        ("crate::Fixture", "app/tests/api.rs", (None, None)),
        # a workspace member's path dependency (through workspace = true)
        ("ws_core::model::User", "ws/cli/src/main.rs", ("ws/core/src/model.rs", None)),
        ("ws_core::Error", "ws/cli/src/main.rs", ("ws/core/src/lib.rs", None)),
        ("clap::Parser", "ws/cli/src/main.rs", (None, "clap")),
        # a crate root named in the manifest, a library root named by [lib] path
        (
            "crate::flags::defs::FLAGS",
            "rg/crates/core/search.rs",
            ("rg/crates/core/flags/defs.rs", None),
        ),
        (
            "crate::search::Worker",
            "rg/crates/core/flags/mod.rs",
            ("rg/crates/core/search.rs", None),
        ),
        ("super::Flag", "rg/crates/core/flags/defs.rs", ("rg/crates/core/flags/mod.rs", None)),
        ("crate::Args", "rg/crates/core/flags/mod.rs", ("rg/crates/core/main.rs", None)),
        ("grep::matcher::Matcher", "rg/crates/core/search.rs", ("rg/crates/grep/matcher.rs", None)),
        ("crate::Matcher", "rg/crates/grep/matcher.rs", ("rg/crates/grep/lib.rs", None)),
        ("crate::Config", "lp/src/util.rs", ("lp/src/core.rs", None)),
        ("crate::util::helper", "lp/src/main.rs", ("lp/src/util.rs", None)),
        ("lp::Config", "lp/src/main.rs", ("lp/src/core.rs", None)),
        ("std::env", "lp/build.rs", (None, "std")),
    ],
)
def test_resolve_rust_crates(rust_ctx, module: str, importer: str, expected: tuple) -> None:  # type: ignore[no-untyped-def,type-arg]
    assert resolve(module, importer, "rust", rust_ctx) == expected


# -- no import resolves to the file it is written in ---------------------------------------
SELF_IMPORTS = {
    "python": [".", "..", ".invoice", "shop.billing.invoice", "shop.billing", "manage"],
    "typescript": [".", "./index", "./validators", "@/lib/auth", "@/app/page", "../util"],
    "tsx": [".", "./page", "@/app/page", "@/components/Button", "./Button"],
    "go": ["example.com/svc", "example.com/svc/internal/store", "example.com/svc/cmd/api"],
    "java": [
        "com.acme.orders.OrderService",
        "com.acme.orders.OrderService.helper",
        "com.acme.orders.model.Order",
        "com.acme.orders.*",
    ],
    "rust": [
        "self",
        "self::Item",
        "crate",
        "crate::Item",
        "crate::config",
        "crate::net",
        "crate::net::http::get",
        "super",
        "super::Item",
        "super::config",
        "std::path::Path",
        "anyhow::Result",
        "config::defaults",
        "http::Client",
        "net::http",
    ],
}


@pytest.mark.parametrize("language", sorted(SELF_IMPORTS))
def test_no_import_resolves_to_its_own_file(ctx, rust_ctx, language: str) -> None:  # type: ignore[no-untyped-def]
    from planning_memory.entity.languages import language_for

    for context, files in ((ctx, FILES), (rust_ctx, RUST_FILES)):
        for importer in files:
            if language_for(importer) != language:
                continue
            for module in SELF_IMPORTS[language]:
                found, _package = resolve(module, importer, language, context)
                assert found != importer, (module, importer)


def test_go_import_of_the_module_root_package_is_the_root_folder() -> None:
    # go-chi/chi: the module's root package is the repository root; middleware/ imports it
    files = ["chi.go", "mux.go", "middleware/logger.go", "_examples/rest/main.go"]
    configs = {"go.mod": b"module github.com/go-chi/chi/v5\n\ngo 1.22\n"}
    ctx = build_context(files, configs.get)
    chi = "github.com/go-chi/chi/v5"
    assert resolve(chi, "middleware/logger.go", "go", ctx) == (".", None)
    assert resolve(chi + "/middleware", "chi.go", "go", ctx) == ("middleware", None)
    assert resolve(chi + "/render", "chi.go", "go", ctx) == (None, chi + "/render")


# -- tsconfig "extends": relative files, packages, chains; baseUrl where it is declared -----
def _ts(configs: dict[str, object], files: list[str]):  # type: ignore[no-untyped-def]
    raw = {path: json.dumps(value).encode() for path, value in configs.items()}
    return build_context(files, raw.get)


def test_tsconfig_inherits_base_url_from_the_file_that_declares_it() -> None:
    ctx = _ts(
        {
            "config/tsconfig.base.json": {"compilerOptions": {"baseUrl": "../src"}},
            "tsconfig.json": {
                "extends": "./config/tsconfig.base",  # no .json suffix
                "compilerOptions": {"paths": {"@app/*": ["app/*"]}},
            },
        },
        ["src/app/db.ts", "src/shared/time.ts", "main.ts"],
    )
    # paths resolve against the inherited baseUrl (src/), not the child's folder
    assert resolve("@app/db", "main.ts", "typescript", ctx) == ("src/app/db.ts", None)
    assert resolve("shared/time", "main.ts", "typescript", ctx) == ("src/shared/time.ts", None)


def test_tsconfig_extends_a_package_in_node_modules_recursively() -> None:
    ctx = _ts(
        {
            "node_modules/@repo/tsconfig/base.json": {
                "compilerOptions": {"baseUrl": ".", "paths": {"#lib/*": ["lib/*"]}}
            },
            "node_modules/@repo/tsconfig/nextjs.json": {
                "extends": "./base.json",
                "compilerOptions": {"jsx": "preserve"},
            },
            "apps/web/tsconfig.json": {
                "extends": "@repo/tsconfig/nextjs.json",
                "compilerOptions": {"baseUrl": ".", "paths": {"@/*": ["./src/*"]}},
            },
            "apps/docs/tsconfig.json": {"extends": "@repo/tsconfig/nextjs"},
        },
        [
            "apps/web/src/ui/button.tsx",
            "apps/web/src/page.tsx",
            "apps/docs/page.tsx",
            "node_modules/@repo/tsconfig/lib/x.ts",
        ],
    )
    page = "apps/web/src/page.tsx"
    assert resolve("@/ui/button", page, "tsx", ctx) == ("apps/web/src/ui/button.tsx", None)
    assert resolve("#lib/x", page, "tsx", ctx) == (None, None)  # the child's paths replace it
    # the docs app inherits paths and baseUrl from the package's base.json, two levels up
    found = resolve("#lib/x", "apps/docs/page.tsx", "tsx", ctx)
    assert found == ("node_modules/@repo/tsconfig/lib/x.ts", None)


def test_tsconfig_extends_a_list_later_entries_win_and_child_overrides() -> None:
    ctx = _ts(
        {
            "a.json": {"compilerOptions": {"baseUrl": "a", "paths": {"~/*": ["one/*"]}}},
            "b.json": {"compilerOptions": {"paths": {"~/*": ["two/*"]}}},
            "tsconfig.json": {"extends": ["./a.json", "./b.json"]},
            "pkg/tsconfig.json": {
                "extends": "../tsconfig.json",
                "compilerOptions": {"baseUrl": "."},
            },
        },
        ["a/two/x.ts", "a/one/x.ts", "pkg/two/x.ts", "main.ts", "pkg/main.ts"],
    )
    assert resolve("~/x", "main.ts", "typescript", ctx) == ("a/two/x.ts", None)
    assert resolve("~/x", "pkg/main.ts", "typescript", ctx) == ("pkg/two/x.ts", None)


def test_tsconfig_extends_cycle_and_missing_parent_do_not_fail() -> None:
    ctx = _ts(
        {
            "tsconfig.json": {"extends": "./other.json", "compilerOptions": {"baseUrl": "src"}},
            "other.json": {"extends": "./tsconfig.json"},
            "web/tsconfig.json": {
                "extends": "@missing/config",
                "compilerOptions": {"baseUrl": "."},
            },
        },
        ["src/a.ts", "main.ts", "web/b.ts", "web/main.ts"],
    )
    assert resolve("a", "main.ts", "typescript", ctx) == ("src/a.ts", None)
    assert resolve("b", "web/main.ts", "typescript", ctx) == ("web/b.ts", None)


def test_tsconfig_config_dir_is_the_folder_of_the_config_that_extends() -> None:
    ctx = _ts(
        {
            "node_modules/@repo/tsconfig/base.json": {
                "compilerOptions": {"paths": {"@/*": ["${configDir}/src/*"]}}
            },
            "apps/web/tsconfig.json": {"extends": "@repo/tsconfig/base.json"},
            "tsconfig.json": {"extends": ["@repo/tsconfig/base"], "compilerOptions": {}},
        },
        ["apps/web/src/ui.ts", "apps/web/main.ts", "src/ui.ts", "main.ts"],
    )
    assert resolve("@/ui", "apps/web/main.ts", "typescript", ctx) == ("apps/web/src/ui.ts", None)
    assert resolve("@/ui", "main.ts", "typescript", ctx) == ("src/ui.ts", None)


def test_tsconfig_module_suffixes_are_tried_before_the_plain_file() -> None:
    """React Native's ``moduleSuffixes``: ``./Ripple`` is ``Ripple.native.tsx`` when there is
    one (as TypeScript resolves it), through an ``extends`` too; without the option, the plain
    file."""
    files = ["src/Ripple.tsx", "src/Ripple.native.tsx", "src/Button.tsx", "src/index.ts"]
    ctx = _ts(
        {
            "tsconfig.base.json": {"compilerOptions": {"moduleSuffixes": [".native", ""]}},
            "tsconfig.json": {"extends": "./tsconfig.base.json"},
        },
        files,
    )
    assert resolve("./Ripple", "src/Button.tsx", "tsx", ctx) == ("src/Ripple.native.tsx", None)
    assert resolve("./Button", "src/index.ts", "typescript", ctx) == ("src/Button.tsx", None)
    plain = _ts({"tsconfig.json": {"compilerOptions": {}}}, files)
    assert resolve("./Ripple", "src/Button.tsx", "tsx", plain) == ("src/Ripple.tsx", None)
