; code-alias additions to tree-sitter-typescript's queries/tags.scm (read after it and after the JavaScript files;
; see core/tags.py).

; Type uses anywhere (a declaration's own name is told apart in code), interfaces a class implements or an
; interface extends, and typed parameters.
(type_identifier) @name @reference.type
(class_heritage (extends_clause value: [
  (identifier) @name
  (member_expression property: (property_identifier) @name)
] @reference.inherit))
(implements_clause [(type_identifier) @name (generic_type name: (type_identifier) @name)] @reference.inherit)
(extends_type_clause [(type_identifier) @name (generic_type name: (type_identifier) @name)] @reference.inherit)
(required_parameter) @reference.bind
(optional_parameter) @reference.bind
(public_field_definition) @reference.bind
