"""Strict JSON read as a stream: the parsing events of one document, and
the values a reader wants from them, without holding the document.

Events come from ijson's C backend fed in chunks, under the rules of
:func:`truereward.util.strictjson.loads` on every part of the document, plus
bounds on depth (:data:`MAX_DEPTH`) and string length
(:data:`MAX_STRING`); :func:`value` builds a value, :func:`skip` checks one
without building it. docs/readers.md, "Reading a run's files", gives the
rules.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from functools import cache
from typing import Any

from ..util.safefile import CHUNK
from ..util.strictjson import StrictJSONError
from .evidence import Readable

__all__ = [
    "MAX_DEPTH",
    "MAX_STRING",
    "Events",
    "backend",
    "events",
    "skip",
    "translate",
    "value",
]

#: The deepest nesting read (a report nests a few levels).
MAX_DEPTH = 512
#: The longest string read, in bytes as written: far above a test's name or
#: message, and at least a chunk, so that only a string spanning chunks can
#: pass it.
MAX_STRING = 4 << 20

#: (event, value) pairs, as ijson's ``basic_parse`` gives them.
Events = Iterator[tuple[str, Any]]


class _WithoutBom:
    """``stream`` without a leading UTF-8 byte-order mark."""

    def __init__(self, stream: Readable) -> None:
        self._stream = stream
        self._first = True

    def read(self, size: int = -1) -> bytes:
        if not self._first or size == 0:
            return self._stream.read(size)
        self._first = False
        data = self._stream.read(size)
        while 0 < len(data) < 3 and b"\xef\xbb\xbf".startswith(data):
            more = self._stream.read(size)
            if not more:
                break
            data += more
        return data[3:] if data.startswith(b"\xef\xbb\xbf") else data


class _StringsBounded:
    """``stream``, refusing a string longer than :data:`MAX_STRING` bytes
    (:class:`~truereward.util.strictjson.StrictJSONError`) before handing over
    the chunk that makes it so. Tracks, between chunks, whether a string is
    open and how long it is so far: a string within one chunk is shorter
    than a chunk, so only the first and last quote of each chunk matter,
    found in C (escaped quotes and backslashes blanked out first)."""

    def __init__(self, stream: Readable) -> None:
        self._stream = stream
        self._open = False  # inside a string at the end of the last chunk
        self._escaped = False  # ... right after a backslash
        self._length = 0  # bytes of the open string so far

    def read(self, size: int = -1) -> bytes:
        data = self._stream.read(size)
        if data:
            self._scan(data)
        return data

    def _scan(self, data: bytes) -> None:
        plain = data
        if self._escaped:  # the first byte is escaped by the last chunk's backslash
            plain = b"_" + plain[1:]
            self._escaped = False
        if b"\\" in plain:
            plain = _ESCAPE.sub(b"__", plain)
            self._escaped = plain.endswith(b"\\")  # a backslash whose pair comes next
        quotes = plain.count(b'"')
        if self._open:
            if not quotes:
                self._length += len(plain)
                self._check()
                return
            self._length += plain.find(b'"')
            self._check()
            quotes -= 1  # the first one closed it
        self._open = quotes % 2 == 1
        if self._open:
            self._length = len(plain) - plain.rfind(b'"') - 1
            self._check()

    def _check(self) -> None:
        if self._length > MAX_STRING:
            raise StrictJSONError(
                f"a string longer than {MAX_STRING} bytes: strings that long are refused"
            )


#: A backslash and the byte it escapes.
_ESCAPE = re.compile(rb"\\.", re.DOTALL)


@cache
def backend() -> Any:
    """The ijson backend read with: yajl2_c, else ijson's default."""
    import ijson

    try:
        return ijson.get_backend("yajl2_c")
    except ImportError:  # no C backend on this platform
        return ijson


