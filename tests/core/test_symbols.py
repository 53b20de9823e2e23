"""Tests of the tree-sitter symbol extractor (core/symbols.py): one small source per language."""

from __future__ import annotations

import textwrap

import pytest

from haystack_integrations.components.code_alias.core.model import SymbolDef
from haystack_integrations.components.code_alias.core.symbols import (
    LANGUAGE_BY_EXTENSION,
    MAX_DOC_CHARS,
    SUPPORTED_LANGUAGES,
    extract_symbols,
    language_for_path,
    module_name_for,
)


def _extract(source: str, language: str, path: str) -> dict[str, SymbolDef]:
    """Symbols by qualified name (the sources below define each qualified name once)."""
    symbols = extract_symbols(textwrap.dedent(source), language, path)
    by_name = {symbol.qualified_name: symbol for symbol in symbols}
    assert len(by_name) == len(symbols), [s.qualified_name for s in symbols]
    return by_name


def _summary(symbol: SymbolDef) -> tuple[str, str | None, bool, int, int]:
    return symbol.kind, symbol.parent, symbol.exported, symbol.start_line, symbol.end_line


# ---- paths -------------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("path", "language"),
    [
        ("a/b.py", "python"),
        ("web/app.JS", "javascript"),
        ("x.mjs", "javascript"),
        ("x.cjs", "javascript"),
        ("ui/Button.jsx", "javascript"),
        ("x.ts", "typescript"),
        ("x.mts", "typescript"),
        ("x.cts", "typescript"),
        ("ui/App.tsx", "tsx"),
        ("cmd/main.go", "go"),
        ("src/lib.rs", "rust"),
        ("src/main/java/A.java", "java"),
        ("README.md", None),
        ("Makefile", None),
        ("setup.cfg", None),
    ],
)
def test_language_for_path(path: str, language: str | None) -> None:
    assert language_for_path(path) == language


def test_every_mapped_language_is_supported() -> None:
    assert set(LANGUAGE_BY_EXTENSION.values()) == SUPPORTED_LANGUAGES


@pytest.mark.parametrize(
    ("path", "language", "module"),
    [
        ("django/db/models/query.py", "python", "django.db.models.query"),
        ("pkg/__init__.py", "python", "pkg"),
        ("src/pkg/sub/mod.py", "python", "pkg.sub.mod"),
        ("lib/tool.py", "python", "tool"),
        ("__init__.py", "python", ""),
        ("src/utils/retry.ts", "typescript", "src.utils.retry"),
        ("src/utils/index.ts", "typescript", "src.utils"),
        ("types/api.d.ts", "typescript", "types.api"),
        ("packages/core/index.js", "javascript", "packages.core"),
        ("ui/App.tsx", "tsx", "ui.App"),
        ("index.mjs", "javascript", ""),
        ("pkg/server/http.go", "go", "pkg.server"),
        ("main.go", "go", ""),
        ("src/lib.rs", "rust", ""),
        ("src/main.rs", "rust", ""),
        ("src/net/tcp.rs", "rust", "net.tcp"),
        ("src/net/mod.rs", "rust", "net"),
        ("crates/geo/src/shapes/mod.rs", "rust", "shapes"),
        ("crates/geo/src/shapes/main.rs", "rust", "shapes.main"),
        ("src/bin/tool.rs", "rust", "bin.tool"),
        ("src/main/java/com/acme/pay/Retry.java", "java", "com.acme.pay"),
        ("service/src/test/java/com/acme/RetryTest.java", "java", "com.acme"),
        ("src/org/x/A.java", "java", "org.x"),
    ],
)
def test_module_name_for(path: str, language: str, module: str) -> None:
    assert module_name_for(path, language) == module


def test_module_name_for_java_prefers_the_package_declaration() -> None:
    text = "/* package not.this; */\n// Header\npackage com.acme . pay;\n\nclass A {}\n"
    assert module_name_for("weird/place/A.java", "java", text) == "com.acme.pay"
    assert module_name_for("weird/place/A.java", "java", "class A {}") == "weird.place"


