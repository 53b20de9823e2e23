; code-alias additions to tree-sitter-javascript's queries/tags.scm, for JavaScript, TypeScript and TSX alike (read
; after the wheels' files; see core/tags.py).

; Imports and re-exports, and the declarators that bind a variable to a class (`const x = new Foo()`) or a module
; (`const x = require('./x')`), so that `x.method()` can be resolved to `Foo.method`.
(import_statement) @reference.import
(export_statement source: (_)) @reference.import
(variable_declarator) @reference.bind
(assignment_expression left: (member_expression object: (this))) @reference.bind
