"""Which dictionary definitions a retrieved chunk shows, for chunks made by any splitter.

Our own splitter writes `meta["symbol"]`; Haystack's `DocumentSplitter` (and most others) write only the source's
`file_path` (often just the file's name), a character offset (`split_idx_start`) and the text. `DefinitionLocator`
maps such a chunk onto the dictionary's definitions, most exact way first:

1. `symbol`: the chunk names its definition;
2. `lines`: a line range in meta (`start_line` / `end_line`, or the fields given);
3. `offsets`: a character offset (or, failing that, the chunk's text found in the file): the file is read from the
   tree the dictionary was built from, only when its content hash is the one the dictionary recorded, so the lines
   are the dictionary's lines;
4. `content`: the names that the chunk's own lines define (`def name`, `class Name`, `function name(`, `name = `...),
   among the definitions of its file (or of every file when the chunk names none).

A chunk spanning lines a..b shows the definitions that start inside it, in line order; one inside a long body shows
the innermost definition around it. Framework-free.
"""

from __future__ import annotations

import hashlib
import re
import threading
from bisect import bisect_right
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

from ..core.model import AliasDictionary, FileRecord, SymbolEntry

#: Meta fields that name a chunk's source file, tried in order (converters, loaders and stores differ).
FILE_PATH_FIELDS: tuple[str, ...] = ("file_path", "file_name", "path", "source", "filename", "url")
#: Meta fields of a 1-based line range (ours, and common loader conventions).
LINE_FIELDS: tuple[tuple[str, str], ...] = (("start_line", "end_line"), ("line_start", "line_end"))
#: Meta fields of the chunk's character offset in its source text (Haystack's splitters).
OFFSET_FIELDS: tuple[str, ...] = ("split_idx_start", "start_index", "char_start")
#: Files larger than this are not read to turn offsets into lines (the dictionary skips larger ones anyway).
MAX_READ_BYTES = 2_000_000
#: How many files' line tables are kept in memory.
LINE_TABLE_CACHE = 256

HOW = ("symbol", "lines", "offsets", "content")

_MODIFIERS = (
    r"export|default|public|private|protected|internal|static|async|abstract|final|override|readonly|declare|"
    r"virtual|sealed|open|inline|pub(?:\([^)]*\))?|unsafe|extern|const|let|var|def|class|function\*?|func|fn|"
    r"interface|struct|enum|trait|type|impl|module|namespace|object|record|get|set|val"
)
# The first identifier of a line after definition keywords and modifiers (and a Go receiver), when what follows
# it opens a definition: a parameter list, an assignment, a type, a body or a base list.
_DEFINES = re.compile(
    rf"^[ \t]*(?:@\w[\w.]*(?:\([^)]*\))?[ \t]+)*(?:(?:{_MODIFIERS})[ \t]+)*(?:\([^)]*\)[ \t]*)?"
    r"(?:[\w<>\[\],.?]+[ \t]+(?=[A-Za-z_$][\w$]*[ \t]*\())?"  # a Java/C-style return type before `name(`
    r"([A-Za-z_$][\w$]*)[ \t]*(?:<[^>\n]*>[ \t]*)?(?=[(:={]|\bextends\b|\bimplements\b|$)",
    re.MULTILINE,
)


@dataclass(frozen=True)
class LocatedChunk:
    """What one chunk was mapped to: its definitions (most relevant first) and how they were found."""

    definitions: tuple[SymbolEntry, ...] = ()
    how: str | None = None
    file_path: str | None = None

    @property
    def names(self) -> list[str]:
        """The definitions' names, first occurrence kept."""
        return list(dict.fromkeys(entry.name for entry in self.definitions))


@dataclass
class _LineTable:
    text: str
    starts: list[int] = field(default_factory=list)

    def line_of(self, offset: int) -> int:
        """1-based line of a character offset."""
        return bisect_right(self.starts, offset)