def test_unsupported_language_raises_value_error_naming_it() -> None:
    with pytest.raises(ValueError, match="cobol"):
        extract_symbols("IDENTIFICATION DIVISION.", "cobol", "a.cbl")
    with pytest.raises(ValueError, match="kotlin"):
        module_name_for("a.kt", "kotlin")


# ---- Python --------------------------------------------------------------------------------------------------
PYTHON_SOURCE = '''\
"""Module docstring."""
import os

__all__ = ["public_fn", "Thing", "registry", "_hidden", "MAX_RETRIES"]

MAX_RETRIES = 3
DEFAULT_TIMEOUT: float = 2.5
registry = {}
unlisted = 1


# Comment for public_fn.
# Second line.
@decorator
@other.decorator(1)
def public_fn(a):
    return a


def _hidden():
    """Hidden but listed."""


def not_listed():
    pass


class Thing(Base):
    """A thing.

    More   text.
    """

    LIMIT = 5

    def __init__(self):
        pass

    def _private(self):
        pass

    async def run(self):
        def inner():
            pass
        return inner

    class Meta:
        ordering = ["x"]


try:
    from fast import speedup
except ImportError:
    def speedup(x):
        return x
'''


def test_python_definitions() -> None:
    symbols = _extract(PYTHON_SOURCE, "python", "src/pkg/mod.py")
    assert list(symbols) == [
        "pkg.mod.MAX_RETRIES",
        "pkg.mod.DEFAULT_TIMEOUT",
        "pkg.mod.registry",
        "pkg.mod.public_fn",
        "pkg.mod._hidden",
        "pkg.mod.not_listed",
        "pkg.mod.Thing",
        "pkg.mod.Thing.LIMIT",
        "pkg.mod.Thing.__init__",
        "pkg.mod.Thing._private",
        "pkg.mod.Thing.run",
        "pkg.mod.Thing.Meta",
        "pkg.mod.speedup",
    ]
    # `__all__` decides top-level exports; members follow their own name and their class.
    assert _summary(symbols["pkg.mod.MAX_RETRIES"]) == ("constant", None, True, 6, 6)
    assert _summary(symbols["pkg.mod.DEFAULT_TIMEOUT"]) == ("constant", None, False, 7, 7)
    assert _summary(symbols["pkg.mod.registry"]) == ("variable", None, True, 8, 8)
    assert _summary(symbols["pkg.mod.public_fn"]) == ("function", None, True, 14, 17)
    assert _summary(symbols["pkg.mod._hidden"]) == ("function", None, True, 20, 21)
    assert _summary(symbols["pkg.mod.not_listed"]) == ("function", None, False, 24, 25)
    assert _summary(symbols["pkg.mod.Thing"]) == ("class", None, True, 28, 48)
    assert _summary(symbols["pkg.mod.Thing.LIMIT"]) == ("constant", "Thing", True, 34, 34)
    assert _summary(symbols["pkg.mod.Thing.__init__"]) == ("method", "Thing", True, 36, 37)
    assert _summary(symbols["pkg.mod.Thing._private"]) == ("method", "Thing", False, 39, 40)
    assert _summary(symbols["pkg.mod.Thing.run"]) == ("method", "Thing", True, 42, 45)
    assert _summary(symbols["pkg.mod.Thing.Meta"]) == ("class", "Thing", True, 47, 48)
    # Defined in an `except` branch at module level: still a module-level function (not in `__all__`).
    assert _summary(symbols["pkg.mod.speedup"]) == ("function", None, False, 54, 55)
    # Locals of a function body are not definitions of the module.
    assert "pkg.mod.Thing.run.inner" not in symbols and "pkg.mod.unlisted" not in symbols
    assert all(s.language == "python" and s.file_path == "src/pkg/mod.py" for s in symbols.values())


