; code-alias additions to tree-sitter-rust's queries/tags.scm (read after it; see core/tags.py).

; Definitions the wheel leaves out.
(const_item name: (identifier) @name) @definition.constant
(static_item name: (identifier) @name) @definition.constant
(function_signature_item name: (identifier) @name) @definition.function

; Calls through a path (`Type::new()`, `module::f()`), of generic functions (`f::<T>()`, `Type::f::<T>()`), of
; macros by path, and values made of a struct type (`Type { .. }`, an instance).
(call_expression function: (scoped_identifier name: (identifier) @name)) @reference.call
(call_expression function: (generic_function function: [
  (identifier) @name
  (scoped_identifier name: (identifier) @name)
  (field_expression field: (field_identifier) @name)
])) @reference.call
(macro_invocation macro: (scoped_identifier name: (identifier) @name)) @reference.call
(struct_expression name: [
  (type_identifier) @name
  (scoped_type_identifier name: (type_identifier) @name)
]) @reference.class

; Type uses (definition names are told apart in code), trait implementations, imports, typed variables.
(type_identifier) @name @reference.type
(impl_item trait: [
  (scoped_type_identifier name: (type_identifier) @name)
  (generic_type type: (type_identifier) @name)
]) @reference.implementation
(use_declaration) @reference.import
(let_declaration) @reference.bind
(parameter) @reference.bind
