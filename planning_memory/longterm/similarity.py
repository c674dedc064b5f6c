"""Lexical similarity of short texts: is a new pattern or mistake the same as a stored one? (pure)

``tokens`` normalises a text: camelCase and snake_case are split (PascalCase names such as
``TypeScript`` stay whole), accents are stripped, case is folded, common abbreviations and a
small Spanish developer vocabulary map to one English word (the seeds are in Spanish), English
and Spanish stop words and directive words ("always use", "siempre usa") are dropped,
negations become ``not``, and plurals lose their ``s`` / ``es`` (then a final ``e``, so
``file`` and ``files``, ``clase`` and ``clases`` meet). Code words are never stop words:
``any`` / ``this`` count where they name code ("nunca uses any", "`this`"), not where they are
prose ("is there any way to do this").

``similarity`` blends two views of those tokens (see ``docs/learning.md``)::

    score = TOKEN_WEIGHT * jaccard(token sets) + (1 - TOKEN_WEIGHT) * dice(character trigrams)

Jaccard rewards shared words, a word that looks like code (``pnpm``, ``console.log``, ``any``,
``TypeScript``, ``API``) counting ``CODE_WEIGHT`` times; the trigram Dice coefficient forgives
typos and word forms.
"""

from __future__ import annotations

import re
import unicodedata
import zlib
from collections.abc import Callable, Iterable
from functools import lru_cache

TOKEN_WEIGHT = 0.5
SIMILARITY_THRESHOLD = 0.5
CODE_WEIGHT = 3

_CAMEL_WORD = re.compile(r"\b[a-z][a-z0-9]*[A-Z][A-Za-z0-9]*")
_HUMP = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")
_WORD = re.compile(r"[a-z0-9]+")
_DOUBLED = re.compile(r"([a-z])\1+")
_CHUNK = re.compile(r"`[^`\n]*`|\S+")
_CODE_CHUNK = re.compile(
    r"`|\w[._/@]\w|^[\W]*[.@]\w|\w\(|[a-z][A-Z]|[A-Za-z]\d|^\W*[A-Z]{2,}\d*\W*$"
)
_VOWEL = re.compile(r"[aeiouy]")
# Stop words that are also keywords: they count after a verb of use or an article, when no
# noun follows ("nunca uses any", "the any type"), and inside backticks.
_KEYWORD_STOPS = frozenset({"any", "this"})
_BEFORE_KEYWORD_TEXT = """
use uses using used usa usar usas utiliza utilizar utilices avoid avoids evita evitar evites
prefer prefiero over than the el la los las un una an
"""
_BEFORE_KEYWORD = frozenset(_BEFORE_KEYWORD_TEXT.split())
_AFTER_KEYWORD = frozenset({"type", "types", "tipo", "tipos", "keyword"})
# Tools and keywords written like prose words; other code words show by their shape.
_CODE_NAMES_TEXT = """
npm pnpm yarn bun deno node jest vitest mocha pytest ruff mypy eslint prettier webpack vite
lodash zod yup axios fetch react vue svelte django flask fastapi prisma docker git pip poetry
conda redux moment dayjs eval var let const async await null none undefined
"""
_CODE_NAMES = frozenset(_CODE_NAMES_TEXT.split())
_PHRASES = (
    (re.compile(r"\bbases? de datos\b"), " database "),
    (re.compile(r"\bpunto y coma\b"), " semicolon "),
    (re.compile(r"\b(?:don['’]?t|do not|doesn['’]?t|does not)\b"), " not "),
)

_STOP_EN = """
a about above after again all also always an and any are as at be been before being both but
by can could did do does doing done during each either else etc every for from further had has
have having here how i ie eg if in into is it its just like make makes may me might
more most must my of off on once only onto or other our ours out over own please prefer
preferred rather same shall should so some such than that the their them then there these they
this those through to too under until up upon us use used uses using very via was we were what
when where which while who whom whose why will with would you your instead always project
convention
"""
_STOP_ES = """
a al algo ante antes aqui asi cada como con cual cuando de del desde donde durante e el ella
ellos en entre es esa ese eso esta estan este esto estos fue ha hay haz hazlo hacer hagas han
la las le les lo los mas me mejor mi mis muy nos nuestra nuestro o otra otro para pero por
porque prefiero preferimos preferir que se sea ser si siempre sin sobre son su sus tambien te
tiene tienen todo todos tu un una unas uno unos usa usad usamos usan usar uses utiliza
utilizamos utilizar utilices va van vez lugar ya y convencion proyecto
"""
STOP_WORDS = frozenset((_STOP_EN + _STOP_ES).split())