def test_python_docstrings_and_comments() -> None:
    symbols = _extract(PYTHON_SOURCE, "python", "mod.py")
    assert symbols["mod.Thing"].docstring == "A thing. More text."
    assert symbols["mod._hidden"].docstring == "Hidden but listed."
    # No docstring: the comment block right above the decorators.
    assert symbols["mod.public_fn"].docstring == "Comment for public_fn. Second line."
    assert symbols["mod.not_listed"].docstring == ""
    assert symbols["mod.Thing.__init__"].docstring == ""


def test_python_without_all_uses_the_underscore_rule() -> None:
    source = """\
    def visible(): pass
    def _internal(): pass
    class _Private:
        def method(self): pass
        def __call__(self): pass
    lower_case = 1
    """
    symbols = _extract(source, "python", "m.py")
    assert {name: s.exported for name, s in symbols.items()} == {
        "m.visible": True,
        "m._internal": False,
        "m._Private": False,
        # A public name inside a private class is not reachable as API.
        "m._Private.method": False,
        "m._Private.__call__": False,
    }


def test_python_computed_all_falls_back_to_the_underscore_rule_plus_literals() -> None:
    source = """\
    from .a import __all__ as a_all
    __all__ = a_all + ["helper", "_special"]
    def helper(): pass
    def other(): pass
    def _special(): pass
    def _secret(): pass
    """
    symbols = _extract(source, "python", "m.py")
    assert {name: s.exported for name, s in symbols.items()} == {
        "m.helper": True,
        "m.other": True,
        "m._special": True,
        "m._secret": False,
    }


def test_python_docstring_is_clipped() -> None:
    words = " ".join(f"word{i}" for i in range(300))
    symbols = _extract(f'def f():\n    """{words}"""\n', "python", "m.py")
    doc = symbols["m.f"].docstring
    assert 0 < len(doc) <= MAX_DOC_CHARS and doc.startswith("word0 word1 ") and not doc.endswith(" ")


# ---- JavaScript ----------------------------------------------------------------------------------------------
JS_SOURCE = """\
/**
 * Retries with backoff.
 */
export function withStripeBackoff(fn) {
  return fn();
}

// Shared helper.
const helper = () => 1, other = function () {};
export const LIMIT = 3;
const local = 5;
const CONFIG_KEY = "k";
const listed = { a: 1 };

export default class Client extends Base {
  // Runs it.
  static async run(x) {}
  #secret() {}
  handle = () => {};
  state = 0;
}

export { helper as h, listed };
function* gen() {}
function unexported() {}
module.exports = { gen };
exports.thing = function () {};
"""


def test_javascript_definitions() -> None:
    symbols = _extract(JS_SOURCE, "javascript", "src/payments/index.js")
    assert list(symbols) == [
        "src.payments.withStripeBackoff",
        "src.payments.helper",
        "src.payments.other",
        "src.payments.LIMIT",
        "src.payments.CONFIG_KEY",
        "src.payments.listed",
        "src.payments.Client",
        "src.payments.Client.run",
        "src.payments.Client.secret",
        "src.payments.Client.handle",
        "src.payments.gen",
        "src.payments.unexported",
        "src.payments.thing",
    ]
    assert _summary(symbols["src.payments.withStripeBackoff"]) == ("function", None, True, 4, 6)
    # Exported later by `export { helper as h }`; `other` shares the statement but is not exported.
    assert _summary(symbols["src.payments.helper"]) == ("function", None, True, 9, 9)
    assert _summary(symbols["src.payments.other"]) == ("function", None, False, 9, 9)
    assert _summary(symbols["src.payments.LIMIT"]) == ("constant", None, True, 10, 10)
    assert _summary(symbols["src.payments.CONFIG_KEY"]) == ("constant", None, False, 12, 12)
    assert _summary(symbols["src.payments.listed"]) == ("constant", None, True, 13, 13)
    assert _summary(symbols["src.payments.Client"]) == ("class", None, True, 15, 21)
    assert _summary(symbols["src.payments.Client.run"]) == ("method", "Client", True, 17, 17)
    assert _summary(symbols["src.payments.Client.secret"]) == ("method", "Client", False, 18, 18)
    assert _summary(symbols["src.payments.Client.handle"]) == ("method", "Client", True, 19, 19)
    # CommonJS exports count too.
    assert _summary(symbols["src.payments.gen"]) == ("function", None, True, 24, 24)
    assert _summary(symbols["src.payments.unexported"]) == ("function", None, False, 25, 25)
    assert _summary(symbols["src.payments.thing"]) == ("function", None, True, 27, 27)
    # Plain non-exported lower-case constants and instance state are not definitions to look up.
    assert "src.payments.local" not in symbols and "src.payments.Client.state" not in symbols


