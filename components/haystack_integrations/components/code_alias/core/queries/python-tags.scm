; code-alias additions to tree-sitter-python's queries/tags.scm (read after it; see core/tags.py).

; Decorators without arguments are calls too (`@cached_property`, `@app.route` is captured as a call already).
(decorator [
  (identifier) @name
  (attribute attribute: (identifier) @name)
]) @reference.call

; Inheritance, annotations, imports, and variables whose type can be told (`x = Foo()`, `x: Foo`, typed
; parameters, `self.x = Foo()`: a capitalised callee makes an instance of a class), so that `x.method()` can be
; resolved to `Foo.method`.
(class_definition superclasses: (argument_list [
  (identifier) @name
  (attribute attribute: (identifier) @name)
] @reference.inherit))
(type [
  (identifier) @name
  (attribute attribute: (identifier) @name)
  (generic_type (identifier) @name)
  (subscript value: [(identifier) @name (attribute attribute: (identifier) @name)])
]) @reference.type
(import_statement) @reference.import
(import_from_statement) @reference.import
(future_import_statement) @reference.import
(assignment
  right: (call function: [(identifier) @class (attribute attribute: (identifier) @class)])
  (#match? @class "^_*[A-Z]")) @reference.bind
(assignment type: (_)) @reference.bind
(typed_parameter) @reference.bind
(typed_default_parameter) @reference.bind