_NEGATIONS = "no never nunca not avoid avoids evita evitar evitad evitamos evites jamas"
_SYNONYMS_TEXT = """
env=environment vars=variable db=database repo=repository config=configuration
cfg=configuration conf=configuration fn=function func=function impl=implementation
deps=dependency dep=dependency dir=directory msg=message err=error args=argument arg=argument
param=parameter params=parameter pkg=package ts=typescript js=javascript py=python
req=request resp=response res=response auth=authentication favor=prefer favour=prefer
directly=direct directo=direct directamente=direct behavior=behaviour
prueba=test pruebas=test archivo=file archivos=file fichero=file ficheros=file
funcion=function funciones=function clase=class clases=class componente=component
componentes=component tipo=type tipos=type error=error errores=error excepcion=exception
excepciones=exception validacion=validation validaciones=validation validar=validate
valida=validate manejo=handling manejar=handle maneja=handle cadena=string cadenas=string
consulta=query consultas=query comillas=quote simples=single dobles=double
importacion=import importaciones=import exportacion=export exportaciones=export
nombre=name nombres=name nombrar=name rama=branch ramas=branch registro=log registros=log
registrar=log fecha=date fechas=date hora=time datos=data dato=data entrada=input
salida=output respuesta=response respuestas=response peticion=request peticiones=request
solicitud=request servidor=server cliente=client usuario=user usuarios=user
contrasena=password clave=key secreto=secret carpeta=directory carpetas=directory
directorio=directory ruta=path rutas=path codigo=code linea=line lineas=line espacio=space
espacios=space tabulaciones=tab estricto=strict modo=mode produccion=production
desarrollo=development dependencia=dependency dependencias=dependency paquete=package
paquetes=package transaccion=transaction transacciones=transaction escritura=write
escrituras=write lectura=read llamada=call llamadas=call nulo=null nulos=null vacio=empty
unitaria=unit unitarias=unit estado=state propiedad=prop propiedades=prop seguridad=security
rendimiento=performance memoria=memory subir=push temprano=early retorno=return
devolver=return devuelve=return anidamiento=nesting sufijo=suffix prefijo=prefix
formulario=form formularios=form junto=next siguiente=next guion=dash bajo=under
one=1 two=2 three=3 four=4 five=5 six=6 seven=7 eight=8 nine=9 ten=10 uno=1 dos=2 tres=3
cuatro=4 cinco=5 seis=6 siete=7 ocho=8 nueve=9 diez=10 minutos=minute
"""
SYNONYMS: dict[str, str] = {
    **{word: "not" for word in _NEGATIONS.split()},
    **dict(pair.split("=") for pair in _SYNONYMS_TEXT.split()),
}


def tokens(text: str) -> list[str]:
    """The normalised words of ``text``, in order, stop words removed."""
    return [word for word, _ in _tokens(text)]


def _tokens(text: str) -> list[tuple[str, bool]]:
    """``tokens`` with, for each, whether it looks like code."""
    code = _code_words(text)
    folded = _fold(text)
    found = list(_WORD.finditer(folded))
    out: list[tuple[str, bool]] = []
    for index, match in enumerate(found):
        raw = match.group()
        stop, looks, stem, negation = _word(raw)
        if stop and raw not in code and not _keyword(folded, found, index):
            continue
        out.append((stem, (looks or raw in code) and not negation))
    return out


@lru_cache(maxsize=1 << 16)
def _word(raw: str) -> tuple[bool, bool, str, bool]:
    """What ``_tokens`` needs of a folded word whatever its neighbours: whether it is a stop
    word, whether it looks like code (outside a code chunk), its stem and whether it is a
    negation (remembered: the words of a store repeat)."""
    word = SYNONYMS.get(raw, raw)
    looks = raw in _KEYWORD_STOPS or _looks_like_code(word)
    return _is_stop(word), looks, _stem(word), word == "not"


def _code_words(text: str) -> frozenset[str]:
    """The folded words of the chunks written like code: backticks, ``a.b``, ``snake_case``,
    ``a/b``, ``f()``, camelCase, ``ES2020``, ``API``."""
    if not any(c in text for c in "`._/@(") and text.islower():
        return frozenset()
    chunks = (m.group() for m in _CHUNK.finditer(text))
    return frozenset(w for c in chunks if _CODE_CHUNK.search(c) for w in _WORD.findall(_fold(c)))


def _keyword(folded: str, found: list[re.Match[str]], index: int) -> bool:
    """A keyword stop word used as code: after a verb of use or an article, with no noun
    after it (the end, punctuation, a function word, or "type")."""
    word = found[index].group()
    if word not in _KEYWORD_STOPS or index == 0:
        return False
    if found[index - 1].group() not in _BEFORE_KEYWORD:
        return False
    if index + 1 == len(found):
        return True
    after = found[index + 1]
    gap = folded[found[index].end() : after.start()]
    nxt = after.group()
    return bool(gap.strip()) or nxt in STOP_WORDS or nxt in _AFTER_KEYWORD