def test_javascript_leading_comments() -> None:
    symbols = _extract(JS_SOURCE, "javascript", "a.js")
    assert symbols["a.withStripeBackoff"].docstring == "Retries with backoff."
    assert symbols["a.helper"].docstring == "Shared helper."
    assert symbols["a.Client.run"].docstring == "Runs it."
    assert symbols["a.LIMIT"].docstring == ""


# ---- TypeScript / TSX ----------------------------------------------------------------------------------------
TS_SOURCE = """\
/** A user. */
export interface User {
  id: number;
  greet(): string;
}
type Id = string | number;
export enum Color { Red, Green }

/** The service. */
@Injectable({})
export abstract class Service<T> implements Api {
  private readonly cache: number = 1;
  constructor(private name: string) {}
  public async load(id: Id): Promise<void> {}
  protected abstract save(): void;
  static make = (): Service<number> => null;
  overloaded(a: string): void;
  overloaded(a: any) {}
  @HostListener("click")
  onClick() {}
}

export namespace Geo.Shapes {
  export function area() {}
  function hidden() {}
}
declare function external(a: number): void;
export function over(a: string): void;
export function over(a: any) {}
"""


def test_typescript_definitions() -> None:
    symbols = _extract(TS_SOURCE, "typescript", "src/service.ts")
    assert list(symbols) == [
        "src.service.User",
        "src.service.User.greet",
        "src.service.Id",
        "src.service.Color",
        "src.service.Service",
        "src.service.Service.constructor",
        "src.service.Service.load",
        "src.service.Service.save",
        "src.service.Service.make",
        "src.service.Service.overloaded",
        "src.service.Service.onClick",
        "src.service.Geo.Shapes",
        "src.service.Geo.Shapes.area",
        "src.service.Geo.Shapes.hidden",
        "src.service.external",
        "src.service.over",
    ]
    assert _summary(symbols["src.service.User"]) == ("interface", None, True, 2, 5)
    assert _summary(symbols["src.service.User.greet"]) == ("method", "User", True, 4, 4)
    assert _summary(symbols["src.service.Id"]) == ("type", None, False, 6, 6)
    assert _summary(symbols["src.service.Color"]) == ("enum", None, True, 7, 7)
    # The span starts at the class decorator.
    assert _summary(symbols["src.service.Service"]) == ("class", None, True, 10, 21)
    assert _summary(symbols["src.service.Service.load"]) == ("method", "Service", True, 14, 14)
    assert _summary(symbols["src.service.Service.save"]) == ("method", "Service", False, 15, 15)
    assert _summary(symbols["src.service.Service.make"]) == ("method", "Service", True, 16, 16)
    # The overload signature is dropped in favour of the implementation.
    assert _summary(symbols["src.service.Service.overloaded"]) == ("method", "Service", True, 18, 18)
    # A member decorator on its own line belongs to the member's span.
    assert _summary(symbols["src.service.Service.onClick"]) == ("method", "Service", True, 19, 20)
    assert _summary(symbols["src.service.Geo.Shapes"]) == ("module", None, True, 23, 26)
    assert _summary(symbols["src.service.Geo.Shapes.area"]) == ("function", None, True, 24, 24)
    assert _summary(symbols["src.service.Geo.Shapes.hidden"]) == ("function", None, False, 25, 25)
    assert _summary(symbols["src.service.external"]) == ("function", None, False, 27, 27)
    assert _summary(symbols["src.service.over"]) == ("function", None, True, 29, 29)
    assert symbols["src.service.User"].docstring == "A user."
    assert symbols["src.service.Service"].docstring == "The service."
    assert "src.service.Service.cache" not in symbols


