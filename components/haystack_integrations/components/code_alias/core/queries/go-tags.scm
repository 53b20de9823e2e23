; code-alias additions to tree-sitter-go's queries/tags.scm (read after it; see core/tags.py).

; Definitions the wheel leaves out: aliases, package-level values, and the methods of an interface type.
(type_alias name: (type_identifier) @name) @definition.type
(const_spec name: (identifier) @name) @definition.constant
(var_spec name: (identifier) @name) @definition.variable
(method_elem name: (field_identifier) @name) @definition.method

; Calls of generic functions: `New[int]()`, `pkg.New[T]()`.
(call_expression
  function: (index_expression operand: [
    (identifier) @name
    (selector_expression field: (field_identifier) @name)
  ])) @reference.call

; Values made of a type: `T{...}`, `pkg.T{...}` (an instance of T).
(composite_literal type: [
  (type_identifier) @name
  (qualified_type name: (type_identifier) @name)
]) @reference.class

; Imports, and the variables whose type is written down (receivers, parameters, `var x T`, `x := T{}`), so that
; `x.Method()` can be resolved to `T.Method`.
(import_spec) @reference.import
(parameter_declaration) @reference.bind
(var_spec) @reference.bind
(short_var_declaration) @reference.bind