def _looks_like_code(word: str) -> bool:
    """A known tool or keyword, or a word no prose has: no vowel (``pnpm``, ``tsc``)."""
    if word in _CODE_NAMES:
        return True
    return len(word) >= 3 and not word.isdigit() and _VOWEL.search(word) is None


def _is_stop(word: str) -> bool:
    """A stop word, a one-letter word, or a stop word typed with a doubled letter (allways)."""
    if word in STOP_WORDS or (len(word) < 2 and not word.isdigit()):
        return True
    return len(word) >= 4 and _DOUBLED.sub(r"\1", word) in STOP_WORDS


def similarity(a: str, b: str) -> float:
    """How alike two texts are, from 0 (nothing shared) to 1 (the same normalised words)."""
    return _score(_profile(a), _profile(b))


def best_match(
    text: str,
    candidates: Iterable[tuple[str, str]],
    threshold: float = SIMILARITY_THRESHOLD,
) -> tuple[str, float] | None:
    """The ``(id, score)`` of the candidate ``(id, text)`` most like ``text``, if it reaches
    ``threshold``; on a tie the first candidate wins."""
    return best_profile(
        _profile(text), ((key, _profile(other)) for key, other in candidates), threshold
    )


def best_profile(
    mine: Profile, candidates: Iterable[tuple[str, Profile]], threshold: float
) -> tuple[str, float] | None:
    """``best_match`` over profiles already made (``profile`` / ``profile_of``)."""
    best: tuple[str, float] | None = None
    for candidate_id, theirs in candidates:
        score = _score(mine, theirs)
        if score >= threshold and (best is None or score > best[1]):
            best = (candidate_id, score)
    return best


Profile = tuple[frozenset[str], frozenset[str], frozenset[str]]  # words, code words, trigrams


def profile(text: str) -> Profile:
    """What ``similarity`` compares of ``text``: its words, those that look like code, and
    the character trigrams of its words (``profile_of(words, code)`` rebuilds it)."""
    return _profile(text)


def profile_of(words: Iterable[str], code: Iterable[str]) -> Profile:
    """The profile whose words and code words are these (as ``profile`` gave them)."""
    kept = frozenset(words)
    return kept, frozenset(code), frozenset(gram for word in kept for gram in _word_trigrams(word))


MASK_BITS = 1024


def gram_mask(grams: Iterable[str]) -> int:
    """A ``MASK_BITS``-bit sketch of a trigram set: one bit per trigram (crc32), so a stored
    record's trigrams fit a small blob and ``ceiling`` can bound a score without them.
    It is the first of the text's ``gram_layers`` (remembered: a save looks up the text's
    layers, then catalogs its mask)."""
    layers = _layers(frozenset(grams))
    return layers[0] if layers else 0


def gram_bit(gram: str) -> int:
    """The bit of ``gram`` in a ``gram_mask`` (remembered: the trigrams of a store repeat)."""
    bit = _GRAM_BITS.get(gram)
    if bit is None:
        if len(_GRAM_BITS) >= 1 << 18:
            _GRAM_BITS.clear()
        bit = _GRAM_BITS[gram] = zlib.crc32(gram.encode("utf-8")) % MASK_BITS
    return bit


_GRAM_BITS: dict[str, int] = {}


def gram_layers(grams: Iterable[str]) -> list[int]:
    """The trigrams of one text as layers of bits: layer k has the bits that k+1 or more of
    its trigrams fall on (their sum over the bits of another mask bounds the trigrams shared
    with it)."""
    return list(_layers(frozenset(grams)))


@lru_cache(maxsize=64)
def _layers(grams: frozenset[str]) -> tuple[int, ...]:
    counts: dict[int, int] = {}
    for gram in grams:
        bit = gram_bit(gram)
        counts[bit] = counts.get(bit, 0) + 1
    layers = [0] * max(counts.values(), default=0)
    for bit, count in counts.items():
        for layer in range(count):
            layers[layer] |= 1 << bit
    return tuple(layers)


def ceiling(
    mine: Profile, layers: list[int], shared: int, counts: tuple[int, int, int], mask: int
) -> float:
    """An upper bound of ``_score(mine, theirs)`` from what a catalog stores of ``theirs``:
    ``shared`` words in common, its counts of words, code words and trigrams, and its
    ``gram_mask``.

    Token part: the best case counts ``CODE_WEIGHT`` times as many shared words as there can
    be code words (``token_ceiling``). Trigram part: each trigram of ``mine`` shared with
    theirs sets a bit of ``mask``, so the trigrams of ``mine`` falling on bits of ``mask``
    (``layers``) bound the shared ones."""
    words, code, grams = counts
    if not mine[0] and not words:
        return 0.0
    tokens = token_ceiling(shared, len(mine[0]), words, min(shared, len(mine[1]) + code))
    total = len(mine[2]) + grams
    common = min(sum((layer & mask).bit_count() for layer in layers), grams, len(mine[2]))
    dice = 2 * common / total if total else 0.0
    return TOKEN_WEIGHT * min(tokens, 1.0) + (1 - TOKEN_WEIGHT) * dice