def test_tsx_definitions() -> None:
    source = """\
    import React from "react";

    // The application shell.
    export const App = (): JSX.Element => <div className="app">{1}</div>;

    export default function Button({ label }: Props) {
      return <button onClick={() => 1}>{label}</button>;
    }

    interface Props { label: string }
    export type Size = "s" | "m";
    """
    symbols = _extract(source, "tsx", "web/ui/App.tsx")
    assert list(symbols) == ["web.ui.App.App", "web.ui.App.Button", "web.ui.App.Props", "web.ui.App.Size"]
    assert _summary(symbols["web.ui.App.App"]) == ("function", None, True, 4, 4)
    assert symbols["web.ui.App.App"].docstring == "The application shell."
    assert _summary(symbols["web.ui.App.Button"]) == ("function", None, True, 6, 8)
    assert _summary(symbols["web.ui.App.Props"]) == ("interface", None, False, 10, 10)
    assert _summary(symbols["web.ui.App.Size"]) == ("type", None, True, 11, 11)


# ---- Go ------------------------------------------------------------------------------------------------------
GO_SOURCE = """\
package server

// Server serves HTTP.
// It is safe for concurrent use.
type Server struct {
	addr string
}

type (
	// Handler handles one request.
	Handler interface {
		Serve()
	}
	id    int
	Alias = Server
)

// Start starts listening.
func (s *Server) Start() error {
	return nil
}

func (s Server) stop() {}

func (h *handler) Serve() {}

func New[T any]() *Server { return nil }

const MaxConns = 10

const (
	internal = 1
	A, B     = 2, 3
)

var DefaultServer = New[int]()
var hidden = 0
"""


def test_go_definitions() -> None:
    symbols = _extract(GO_SOURCE, "go", "pkg/server/http.go")
    assert list(symbols) == [
        "pkg.server.Server",
        "pkg.server.Handler",
        "pkg.server.Handler.Serve",
        "pkg.server.id",
        "pkg.server.Alias",
        "pkg.server.Server.Start",
        "pkg.server.Server.stop",
        "pkg.server.handler.Serve",
        "pkg.server.New",
        "pkg.server.MaxConns",
        "pkg.server.A",
        "pkg.server.B",
        "pkg.server.DefaultServer",
    ]
    assert _summary(symbols["pkg.server.Server"]) == ("struct", None, True, 5, 7)
    assert _summary(symbols["pkg.server.Handler"]) == ("interface", None, True, 11, 13)
    assert _summary(symbols["pkg.server.Handler.Serve"]) == ("method", "Handler", True, 12, 12)
    assert _summary(symbols["pkg.server.id"]) == ("type", None, False, 14, 14)
    assert _summary(symbols["pkg.server.Alias"]) == ("type", None, True, 15, 15)
    assert _summary(symbols["pkg.server.Server.Start"]) == ("method", "Server", True, 19, 21)
    assert _summary(symbols["pkg.server.Server.stop"]) == ("method", "Server", False, 23, 23)
    # An exported method name on an unexported receiver is not part of the package's API.
    assert _summary(symbols["pkg.server.handler.Serve"]) == ("method", "handler", False, 25, 25)
    assert _summary(symbols["pkg.server.New"]) == ("function", None, True, 27, 27)
    assert _summary(symbols["pkg.server.MaxConns"]) == ("constant", None, True, 29, 29)
    assert _summary(symbols["pkg.server.A"]) == ("constant", None, True, 33, 33)
    assert _summary(symbols["pkg.server.DefaultServer"]) == ("variable", None, True, 36, 36)
    assert symbols["pkg.server.Server"].docstring == "Server serves HTTP. It is safe for concurrent use."
    assert symbols["pkg.server.Handler"].docstring == "Handler handles one request."
    assert symbols["pkg.server.Server.Start"].docstring == "Start starts listening."
    assert symbols["pkg.server.New"].docstring == ""