def events(stream: Readable) -> Events:
    """The events of the JSON document ``stream`` holds. Iterating raises
    ijson's errors (:func:`translate` says what they mean) and whatever
    reading raises."""
    chosen = backend()
    # The backend's own generator, without ijson's dispatch on the source.
    parse = getattr(chosen, "basic_parse_gen", chosen.basic_parse)
    return iter(parse(_StringsBounded(_WithoutBom(stream)), buf_size=CHUNK, use_float=True))


def translate(error: Exception) -> StrictJSONError | None:
    """The :class:`~truereward.util.strictjson.StrictJSONError` an exception met
    while iterating :func:`events` stands for (None: it is not a JSON
    error, let it be)."""
    import ijson

    if isinstance(error, StrictJSONError):
        return error
    if isinstance(error, ijson.JSONError | ValueError):  # the Python backend's too
        text = " ".join(str(error).split())
        return StrictJSONError(f"invalid JSON: {text[:300]}")
    if isinstance(error, StopIteration):  # the events ended where a value must be
        return StrictJSONError("invalid JSON: the document ends early")
    return None


def _too_deep() -> StrictJSONError:
    return StrictJSONError(f"JSON nested too deeply (more than {MAX_DEPTH} levels)")


def value(stream: Events, event: str, first: Any, depth: int) -> Any:
    """The value that starts with ``(event, first)``, read from ``stream``
    to its end; ``depth`` is how deep it lies (the document is at 1)."""
    if event == "start_map":
        root: Any = {}
    elif event == "start_array":
        root = []
    else:
        return first
    if depth > MAX_DEPTH:
        raise _too_deep()
    containers: list[Any] = [root]
    keys: list[Any] = []
    top = root
    key: Any = None
    # One loop over the events, written out: it runs for every event of
    # every test of a report.
    for event, item in stream:
        if event == "map_key":
            if item in top:
                raise StrictJSONError(f"duplicate key {item!r} in one object")
            key = item
            continue
        if event == "end_map" or event == "end_array":
            containers.pop()
            if not containers:
                return root
            top = containers[-1]
            key = keys.pop()
            continue
        if event == "start_map" or event == "start_array":
            if depth + len(containers) > MAX_DEPTH:
                raise _too_deep()
            item = {} if event == "start_map" else []
            if type(top) is dict:
                top[key] = item
            else:
                top.append(item)
            containers.append(item)
            keys.append(key)
            top = item
            continue
        if type(top) is dict:
            top[key] = item
        else:
            top.append(item)
    raise StrictJSONError("invalid JSON: the document ends inside a value")


#: The most keys :func:`skip` holds at once (the keys of the objects open
#: around it) to find a duplicate: far above any report's, far below what
#: would take the reader past its memory bound.
MAX_SKIPPED_KEYS = 100_000


def skip(stream: Events, event: str, first: Any, depth: int) -> None:
    """Check the value that starts with ``(event, first)`` without building
    it (duplicate keys, depth; yajl checks the rest), reading ``stream`` to
    its end."""
    if event == "start_map":
        stack: list[set[Any] | None] = [set()]
    elif event == "start_array":
        stack = [None]
    else:
        return
    if depth > MAX_DEPTH:
        raise _too_deep()
    held = 0  # keys of the open objects, kept to find a duplicate
    for event, item in stream:
        if event == "map_key":
            keys = stack[-1]
            assert keys is not None  # a key is only ever inside an object
            if item in keys:
                raise StrictJSONError(f"duplicate key {item!r} in one object")
            held += 1
            if held > MAX_SKIPPED_KEYS:
                # Each key held costs memory; no report needs this many.
                raise StrictJSONError(f"more than {MAX_SKIPPED_KEYS} keys in objects open at once")
            keys.add(item)
        elif event == "end_map" or event == "end_array":
            closed = stack.pop()
            held -= len(closed) if closed is not None else 0
            if not stack:
                return
        elif event == "start_map" or event == "start_array":
            if depth + len(stack) > MAX_DEPTH:
                raise _too_deep()
            stack.append(set() if event == "start_map" else None)
    raise StrictJSONError("invalid JSON: the document ends inside a value")