def may_reach(mine: Profile, threshold: float) -> Callable[[int, int, int, int, int], bool]:
    """``ceiling(...) >= threshold`` as a fast test of stored counts and a ``gram_mask`` (the
    catalog calls it for every record sharing a word with ``mine``). The token part and the
    trigram counts are tried first: the mask is looked at only when they may reach."""
    layers = gram_layers(mine[2])
    first, rest = (layers[0], layers[1:]) if layers else (0, [])
    words, code, grams = len(mine[0]), len(mine[1]), len(mine[2])
    extra_weight, token_weight = CODE_WEIGHT - 1, TOKEN_WEIGHT
    gram_weight = 1 - token_weight

    def test(shared: int, their_words: int, their_code: int, their_grams: int, mask: int) -> bool:
        if not words and not their_words:
            return threshold <= 0.0
        extra = extra_weight * min(shared, code + their_code)
        tokens = min(1.0, (shared + extra) / max(1, words + their_words - shared + extra))
        total = grams + their_grams
        most = min(grams, their_grams)
        if token_weight * tokens + gram_weight * (2 * most / total if total else 0.0) < threshold:
            return False  # even with every trigram of the smaller set shared
        common = (first & mask).bit_count()
        for layer in rest:
            common += (layer & mask).bit_count()
        dice = 2 * min(common, most) / total if total else 0.0
        return token_weight * tokens + gram_weight * dice >= threshold

    return test


def token_ceiling(shared: int, mine: int, theirs: int, code: int) -> float:
    """The weighted Jaccard index of two word sets of sizes ``mine`` and ``theirs`` sharing
    ``shared`` words, at most ``code`` of them code words, in the best case: the shared code
    words count ``CODE_WEIGHT`` times, no other word does."""
    extra = (CODE_WEIGHT - 1) * code
    return (shared + extra) / max(1, mine + theirs - shared + extra)


@lru_cache(maxsize=4096)
def _profile(text: str) -> Profile:
    found = _tokens(text)
    words = frozenset(word for word, _ in found)
    code = frozenset(word for word, looks in found if looks)
    grams = frozenset(gram for word in words for gram in _word_trigrams(word))
    return words, code, grams


def _score(a: Profile, b: Profile) -> float:
    words_a, code_a, grams_a = a
    words_b, code_b, grams_b = b
    if not words_a and not words_b:
        return 0.0
    code = code_a | code_b

    def weight(words: frozenset[str]) -> int:
        return len(words) + (CODE_WEIGHT - 1) * len(words & code)

    jaccard = weight(words_a & words_b) / weight(words_a | words_b)
    total = len(grams_a) + len(grams_b)
    dice = 2 * len(grams_a & grams_b) / total if total else 0.0
    return TOKEN_WEIGHT * jaccard + (1 - TOKEN_WEIGHT) * dice


@lru_cache(maxsize=1 << 16)
def _word_trigrams(word: str) -> tuple[str, ...]:
    return tuple(_trigrams(word))


def _trigrams(word: str) -> list[str]:
    padded = f" {word} "
    return [padded[i : i + 3] for i in range(len(padded) - 2)]


def _fold(text: str) -> str:
    """camelCase split (PascalCase names such as TypeScript stay whole), accents stripped,
    lower case, a few phrases joined into one word."""
    spaced = _CAMEL_WORD.sub(lambda m: _HUMP.sub(" ", m.group(0)), text)
    if spaced.isascii():
        plain = spaced.lower()
    else:
        decomposed = unicodedata.normalize("NFKD", spaced)
        plain = "".join(c for c in decomposed if not unicodedata.combining(c)).lower()
    for pattern, replacement in _PHRASES:
        plain = pattern.sub(replacement, plain)
    return plain


def _stem(word: str) -> str:
    """Plural ``s`` / ``es`` / ``ies`` off, then a final ``e``: file/files/fil, clase/clases."""
    if len(word) <= 3 or word.isdigit():
        return word
    if word.endswith("ies") and len(word) > 4:
        word = word[:-3] + "y"
    elif word.endswith("es") and word[:-2].endswith(("s", "x", "z", "ch", "sh")):
        word = word[:-2]
    elif word.endswith("s") and not word.endswith(("ss", "us", "is")):
        word = word[:-1]
    if word.endswith("e") and len(word) > 3:
        word = word[:-1]
    return word