class DefinitionLocator:
    """
    Maps chunks from any splitter onto the definitions of one `AliasDictionary` (see the module docstring).

    :param dictionary: The dictionary whose definitions are looked up.
    :param file_path_field: The meta field that names the source file; None = the first of `FILE_PATH_FIELDS`
        present.
    :param line_fields: `(start, end)` meta fields of a 1-based line range; None = those of `LINE_FIELDS`.
    :param offset_field: The meta field of the character offset; None = the first of `OFFSET_FIELDS` present.
    :param read_files: Read files of the dictionary's tree to turn offsets into lines (only files whose content hash
        matches the dictionary's record, never outside the tree). False: offsets are not used.
    """

    def __init__(
        self,
        dictionary: AliasDictionary,
        *,
        file_path_field: str | None = None,
        line_fields: tuple[str, str] | None = None,
        offset_field: str | None = None,
        read_files: bool = True,
    ) -> None:
        self.dictionary = dictionary
        self.file_path_field = file_path_field
        self.line_fields = line_fields
        self.offset_field = offset_field
        self.read_files = read_files
        self._by_file: dict[str, list[SymbolEntry]] = {}
        for entry in dictionary.symbols:
            self._by_file.setdefault(entry.file_path, []).append(entry)
        for entries in self._by_file.values():
            entries.sort(key=lambda e: (e.start_line, -e.end_line))
        self._by_name: dict[str, list[SymbolEntry]] = {}
        for entry in dictionary.symbols:
            self._by_name.setdefault(entry.name, []).append(entry)
        # Reversed path parts -> files, to match an absolute path or a bare file name to the dictionary's paths.
        self._by_basename: dict[str, list[str]] = {}
        for path in self._by_file:
            self._by_basename.setdefault(PurePosixPath(path).name, []).append(path)
        self._roots = _roots(dictionary)
        self._tables: dict[str, _LineTable | None] = {}
        self._lock = threading.Lock()

    # ---- files -------------------------------------------------------------------------------------------------
    def source_path(self, meta: Mapping[str, Any]) -> str | None:
        """The chunk's source file as its meta names it (a path, a file name or a URL), or None."""
        fields = (self.file_path_field,) if self.file_path_field else FILE_PATH_FIELDS
        for name in fields:
            value = meta.get(name)
            if isinstance(value, str) and value.strip():
                return value.strip()
        return None

    def files_for(self, path: str) -> list[str]:
        """
        The dictionary files a chunk's path may be: its own relative path, else those sharing the longest tail
        of path parts with it (an absolute path, a `file://` URL, or a bare file name shared by several files).
        """
        normal = path.replace("\\", "/")
        if normal.startswith("file://"):
            normal = normal[len("file://") :]
        while normal.startswith("./"):
            normal = normal[2:]
        if normal in self._by_file:
            return [normal]
        parts = [p for p in normal.split("/") if p and p != "."]
        if not parts:
            return []
        candidates = self._by_basename.get(parts[-1], [])
        if len(candidates) <= 1:
            return list(candidates)
        best, chosen = 0, []
        for candidate in candidates:
            shared = _shared_tail(parts, candidate.split("/"))
            if shared > best:
                best, chosen = shared, [candidate]
            elif shared == best:
                chosen.append(candidate)
        return chosen

    # ---- one chunk ----------------------------------------------------------------------------------------------
    def locate(self, meta: Mapping[str, Any], content: str | None) -> LocatedChunk:
        """The definitions one chunk shows (module docstring), and how they were found."""
        symbol = meta.get("symbol")
        if isinstance(symbol, str) and symbol and symbol in self._by_name:
            entries = self._by_name[symbol]
            file_path = meta.get("file_path")
            own = [e for e in entries if e.file_path == file_path] or entries
            return LocatedChunk(tuple(own[:1]), "symbol", own[0].file_path)
        source = self.source_path(meta)
        files = self.files_for(source) if source else []
        span = self._line_span(meta)
        if span is not None and files:
            for file_path in files:
                found = self._in_span(file_path, *span)
                if found:
                    return LocatedChunk(tuple(found), "lines", file_path)
        if self.read_files and content:
            located = self._by_offset(files, meta, content)
            if located is not None:
                return located
        return self._by_content(files if source else list(self._by_file), content or "")

    def locate_many(self, documents: Iterable[tuple[Mapping[str, Any], str | None]]) -> list[LocatedChunk]:
        """`locate` for each `(meta, content)`, in order."""
        return [self.locate(meta, content) for meta, content in documents]

    # ---- the ways ----------------------------------------------------------------------------------------------
    def _line_span(self, meta: Mapping[str, Any]) -> tuple[int, int] | None:
        for start_field, end_field in (self.line_fields,) if self.line_fields else LINE_FIELDS:
            start, end = meta.get(start_field), meta.get(end_field)
            if isinstance(start, int) and start >= 1:
                return start, end if isinstance(end, int) and end >= start else start
        return None

    def _in_span(self, file_path: str, start: int, end: int) -> list[SymbolEntry]:
        """Definitions starting within lines start..end, else the innermost one around them."""
        entries = self._by_file.get(file_path, [])
        inside = [e for e in entries if start <= e.start_line <= end]
        if inside:
            return inside
        around = [e for e in entries if e.start_line <= start and e.end_line >= end]
        return [max(around, key=lambda e: (e.start_line, -e.end_line))] if around else []

    def _offset(self, meta: Mapping[str, Any]) -> int | None:
        for name in (self.offset_field,) if self.offset_field else OFFSET_FIELDS:
            value = meta.get(name)
            if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
                return value
        return None

    def _by_offset(self, files: Sequence[str], meta: Mapping[str, Any], content: str) -> LocatedChunk | None:
        offset = self._offset(meta)
        for file_path in files:
            table = self._table(file_path)
            if table is None:
                continue
            start = offset if offset is not None and table.text.startswith(content, offset) else None
            if start is None:
                found = table.text.find(content)
                if found < 0 or table.text.find(content, found + 1) >= 0:
                    continue  # not this file, or the text occurs twice: the offset cannot be trusted
                start = found
            first = table.line_of(start)
            last = table.line_of(start + max(len(content) - 1, 0))
            definitions = self._in_span(file_path, first, last)
            if definitions:
                return LocatedChunk(tuple(definitions), "offsets", file_path)
        return None

    def _by_content(self, files: Sequence[str], content: str) -> LocatedChunk:
        if not content or not files:
            return LocatedChunk()
        defined = list(dict.fromkeys(match.group(1) for match in _DEFINES.finditer(content)))
        if not defined:
            return LocatedChunk()
        allowed = set(files)
        found: list[SymbolEntry] = []
        for name in defined:
            entries = [e for e in self._by_name.get(name, []) if e.file_path in allowed]
            if entries and len({e.file_path for e in entries}) == 1:
                found.append(entries[0])  # ambiguous across files: the chunk does not say which
        if not found:
            return LocatedChunk()
        return LocatedChunk(tuple(found), "content", found[0].file_path)

    # ---- reading the tree --------------------------------------------------------------------------------------
    def _table(self, file_path: str) -> _LineTable | None:
        with self._lock:
            if file_path in self._tables:
                return self._tables[file_path]
        table = self._read(file_path)
        with self._lock:
            if len(self._tables) >= LINE_TABLE_CACHE:
                self._tables.pop(next(iter(self._tables)))
            self._tables[file_path] = table
        return table

    def _read(self, file_path: str) -> _LineTable | None:
        for root, record in self._records(file_path):
            try:
                base = root.resolve()
                path = (base / file_path).resolve()
                if not path.is_relative_to(base) or not path.is_file() or path.stat().st_size > MAX_READ_BYTES:
                    continue
                data = path.read_bytes()
            except OSError:
                continue
            if hashlib.sha256(data).hexdigest() != record.sha256:
                continue  # changed since the dictionary was built: its lines would not be the dictionary's
            text = data.decode("utf-8", errors="replace").removeprefix("\ufeff")
            starts = [0, *(match.end() for match in re.finditer("\n", text))]
            return _LineTable(text=text, starts=starts)
        return None

    def _records(self, file_path: str) -> list[tuple[Path, FileRecord]]:
        found = []
        for root, files in self._roots:
            record = files.get(file_path)
            if record is not None and root:
                found.append((Path(root), record))
        return found


def _roots(dictionary: AliasDictionary) -> list[tuple[str, Mapping[str, FileRecord]]]:
    roots: list[tuple[str, Mapping[str, FileRecord]]] = [(dictionary.root, dictionary.files)]
    roots += [(repo.root, repo.files) for repo in dictionary.repositories.values()]
    return roots


def _shared_tail(left: Sequence[str], right: Sequence[str]) -> int:
    count = 0
    for a, b in zip(reversed(left), reversed(right), strict=False):
        if a != b:
            break
        count += 1
    return count