# ---- Rust ----------------------------------------------------------------------------------------------------
RUST_SOURCE = """\
//! Shapes of the crate.

/// A point in space.
/// Two dimensions.
#[derive(Debug, Clone)]
pub struct Point<T> {
    x: T,
}

impl<T> Point<T> {
    /// Makes one.
    pub fn new() -> Self {
        todo!()
    }

    fn norm(&self) -> f64 { 0.0 }

    pub const ORIGIN: i32 = 0;
}

impl fmt::Display for crate::Point {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result { Ok(()) }
}

pub(crate) trait Shape {
    fn area(&self) -> f64;
}

pub enum Kind { A, B }
type Alias = u32;
pub static COUNT: u32 = 0;
static mut STATE: u32 = 0;

#[macro_export]
macro_rules! point { () => {} }

pub mod inner {
    pub fn visible() {}
    fn hidden() {}
}
mod declared_elsewhere;

/* Frees it. */
fn free() {}
"""


def test_rust_definitions() -> None:
    symbols = _extract(RUST_SOURCE, "rust", "crates/geo/src/shapes/mod.rs")
    assert list(symbols) == [
        "shapes.Point",
        "shapes.Point.new",
        "shapes.Point.norm",
        "shapes.Point.ORIGIN",
        "shapes.Point.fmt",
        "shapes.Shape",
        "shapes.Shape.area",
        "shapes.Kind",
        "shapes.Alias",
        "shapes.COUNT",
        "shapes.STATE",
        "shapes.point",
        "shapes.inner",
        "shapes.inner.visible",
        "shapes.inner.hidden",
        "shapes.free",
    ]
    # The span starts at the attribute; the doc comment above it is the docstring, the `//!` line is not.
    assert _summary(symbols["shapes.Point"]) == ("struct", None, True, 5, 8)
    assert symbols["shapes.Point"].docstring == "A point in space. Two dimensions."
    assert _summary(symbols["shapes.Point.new"]) == ("method", "Point", True, 12, 14)
    assert symbols["shapes.Point.new"].docstring == "Makes one."
    assert _summary(symbols["shapes.Point.norm"]) == ("method", "Point", False, 16, 16)
    assert _summary(symbols["shapes.Point.ORIGIN"]) == ("constant", "Point", True, 18, 18)
    # Trait-impl methods cannot carry `pub`: they are as visible as the trait.
    assert _summary(symbols["shapes.Point.fmt"]) == ("method", "Point", True, 22, 22)
    assert _summary(symbols["shapes.Shape"]) == ("trait", None, False, 25, 27)
    assert _summary(symbols["shapes.Shape.area"]) == ("method", "Shape", False, 26, 26)
    assert _summary(symbols["shapes.Kind"]) == ("enum", None, True, 29, 29)
    assert _summary(symbols["shapes.Alias"]) == ("type", None, False, 30, 30)
    assert _summary(symbols["shapes.COUNT"]) == ("constant", None, True, 31, 31)
    assert _summary(symbols["shapes.STATE"]) == ("variable", None, False, 32, 32)
    assert _summary(symbols["shapes.point"]) == ("function", None, True, 34, 35)
    assert _summary(symbols["shapes.inner"]) == ("module", None, True, 37, 40)
    assert _summary(symbols["shapes.inner.visible"]) == ("function", None, True, 38, 38)
    assert _summary(symbols["shapes.inner.hidden"]) == ("function", None, False, 39, 39)
    assert _summary(symbols["shapes.free"]) == ("function", None, False, 44, 44)
    assert symbols["shapes.free"].docstring == "Frees it."


# ---- Java ----------------------------------------------------------------------------------------------------
JAVA_SOURCE = """\
package com.acme.pay;

import java.util.List;

/**
 * Retries payments.
 * @since 1.0
 */
@Service
public class Retry<T> extends Base {
    public static final int MAX = 3;
    private static final String A = "a", B = "b";
    int count;

    /** Makes one. */
    public Retry(int n) {}

    @Override
    protected void run() {}

    public static class Inner {
        public void go() {}
    }
}

interface Store {
    int LIMIT = 5;
    void save();
}

public enum Mode { ON, OFF; public void flip() {} }

public record Pair(int a, int b) {
    public int sum() { return a + b; }
}
"""


