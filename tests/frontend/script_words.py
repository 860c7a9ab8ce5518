"""The page scripts' words as the browser gets them: each page's words module (frontend/static/frontend/words/*.js,
read the way xgettext would) and Django's JavaScript catalog (/jsi18n/, domain djangojs) that translates them."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from django.test import Client
from django.urls import reverse
from django.utils import translation

from frontend.presenters.labels import page_labels

STATIC = Path(__file__).resolve().parents[2] / "frontend" / "static" / "frontend"
WORDS = STATIC / "words"

_STRING = r'"((?:[^"\\]|\\.)*)"'
_ENTRY = re.compile(
    r'^  ("?[\w+]+"?): (?:_\('
    + _STRING
    + r"\)|pgettext\("
    + _STRING
    + ", "
    + _STRING
    + r"\)|"
    + _STRING
    + r"|LABELS\.(\w+))",
    re.M,
)
_SPREAD_IMPORT = re.compile(r'^import \{ (\w+)(?: as \w+)? \} from "\./(\w+)\.js";', re.M)
_SPREAD = re.compile(r"^  \.\.\.(\w+),", re.M)
_PREFIXED = re.compile(r'^  \.\.\.prefixed\("(\w+)", LABELS\.(\w+)\),', re.M)


@dataclass(frozen=True)
class Word:
    """One key of a words module: a msgid (with its context) for the catalog, a fixed text, or a labels map."""

    msgid: str | None = None
    context: str | None = None
    fixed: str | None = None
    labels: str | None = None  # the key of page_labels() it is read from
    label_key: str | None = None  # for a prefixed labels entry: the value's key


@cache
def page_words(module: str) -> dict[str, Word]:
    """Every key of frontend/static/frontend/words/<module>.js, with the spread modules' keys."""
    text = (WORDS / f"{module}.js").read_text()
    spread_from = {name: source for name, source in _SPREAD_IMPORT.findall(text)}
    words: dict[str, Word] = {}
    for spread in _SPREAD.findall(text):
        words.update(page_words(spread_from[spread]))
    for prefix, labels in _PREFIXED.findall(text):
        with translation.override("en"):
            keys = page_labels()[labels]
        words.update({prefix + key: Word(labels=labels, label_key=key) for key in keys})
    for key, msgid, context, context_msgid, fixed, labels in _ENTRY.findall(text):
        key = key.strip('"')
        if msgid:
            words[key] = Word(msgid=json.loads(f'"{msgid}"'))
        elif context_msgid:
            words[key] = Word(msgid=json.loads(f'"{context_msgid}"'), context=json.loads(f'"{context}"'))
        elif labels:
            words[key] = Word(labels=labels)
        else:
            words[key] = Word(fixed=json.loads(f'"{fixed}"'))
    return words


def js_catalog(client: Client, language: str) -> dict[str, str]:
    """The catalog /jsi18n/ serves in `language` (keys "msgid", or "context\\x04msgid" as Django writes them)."""
    response = client.get(reverse("frontend:javascript-catalog"), headers={"accept-language": language})
    assert response.status_code == 200, response.status_code
    body = response.content.decode()
    if "const newcatalog = " not in body:  # Django writes no catalog where the language has no entries (English)
        return {}
    return json.loads(body.split("const newcatalog = ", 1)[1].split(";\n", 1)[0])


def words_in(client: Client, module: str, language: str) -> dict[str, object]:
    """The words a page's script shows in `language`: its module's msgids through the served catalog (gettext
    gives the msgid back when there is no entry), fixed texts as they are, labels from the page's data block."""
    catalog = js_catalog(client, language)
    with translation.override(language):
        labels = page_labels()
    out: dict[str, object] = {}
    for key, word in page_words(module).items():
        if word.msgid is not None:
            lookup = f"{word.context}\x04{word.msgid}" if word.context else word.msgid
            out[key] = catalog.get(lookup, word.msgid)
        elif word.labels is not None:
            out[key] = labels[word.labels][word.label_key] if word.label_key else labels[word.labels]
        else:
            out[key] = word.fixed
    return out


def keys_read_by(*scripts: str) -> set[str]:
    """The fixed keys of T the scripts read (T.name and T["name"])."""
    source = "".join((STATIC / script).read_text() for script in scripts)
    return set(re.findall(r"\bT\.(\w+)", source)) | set(re.findall(r'\bT\["(\w+)"\]', source))
