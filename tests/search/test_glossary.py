"""The Spanish-English glossary (search/glossary.py) and the search list it feeds: a question in
one language finds a memory written in the other with no model at all."""

from __future__ import annotations

from pathlib import Path

from planning_memory.memory import Memory
from planning_memory.search import hybrid
from planning_memory.search.glossary import ENGLISH, SPANISH, translations
from planning_memory.search.stemming import fold


def test_words_are_translated_both_ways_accents_or_not() -> None:
    assert translations(["salida"]) == ["output", "exit"]
    assert translations(["configuracion"]) == translations(["configuración"])
    assert "pedidos" in translations(["orders"]) and "pedido" in translations(["order"])
    assert translations(["colores"]) == ["colors", "colours"]  # "color" is the same word


def test_a_word_of_a_related_group_is_left_to_its_group() -> None:
    assert translations(["paquetes", "gestor"]) == []  # the packages group holds both
    assert translations(["zebra", "output"]) == ["salida"]  # unknown words add nothing


def test_translations_never_repeat_the_query_and_are_bounded() -> None:
    assert "file" not in translations(["file", "archivo"])
    assert translations(["version"]) == [] == translations(["versión"])
    assert len(translations(list(SPANISH))) == 24 == len(translations(list(ENGLISH)))


def test_the_glossary_pairs_each_word_with_the_other_language_only() -> None:
    for table, other in ((SPANISH, ENGLISH), (ENGLISH, SPANISH)):
        for word, words in table.items():
            assert word not in map(fold, words)  # "versión" is "version": no translation
            assert all(fold(w) in other for w in words), word


def test_a_spanish_question_finds_an_english_memory_without_the_model(tmp_path: Path) -> None:
    mem = Memory.init(tmp_path)
    mem.save(
        "Echo instead of print",
        "pattern",
        description="Commands write their output with click.echo; it survives a broken pipe.",
    )
    mem.save("Retry network calls", "pattern", description="Retry 5xx answers three times.")
    mem.save("Pedidos en bloque", "pattern", description="Los pedidos se cargan con un join.")
    hits = mem.search("¿cómo imprimen la salida los comandos?", semantic=False)
    assert hits and hits[0].title == "Echo instead of print"
    assert hits[0].match == hybrid.TRANSLATED and "in the other language" in hits[0].reason
    hits = mem.search("load the orders in one query", semantic=False)
    assert hits and hits[0].title == "Pedidos en bloque"


def test_only_a_sentence_is_embedded() -> None:
    assert hybrid.worth_embedding("should we use asyncio", ["asyncio"])
    assert not hybrid.worth_embedding("foobarbaz", ["foobarbaz"])
    assert not hybrid.worth_embedding("should we", [])