def test_java_definitions() -> None:
    symbols = _extract(JAVA_SOURCE, "java", "src/main/java/com/acme/pay/Retry.java")
    assert list(symbols) == [
        "com.acme.pay.Retry",
        "com.acme.pay.Retry.MAX",
        "com.acme.pay.Retry.A",
        "com.acme.pay.Retry.B",
        "com.acme.pay.Retry.Retry",
        "com.acme.pay.Retry.run",
        "com.acme.pay.Retry.Inner",
        "com.acme.pay.Retry.Inner.go",
        "com.acme.pay.Store",
        "com.acme.pay.Store.LIMIT",
        "com.acme.pay.Store.save",
        "com.acme.pay.Mode",
        "com.acme.pay.Mode.flip",
        "com.acme.pay.Pair",
        "com.acme.pay.Pair.sum",
    ]
    # Annotations are part of the declaration's span; the Javadoc above is its docstring.
    assert _summary(symbols["com.acme.pay.Retry"]) == ("class", None, True, 9, 24)
    assert symbols["com.acme.pay.Retry"].docstring == "Retries payments. @since 1.0"
    assert _summary(symbols["com.acme.pay.Retry.MAX"]) == ("constant", "Retry", True, 11, 11)
    assert _summary(symbols["com.acme.pay.Retry.A"]) == ("constant", "Retry", False, 12, 12)
    assert _summary(symbols["com.acme.pay.Retry.Retry"]) == ("method", "Retry", True, 16, 16)
    assert symbols["com.acme.pay.Retry.Retry"].docstring == "Makes one."
    assert _summary(symbols["com.acme.pay.Retry.run"]) == ("method", "Retry", False, 18, 19)
    assert _summary(symbols["com.acme.pay.Retry.Inner"]) == ("class", "Retry", True, 21, 23)
    assert _summary(symbols["com.acme.pay.Retry.Inner.go"]) == ("method", "Inner", True, 22, 22)
    # Interface members are implicitly public, but this interface is package-private.
    assert _summary(symbols["com.acme.pay.Store"]) == ("interface", None, False, 26, 29)
    assert _summary(symbols["com.acme.pay.Store.LIMIT"]) == ("constant", "Store", False, 27, 27)
    assert _summary(symbols["com.acme.pay.Mode"]) == ("enum", None, True, 31, 31)
    assert _summary(symbols["com.acme.pay.Mode.flip"]) == ("method", "Mode", True, 31, 31)
    assert _summary(symbols["com.acme.pay.Pair"]) == ("class", None, True, 33, 35)
    assert _summary(symbols["com.acme.pay.Pair.sum"]) == ("method", "Pair", True, 34, 34)
    assert "com.acme.pay.Retry.count" not in symbols


def test_java_interface_members_are_public_in_a_public_interface() -> None:
    source = "public interface Store {\n  int LIMIT = 5;\n  void save();\n  private void helper() {}\n}\n"
    symbols = _extract(source, "java", "Store.java")
    assert {name: s.exported for name, s in symbols.items()} == {
        "Store": True,
        "Store.LIMIT": True,
        "Store.save": True,
        "Store.helper": False,
    }


# ---- body hash -----------------------------------------------------------------------------------------------
def _hash_of(source: str, language: str, path: str, qualified_name: str) -> str:
    return _extract(source, language, path)[qualified_name].body_hash


