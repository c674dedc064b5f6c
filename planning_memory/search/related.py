"""Words that stand for each other: a question about packages is also about npm and pnpm.

"What package manager do we use" is about npm, pnpm and yarn, and "gestor de paquetes" is the
same question in Spanish.

``GROUPS`` are small hand-made groups (English and Spanish) of the subjects a project's rules
are about: packages, secrets, git, tests, types, formatting, the database, errors and
logging, HTTP, auth, deploys, CSS. A word of a group widens a query to the whole group: the
hook's recall reads taught rules through it, and search ranks the documents holding the
group's other words as a third list (``hybrid``). Pure.
"""

from __future__ import annotations

from collections.abc import Sequence

GROUPS: tuple[frozenset[str], ...] = tuple(
    frozenset(group.split())
    for group in (
        "dependency dependencies package packages install library libraries deps npm pnpm yarn"
        " bun pip poetry uv cargo lockfile paquete paquetes gestor dependencia dependencias"
        " instalar librería librerías biblioteca bibliotecas",
        "secret secrets credential credentials password passwords token tokens env dotenv apikey"
        " secreto secretos credencial credenciales contraseña contraseñas clave claves",
        "commit commits push branch merge rebase git rama ramas",
        "test tests testing spec specs coverage vitest jest pytest mock mocks prueba pruebas",
        "typescript types typing interface interfaces tipos tipado",
        "style formatting lint linter prettier eslint ruff indentation quotes semicolons"
        " formato comillas sangría",
        "database db sql migration migrations schema orm prisma migración migraciones esquema",
        "error errors exception exceptions catch logging logger errores excepción excepciones",
        "api endpoint endpoints route routes fetch request requests http timeout petición"
        " peticiones ruta rutas",
        "auth authentication login logout signin signup oauth jwt nextauth autenticación",
        "deploy deployment release production pipeline docker despliegue desplegar producción",
        "css styles styling tailwind estilos",
    )
)


def related_words(terms: Sequence[str]) -> dict[str, str]:
    """``{related word: the prompt's word it came from}`` for the groups ``terms`` touch."""
    found: dict[str, str] = {}
    for term in terms:
        for group in GROUPS:
            if term in group or singular(term) in group:
                found.update((w, term) for w in sorted(group) if w not in found)
    return found


def singular(word: str) -> str:
    return word[:-1] if word.endswith("s") and not word.endswith("ss") else word
