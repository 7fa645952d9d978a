"""include / exclude field paths, also into arrays of objects."""

from __future__ import annotations

import pytest

from cairn.transforms import paths

CONTEXT = {
    "name": "calc",
    "items": [{"id": 1, "secret": "a", "meta": {"x": 1, "y": 2}}, {"id": 2, "secret": "b"}],
    "meta": {"internal_id": "z", "public": "yes"},
    "tags": ["a", "b"],
}


def _exclude(*raw: str) -> object:
    return paths.exclude(CONTEXT, [paths.parse_path(p) for p in raw])


def _include(*raw: str) -> object:
    return paths.include(CONTEXT, [paths.parse_path(p) for p in raw])


def test_parse_dotted_and_indexed_paths() -> None:
    assert paths.parse_path("a.b[0].c") == ("a", "b", "0", "c")
    assert paths.parse_path("items[*].name") == ("items", "*", "name")


@pytest.mark.parametrize("bad", ["", "a..b", ".a", "a.", "a[x]", "a[0"])
def test_malformed_paths_are_rejected(bad: str) -> None:
    with pytest.raises(paths.PathError):
        paths.parse_path(bad)


def test_exclude_top_level_and_nested_fields() -> None:
    assert _exclude("name", "meta.internal_id") == {
        "items": CONTEXT["items"],
        "meta": {"public": "yes"},
        "tags": ["a", "b"],
    }


def test_exclude_a_field_from_every_object_of_an_array() -> None:
    out = _exclude("items.secret", "items.meta.y")
    assert out["items"] == [{"id": 1, "meta": {"x": 1}}, {"id": 2}]  # type: ignore[index]


def test_exclude_one_array_element_by_index() -> None:
    assert _exclude("items[0]")["items"] == [CONTEXT["items"][1]]  # type: ignore[index]
    assert _exclude("tags.1")["tags"] == ["a"]  # type: ignore[index]


def test_exclude_does_not_touch_the_input() -> None:
    _exclude("items.secret")
    assert CONTEXT["items"][0]["secret"] == "a"  # type: ignore[index]


def test_include_keeps_only_named_fields_nested_and_in_arrays() -> None:
    assert _include("name", "meta.public", "items.id") == {
        "name": "calc",
        "meta": {"public": "yes"},
        "items": [{"id": 1}, {"id": 2}],
    }


def test_include_of_a_field_nobody_has_keeps_nothing() -> None:
    assert _include("nope", "meta.nope") is paths.MISSING
    assert _include("items.nope", "name") == {"name": "calc"}


def test_wildcard_matches_every_key() -> None:
    assert _include("meta.*") == {"meta": CONTEXT["meta"]}
    assert _exclude("*.internal_id")["meta"] == {"public": "yes"}  # type: ignore[index]


def test_record_rooted_paths_mean_the_context() -> None:
    rooted = paths.rooted([("context", "links"), ("version",)], {"links": 1})
    assert rooted == [("links",), ("version",)]
    assert paths.rooted([("context", "x")], {"context": {}}) == [("context", "x")]


def test_lookup_follows_keys_indexes_and_length() -> None:
    assert paths.lookup(CONTEXT, ("items", "1", "id")) == 2
    assert paths.lookup(CONTEXT, ("tags", "length")) == 2
    assert paths.lookup(CONTEXT, ("items", "9")) is paths.MISSING