@pytest.mark.parametrize(
    ("language", "path", "before", "after", "old", "new"),
    [
        (
            "python",
            "m.py",
            "def get(items):\n    return get_all(items) or get(items[1:])\n",
            "def fetch(items):\n    return get_all(items) or fetch(items[1:])\n",
            "m.get",
            "m.fetch",
        ),
        (
            "javascript",
            "a.js",
            "export function retry(fn) {\n  return retryAll(fn) || retry(fn);\n}\n",
            "export function withBackoff(fn) {\n  return retryAll(fn) || withBackoff(fn);\n}\n",
            "a.retry",
            "a.withBackoff",
        ),
        (
            "go",
            "p/x.go",
            "package p\n\nfunc Retry(n int) int { return Retry(n - 1) }\n",
            "package p\n\nfunc Backoff(n int) int { return Backoff(n - 1) }\n",
            "p.Retry",
            "p.Backoff",
        ),
        (
            "rust",
            "src/x.rs",
            "pub struct Point { x: i32 }\n",
            "pub struct Pt { x: i32 }\n",
            "x.Point",
            "x.Pt",
        ),
        (
            "java",
            "A.java",
            "public class Old { public Old() {} Old copy() { return new Old(); } }\n",
            "public class Fresh { public Fresh() {} Fresh copy() { return new Fresh(); } }\n",
            "Old",
            "Fresh",
        ),
    ],
)
def test_a_pure_rename_keeps_the_body_hash(
    language: str, path: str, before: str, after: str, old: str, new: str
) -> None:
    old_hash = _hash_of(before, language, path, old)
    assert len(old_hash) == 16 and int(old_hash, 16) >= 0
    assert _hash_of(after, language, path, new) == old_hash


def test_body_hash_ignores_whitespace_but_not_edits() -> None:
    base = _hash_of("def f(a, b):\n    return a + b\n", "python", "m.py", "m.f")
    assert _hash_of("def f(a,  b):\n\n    return a + b\n", "python", "m.py", "m.f") == base
    assert _hash_of("def f(a, b):\n    return a - b\n", "python", "m.py", "m.f") != base
    # The decorator is part of the definition.
    assert _hash_of("@cache\ndef f(a, b):\n    return a + b\n", "python", "m.py", "m.f") != base


# ---- robustness ----------------------------------------------------------------------------------------------
def test_syntax_errors_keep_the_valid_definitions() -> None:
    python = (
        "def good_one():\n    return 1\n\ndef broken(:\n    return (\n\nclass Fine:\n    def ok(self):\n        pass\n"
    )
    names = {s.qualified_name for s in extract_symbols(python, "python", "m.py")}
    assert {"m.good_one", "m.Fine", "m.Fine.ok"} <= names

    javascript = "function first() { return 1; }\nfunction broken( {\nexport class Later { run() {} }\n"
    names = {s.qualified_name for s in extract_symbols(javascript, "javascript", "a.js")}
    assert "a.first" in names

    go = "package p\n\nfunc Good() {}\n\nfunc Bad( {\n"
    assert "p.Good" in {s.qualified_name for s in extract_symbols(go, "go", "p/x.go")}

    rust = "pub fn good() {}\nfn bad( -> {\n"
    assert "good" in {s.qualified_name for s in extract_symbols(rust, "rust", "src/lib.rs")}


@pytest.mark.parametrize("language", sorted(SUPPORTED_LANGUAGES))
@pytest.mark.parametrize("text", ["", "\x00\x01\x02", "\ud800 lone surrogate", "}}}{{{ ((( ::: ;;;", "é" * 50])
def test_garbage_never_raises(language: str, text: str) -> None:
    symbols = extract_symbols(text, language, "x/garbage.txt")
    assert isinstance(symbols, list)
    assert all(s.start_line <= s.end_line for s in symbols)


def test_symbols_come_in_source_order_with_containers_first() -> None:
    for source, language, path in (
        (PYTHON_SOURCE, "python", "m.py"),
        (JS_SOURCE, "javascript", "a.js"),
        (TS_SOURCE, "typescript", "a.ts"),
        (RUST_SOURCE, "rust", "src/a.rs"),
        (JAVA_SOURCE, "java", "A.java"),
    ):
        symbols = extract_symbols(textwrap.dedent(source), language, path)
        assert [s.start_line for s in symbols] == sorted(s.start_line for s in symbols)
        seen: set[str] = set()
        for symbol in symbols:
            if symbol.parent is not None:
                container = symbol.qualified_name.rsplit(".", 1)[0]
                assert container in seen and container.endswith(symbol.parent), symbol.qualified_name
            seen.add(symbol.qualified_name)
